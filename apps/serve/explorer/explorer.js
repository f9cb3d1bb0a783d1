// attend serve's attention explorer (index.html, docs/explorer.md): asks the server for one input's explanation
// (POST /v1/explain) and draws it — head view, model view, heatmap with the seed's equations, the beam search's tree,
// and what only some kinds of model have, each from its key of the answer: a recurrent decoder's "equations" (beside
// the heatmap) and an image model's "pixels" (the image under its attention). Plain JavaScript, no library, no network
// beyond the server.
"use strict";

const state = { models: [], model: null, explanation: null, kind: 0, layer: 0, head: "mean", chosen: null, method: 0,
  chosenAttribution: null, request: null, attributing: null, aborting: null, asked: null, decodingPrecisions: null,
  precision: "", overlay: "attention", imageToken: 0, abortingPrecisions: null };
const HEAD_COLOURS = ["#1565c0", "#d32f2f", "#2e7d32", "#f9a825", "#6a1b9a", "#00838f", "#ef6c00", "#5d4037",
  "#c2185b", "#455a64", "#7cb342", "#3949ab", "#8d6e63", "#00acc1", "#fb8c00", "#9e9d24"];
const KIND_LABELS = {
  cross: "cross-attention: the output over the input",
  encoder: "encoder self-attention: the input over itself",
  decoder: "decoder self-attention: the output over itself so far (causal)",
};
const SCORE_FORMULAS = {
  additive: "e<sub>ij</sub> = v<sub>a</sub><sup>T</sup> tanh(W<sub>a</sub> s<sub>j−1</sub> + U<sub>a</sub> h<sub>i</sub>)",
  dot: "e<sub>ij</sub> = s<sub>j</sub><sup>T</sup> h<sub>i</sub>",
  general: "e<sub>ij</sub> = s<sub>j</sub><sup>T</sup> W<sub>a</sub> h<sub>i</sub>",
  concat: "e<sub>ij</sub> = v<sub>a</sub><sup>T</sup> tanh(W<sub>a</sub> [s<sub>j</sub>; h<sub>i</sub>])",
};
const METHOD_LABELS = { gradient_times_input: "gradient × input", integrated_gradients: "integrated gradients",
  attention_rollout: "attention rollout" };
const METHOD_NOTES = {
  gradient_times_input: "a_ij = ‖∂ log p(y_j)/∂x_i ⊙ x_i‖ at the input's embeddings x.",
  integrated_gradients: "a_ij = (x − x′)_i · the mean of ∂ log p(y_j)/∂x_i along the straight path from x′ (the " +
    "padding embedding) to x; a row's values sum to the change of log p(y_j) from x′ to x.",
  attention_rollout: "The encoder's self-attention of every layer, with its residual path, multiplied out under the " +
    "cross-attention: which input tokens each output token reaches through the encoder." };
const SVG = "http://www.w3.org/2000/svg";
const VIEWS = ["head", "model", "heatmap", "beam", "attribution", "precision", "image"];

const $ = (id) => document.getElementById(id);
function element(tag, attributes, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
function fixed(x, digits) { return Number(x).toFixed(digits === undefined ? 4 : digits); }
function say(text, error) { $("status").textContent = text; $("status").className = error ? "error" : ""; }

// ---- the served models and the request ---------------------------------------------------------------------------

async function loadModels() {
  let answer;
  try {
    answer = await fetch("v1/models");
  } catch (e) {
    return say("The server does not answer: " + e.message, true);
  }
  const body = await answer.json();
  state.models = body.models || [];
  const select = clear($("model"));
  for (const m of state.models) select.appendChild(element("option", { value: m.name }, m.name));
  if (state.models.length === 0) return say("The server serves no model.", true);
  chooseModel(state.models[0].name);
}

function chooseModel(name) {
  state.model = state.models.find((m) => m.name === name);
  const m = state.model;
  const image = m.input === "image";
  $("text-input").hidden = image;
  $("image-input").hidden = !image;
  $("tab-image").hidden = !image;
  $("model-info").textContent = `Model ${m.name}: ${m.kind}, task ${m.task}, ${m.description}, ` +
    `${m.parameters.toLocaleString("en")} parameters` +
    (image ? `, images of ${m.image_size[0]} × ${m.image_size[1]}` : `, inputs up to ${m.max_input_length} tokens`) +
    (m.attention ? "." : " — it has no attention weights to show.");
  if (!image) $("input").maxLength = 4 * m.max_input_length;
  state.pickedImage = null;
  loadExamples(m);
}

// The first inputs of the model's test split, offered to choose from; a model whose data the server cannot read (a
// sentence file moved) has none, and the page says why.
async function loadExamples(m) {
  const select = clear($("example"));
  $("example-choice").hidden = true;
  $("example-note").hidden = true;
  state.examples = [];
  let answer, body;
  try {
    answer = await fetch(`v1/examples?model=${encodeURIComponent(m.name)}&count=50`);
    body = await answer.json();
  } catch (e) {
    return say("The server did not answer: " + e.message, true);
  }
  if (state.model !== m) return;  // another model was chosen meanwhile
  if (!answer.ok) {
    $("example-note").textContent = `No examples to choose from: ${body.error}`;
    $("example-note").hidden = false;
    return;
  }
  state.examples = body.examples;
  select.appendChild(element("option", { value: "" }, `— ${body.examples.length} of ${body.total} —`));
  body.examples.forEach((e, k) => select.appendChild(element("option", { value: k },
    m.input === "image" ? `test image ${k + 1}: ${e.references[0]}` : e.input)));
  $("example-choice").hidden = false;
}

// An example chosen: its input put in the form (an image in place of a chosen file), and explained.
function chooseExample(value) {
  if (value === "") return;
  const example = state.examples[Number(value)];
  if (state.model.input === "image") {
    state.pickedImage = example.input;
    $("image-file").value = "";
  } else {
    $("input").value = example.input;
  }
  explain();
}

// The image to send, in base64: the file chosen, else the example chosen.
async function readImage() {
  const file = $("image-file").files[0];
  if (!file && !state.pickedImage) throw new Error("choose a PGM image or an example first");
  let text = "";
  if (file) {
    for (const b of new Uint8Array(await file.arrayBuffer())) text += String.fromCharCode(b);
  } else {
    text = atob(state.pickedImage);
  }
  state.image = parsePgm(Uint8Array.from(text, (c) => c.charCodeAt(0)));
  return btoa(text);
}

// A PGM (binary P5 or plain P2) as {width, height, max, pixels}: for drawing what was sent.
function parsePgm(bytes) {
  let at = 0;
  const fields = [];
  const space = (c) => c === 32 || c === 9 || c === 10 || c === 13;
  while (fields.length < 4 && at < bytes.length) {
    if (bytes[at] === 35) { while (at < bytes.length && bytes[at] !== 10) at++; continue; }  // a comment
    if (space(bytes[at])) { at++; continue; }
    let word = "";
    while (at < bytes.length && !space(bytes[at])) word += String.fromCharCode(bytes[at++]);
    fields.push(word);
  }
  const [magic, width, height, max] = [fields[0], +fields[1], +fields[2], +fields[3]];
  let pixels;
  if (magic === "P5") {
    pixels = Array.from(bytes.slice(at + 1, at + 1 + width * height));
  } else {
    pixels = String.fromCharCode(...bytes.slice(at)).trim().split(/\s+/).map(Number);
  }
  return { width, height, max, pixels };
}

async function explain(event) {
  if (event) event.preventDefault();
  const m = state.model;
  if (!m) return;
  const request = { model: m.name, beam: Math.max(1, Number($("beam").value) || 1) };
  try {
    request.input = m.input === "image" ? await readImage() : $("input").value;
  } catch (e) {
    return say(e.message, true);
  }
  say("Decoding…");
  if (state.aborting) state.aborting.abort();  // the last explanation's attribution: the server stops its work
  if (state.abortingPrecisions) state.abortingPrecisions.abort();  // and its decoding in another precision
  $("result").hidden = true;
  if (m.attention) await stream(m, request);
  let answer, body;
  try {
    answer = await fetch("v1/explain", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(request) });
    body = await answer.json();
  } catch (e) {
    return say("The server did not answer: " + e.message, true);
  }
  $("live").hidden = true;
  if (!answer.ok) return say(`${answer.status}: ${body.error}`, true);
  say("");
  state.explanation = body.explanation;
  state.explanation.precision = body.precision;
  state.asked = request;  // asked again in the other precisions when their tab opens
  state.request = request;  // attribution asked for when its tab opens (an image's: when its overlay is chosen)
  state.attributing = null;
  state.kind = 0;
  state.layer = state.explanation.attention.length ? state.explanation.attention[0].layers - 1 : 0;
  state.head = "mean";
  state.chosen = null;
  state.method = 0;
  state.chosenAttribution = null;
  state.decodingPrecisions = null;
  state.precision = "";
  state.imageToken = 0;
  render();
}

// ---- the output as it is decoded (POST /v1/predict, "stream": true) ---------------------------------------------------

// The events of a text/event-stream body as they come: onEvent(name, data) for each (comments skipped).
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end; (end = buffer.indexOf("\n\n")) >= 0; buffer = buffer.slice(end + 2)) {
      let name = "message", data = "";
      for (const line of buffer.slice(0, end).split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        if (line.startsWith("data: ")) data = line.slice(6);
      }
      if (data) onEvent(name, JSON.parse(data));
    }
  }
}

// Draws each output token and its row of weights (the last layer, mean of the heads) as the server streams them;
// the explanation asked next replaces the drawing. A stream that fails leaves it to the explanation to say why.
async function stream(m, request) {
  const live = $("live"), table = clear($("live-heatmap"));
  live.hidden = false;
  live.dataset.rows = 0;
  live.dataset.done = "";
  $("live-output").textContent = "";
  const onEvent = (name, data) => {
    if (name === "input") {
      const head = element("tr");
      head.appendChild(element("th"));
      for (const k of data.source || gridLabels(data.grid)) head.appendChild(element("th", { scope: "col" }, k));
      table.appendChild(element("thead")).appendChild(head);
    } else if (name === "token") {
      const layer = data.attention[data.attention.length - 1];
      const row = layer[0].map((_, k) => layer.reduce((s, h) => s + h[k], 0) / layer.length);
      const tr = element("tr", { "data-q": data.index });
      tr.appendChild(element("th", { scope: "row" }, data.token));
      for (const alpha of row) {
        tr.appendChild(element("td", { class: "cell", "data-value": alpha, title: `α = ${alpha}`,
          style: `background: rgba(21, 101, 192, ${alpha})` }));
      }
      table.appendChild(tr);
      $("live-output").textContent = data.text;
      live.dataset.rows = data.index + 1;
    } else {
      live.dataset.done = name;
    }
  };
  try {
    const answer = await fetch("v1/predict", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: m.name, inputs: [request.input], beam: request.beam, attention: true,
        stream: true }) });
    if (answer.ok) await readEvents(answer.body, onEvent);
  } catch (e) {
    live.dataset.done = "failed";
  }
}

// ---- what one attention map is -----------------------------------------------------------------------------------

function currentMaps() { return state.explanation.attention[state.kind]; }

// The tokens of the rows (queries) and columns (keys) of a kind of attention.
function axes(maps) {
  const x = state.explanation;
  const source = x.source || gridLabels(x.grid);
  if (maps.name === "encoder") return { queries: source, keys: source };
  if (maps.name === "decoder") return { queries: x.target, keys: x.target };
  return { queries: x.target, keys: source };
}
function gridLabels(grid) {
  const labels = [];
  for (let r = 0; r < grid[0]; r++) for (let c = 0; c < grid[1]; c++) labels.push(`${r},${c}`);
  return labels;
}

// The weights shown for a layer and a head ("mean": the mean of the heads, as attend predict --svg draws them).
function matrix(maps, layer, head) {
  if (head !== "mean") return maps.weights[layer][head];
  const heads = maps.weights[layer];
  return heads[0].map((row, q) => row.map((_, k) => heads.reduce((s, h) => s + h[q][k], 0) / heads.length));
}

// ---- rendering ---------------------------------------------------------------------------------------------------

function render() {
  const x = state.explanation;
  $("result").hidden = false;
  $("output").textContent = x.output;
  const worst = worstRowSum(x);
  $("summary").textContent = `${x.finished ? "Finished" : "Stopped at the maximum length"}; ` +
    `log p(y | x) = ${fixed(x.log_prob)}, score log p / |y| = ${fixed(x.score)}` + (x.note ? `; ${x.note}` : "") +
    (x.attention.length ? `. Every row of weights sums to 1: the largest |Σ − 1| here is ${worst.toExponential(1)}.`
      : ". This model has no attention weights.");
  $("agreement").textContent = agreementSummary(x);
  const kinds = clear($("kind"));
  x.attention.forEach((maps, k) => kinds.appendChild(element("option", { value: k }, KIND_LABELS[maps.name])));
  $("choose").hidden = x.attention.length === 0;
  renderChoices();
  renderAll();
}

function worstRowSum(x) {
  let worst = 0;
  for (const maps of x.attention) {
    for (const layer of maps.weights) for (const head of layer) for (const row of head) {
      worst = Math.max(worst, Math.abs(row.reduce((s, v) => s + v, 0) - 1));
    }
  }
  return worst;
}

function renderChoices() {
  const x = state.explanation;
  if (!x.attention.length) return;
  const maps = currentMaps();
  $("kind").value = state.kind;
  const layers = clear($("layer"));
  for (let l = 0; l < maps.layers; l++) layers.appendChild(element("option", { value: l }, `${l + 1} of ${maps.layers}`));
  layers.value = state.layer;
  const heads = clear($("head"));
  if (maps.heads > 1) heads.appendChild(element("option", { value: "mean" }, "mean of the heads (all in the head view)"));
  for (let h = 0; h < maps.heads; h++) heads.appendChild(element("option", { value: h }, `head ${h + 1}`));
  if (maps.heads === 1) state.head = 0;
  heads.value = state.head;
  $("kind-note").textContent = maps.name === "decoder" ? "Causal: a token attends only to itself and the tokens before it."
    : "";
}

function renderAll() {
  const x = state.explanation;
  if (x.attention.length) {
    renderHeadView();
    renderModelView();
    renderHeatmap();
  }
  renderBeam();
  renderAttribution();
  renderPrecisions();
  if (x.pixels) renderImage();
}

// ---- head view: two columns of tokens, lines weighted by α -------------------------------------------------------

function renderHeadView() {
  const maps = currentMaps();
  const { queries, keys } = axes(maps);
  const heads = state.head === "mean" ? [...Array(maps.heads).keys()] : [Number(state.head)];
  const toggles = clear($("head-toggles"));
  for (const h of heads) {
    const box = element("input", { type: "checkbox", id: `show-head-${h}`, "data-head": h });
    box.checked = true;
    box.addEventListener("change", () => drawLines(null));
    const label = element("label", { style: `color: ${HEAD_COLOURS[h % HEAD_COLOURS.length]}` });
    label.append(box, ` head ${h + 1}`);
    toggles.appendChild(label);
  }
  const rowHeight = 20, width = 520, left = 150, right = 370;
  const svg = clear($("head-svg"));
  const rows = Math.max(queries.length, keys.length);
  svg.setAttribute("width", width);
  svg.setAttribute("height", rows * rowHeight + 30);
  svg.appendChild(element("svg:text", { x: left, y: 14, "text-anchor": "end" }, "attending"));
  svg.appendChild(element("svg:text", { x: right, y: 14 }, "attended to"));
  const lines = element("svg:g", { id: "head-lines" });
  svg.appendChild(lines);
  const place = (side, list) => list.forEach((token, t) => {
    const text = element("svg:text", { x: side === "q" ? left : right, y: 30 + t * rowHeight + 10,
      "text-anchor": side === "q" ? "end" : "start", class: "token", tabindex: 0, "data-side": side, "data-t": t },
    token);
    const focus = () => { drawLines({ side, t }); markToken(text); };
    text.addEventListener("mouseenter", focus);
    text.addEventListener("focus", focus);
    text.addEventListener("mouseleave", () => { drawLines(null); markToken(null); });
    svg.appendChild(text);
  });
  place("q", queries);
  place("k", keys);
  state.headView = { maps, heads, left: left + 6, right: right - 6, rowHeight, queries, keys };
  drawLines(null);
}

function markToken(text) {
  for (const t of $("head-svg").querySelectorAll(".token")) t.classList.toggle("active", t === text);
}

// Every shown head's lines, or (only) those of one token.
function drawLines(only) {
  const v = state.headView;
  const g = clear($("head-lines"));
  let detail = "";
  for (const h of v.heads) {
    const box = $(`show-head-${h}`);
    if (box && !box.checked) continue;
    const w = v.maps.weights[state.layer][h];
    w.forEach((row, q) => row.forEach((alpha, k) => {
      if (only && !(only.side === "q" ? only.t === q : only.t === k)) return;
      if (alpha < 0.005) return;
      g.appendChild(element("svg:line", { x1: v.left, y1: 30 + q * v.rowHeight + 6, x2: v.right,
        y2: 30 + k * v.rowHeight + 6, stroke: HEAD_COLOURS[h % HEAD_COLOURS.length], "stroke-width": 1 + 3 * alpha,
        "stroke-opacity": Math.min(1, 0.15 + alpha), "data-head": h, "data-q": q, "data-k": k, "data-value": alpha }));
    }));
    if (only && only.side === "q") {
      detail += ` head ${h + 1}: ` + w[only.t].map((a, k) => `${v.keys[k]} ${fixed(a, 3)}`).join(", ") + ".";
    }
  }
  $("head-detail").textContent = only && only.side === "q" ? `“${v.queries[only.t]}” attends to —${detail}` : "";
}

// ---- model view: every layer × head --------------------------------------------------------------------------------

function renderModelView() {
  const maps = currentMaps();
  const grid = clear($("thumbs"));
  grid.style.gridTemplateColumns = `auto repeat(${maps.heads}, auto)`;
  grid.appendChild(element("span"));
  for (let h = 0; h < maps.heads; h++) grid.appendChild(element("span", { class: "label" }, `head ${h + 1}`));
  for (let l = 0; l < maps.layers; l++) {
    grid.appendChild(element("span", { class: "label" }, `layer ${l + 1}`));
    for (let h = 0; h < maps.heads; h++) {
      const button = element("button", { class: "thumb", "data-layer": l, "data-head": h, type: "button",
        "aria-pressed": l === state.layer && String(h) === String(state.head) ? "true" : "false",
        "aria-label": `layer ${l + 1}, head ${h + 1}: open in the head view` });
      button.appendChild(thumbnail(maps.weights[l][h]));
      button.addEventListener("click", () => {
        state.layer = l;
        state.head = h;
        renderChoices();
        renderAll();
        showView("head");
      });
      grid.appendChild(button);
    }
  }
}

function thumbnail(w) {
  const cell = Math.max(2, Math.min(8, Math.floor(96 / Math.max(w.length, w[0].length))));
  const canvas = element("canvas", { width: w[0].length * cell, height: w.length * cell });
  const context = canvas.getContext("2d");
  w.forEach((row, q) => row.forEach((alpha, k) => {
    context.fillStyle = `rgba(21, 101, 192, ${alpha})`;
    context.fillRect(k * cell, q * cell, cell, cell);
  }));
  return canvas;
}

// ---- heatmap with values and the equations -------------------------------------------------------------------------

function renderHeatmap() {
  const maps = currentMaps();
  const { queries, keys } = axes(maps);
  const w = matrix(maps, state.layer, state.head);
  const table = clear($("heatmap"));
  const head = element("thead");
  const top = element("tr");
  top.appendChild(element("th"));
  for (const k of keys) top.appendChild(element("th", { scope: "col" }, k));
  top.appendChild(element("th", { scope: "col" }, "Σ"));
  head.appendChild(top);
  table.appendChild(head);
  const body = element("tbody");
  w.forEach((row, q) => {
    const tr = element("tr");
    tr.appendChild(element("th", { scope: "row" }, queries[q]));
    row.forEach((alpha, k) => {
      const td = element("td", { class: "cell", tabindex: q === 0 && k === 0 ? 0 : -1, "data-q": q, "data-k": k,
        "data-value": alpha, title: `α(${queries[q]} → ${keys[k]}) = ${alpha}`, style:
        `background: rgba(21, 101, 192, ${alpha})`, "aria-label": `${queries[q]} → ${keys[k]}: ${fixed(alpha)}` });
      td.addEventListener("mouseenter", () => showValue(q, k, alpha));
      td.addEventListener("focus", () => showValue(q, k, alpha));
      td.addEventListener("click", () => choose(q, k));
      td.addEventListener("keydown", (e) => moveIn(e, $("heatmap"), q, k, w.length, row.length, choose));
      tr.appendChild(td);
    });
    tr.appendChild(element("td", { class: "sum", "data-q": q }, fixed(row.reduce((s, v) => s + v, 0))));
    body.appendChild(tr);
  });
  table.appendChild(body);
  clear($("equation")).appendChild(element("p", { id: "cell-value" }, "Point at a cell for its value."));
  if (state.chosen) choose(state.chosen.q, state.chosen.k);
}

function showValue(q, k, alpha) {
  const { queries, keys } = axes(currentMaps());
  const shown = $("cell-value");
  if (shown) shown.textContent = `α(${queries[q]} → ${keys[k]}) = ${alpha}`;
}

// The arrow keys move the focus between the cells of `table`; Enter or space chooses one (onChoose(q, k)).
function moveIn(event, table, q, k, rows, columns, onChoose) {
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  if (event.key === "Enter" || event.key === " ") { event.preventDefault(); return onChoose(q, k); }
  const move = moves[event.key];
  if (!move) return;
  event.preventDefault();
  const [nq, nk] = [Math.min(rows - 1, Math.max(0, q + move[0])), Math.min(columns - 1, Math.max(0, k + move[1]))];
  const next = table.querySelector(`td.cell[data-q="${nq}"][data-k="${nk}"]`);
  for (const c of table.querySelectorAll("td.cell[tabindex='0']")) c.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}

// Cell (q, k) chosen: its value, and for a recurrent decoder's cross-attention the seed's equations with its numbers.
function choose(q, k) {
  state.chosen = { q, k };
  for (const c of $("heatmap").querySelectorAll("td.cell.chosen")) c.classList.remove("chosen");
  const cell = $("heatmap").querySelector(`td.cell[data-q="${q}"][data-k="${k}"]`);
  if (cell) cell.classList.add("chosen");
  const panel = clear($("equation"));
  const x = state.explanation, maps = currentMaps();
  const { queries, keys } = axes(maps);
  const alpha = matrix(maps, state.layer, state.head)[q][k];
  panel.appendChild(element("p", { id: "cell-value" }, `α(${queries[q]} → ${keys[k]}) = ${alpha}`));
  if (!x.equations || maps.name !== "cross") {
    panel.appendChild(element("p", { class: "note" }, maps.name === "cross" && !x.equations
      ? "α = softmax(q·k / √d_k) over the input's tokens, for this layer and head."
      : "α = softmax(q·k / √d_k) over the keys, for this layer and head."));
    return;
  }
  equations(panel, q, k, queries, keys);
}

function equations(panel, j, i, queries, keys) {
  const eq = state.explanation.equations;
  const e = eq.energies[j];
  const shift = Math.max(...e);
  const exps = e.map((v) => Math.exp(v - shift));
  const total = exps.reduce((s, v) => s + v, 0);
  const alphaRow = currentMaps().weights[0][0][j];
  panel.appendChild(element("p", { class: "formula" })).innerHTML = SCORE_FORMULAS[eq.score] +
    ", &nbsp; α<sub>ij</sub> = exp(e<sub>ij</sub>) / Σ<sub>k</sub> exp(e<sub>kj</sub>), &nbsp; " +
    "c<sub>j</sub> = Σ<sub>i</sub> α<sub>ij</sub> h<sub>i</sub>";
  panel.appendChild(element("p", {}, `Output token j = ${j + 1} “${queries[j]}”, input token i = ${i + 1} ` +
    `“${keys[i]}”: e_ij = ${fixed(e[i])}; α_ij = exp(${fixed(e[i])}) / Σ_k exp(e_kj) = ` +
    `${fixed(exps[i] / total)} (computed here from the scores; the model's: ${fixed(alphaRow[i])}).`));
  const share = alphaRow[i] * eq.annotation_norms[i];
  panel.appendChild(element("p", {}, `h_i's share of c_j: α_ij h_i, of norm α_ij ‖h_i‖ = ${fixed(alphaRow[i])} × ` +
    `${fixed(eq.annotation_norms[i])} = ${fixed(share)}; ‖c_j‖ = ${fixed(eq.context_norms[j])}.`));
  const table = element("table", { id: "equation-table" });
  const header = element("tr");
  for (const h of ["i", "token", "e_ij", "exp(e_ij − max)", "α_ij = exp / Σ", "α_ij (model)", "‖h_i‖"])
    header.appendChild(element("th", {}, h));
  table.appendChild(header);
  e.forEach((v, k) => {
    const tr = element("tr", { class: k === i ? "chosen" : "", "data-i": k, "data-e": v, "data-alpha": alphaRow[k] });
    for (const text of [k + 1, keys[k], fixed(v), fixed(exps[k]), fixed(exps[k] / total), fixed(alphaRow[k]),
      fixed(eq.annotation_norms[k])]) tr.appendChild(element("td", {}, text));
    table.appendChild(tr);
  });
  const sum = element("tr");
  for (const text of ["", "Σ", "", fixed(total), fixed(exps.reduce((s, v) => s + v / total, 0)),
    fixed(alphaRow.reduce((s, v) => s + v, 0)), ""]) sum.appendChild(element("td", {}, text));
  table.appendChild(sum);
  panel.appendChild(table);
}

// ---- the beam search as a tree -------------------------------------------------------------------------------------

function renderBeam() {
  const x = state.explanation;
  const svg = clear($("beam-svg"));
  const columnWidth = 120, rowHeight = 34;
  const tallest = Math.max(1, ...x.beam.map((step) => step.length));
  svg.setAttribute("width", (x.beam.length + 1) * columnWidth);
  svg.setAttribute("height", tallest * rowHeight + 20);
  const best = bestPath(x);
  const position = (s, n) => ({ x: 10 + (s + 1) * columnWidth, y: 10 + n * rowHeight });
  const root = element("svg:g", { class: "node", transform: "translate(10, 10)" });
  root.append(element("svg:rect", { width: 90, height: 24, rx: 4 }), element("svg:text", { x: 6, y: 16 }, "<sos>"));
  svg.appendChild(root);
  x.beam.forEach((step, s) => step.forEach((node, n) => {
    const to = position(s, n);
    const from = s === 0 ? { x: 10, y: 10 } : position(s - 1, node.parent);
    svg.insertBefore(element("svg:path", { class: "edge", d: `M${from.x + 90},${from.y + 12} C${from.x + 105},` +
      `${from.y + 12} ${to.x - 15},${to.y + 12} ${to.x},${to.y + 12}` }), svg.firstChild);
    const g = element("svg:g", { class: "node" + (node.finished ? " finished" : "") + (best[s] === n ? " best" : ""),
      transform: `translate(${to.x}, ${to.y})`, tabindex: 0, "data-step": s, "data-index": n,
      "data-parent": node.parent, "data-token": node.token, "data-log-prob": node.log_prob });
    g.append(element("svg:rect", { width: 100, height: 24, rx: 4 }),
      element("svg:text", { x: 6, y: 16 }, `${node.token}  ${fixed(node.log_prob, 2)}`));
    g.addEventListener("mouseenter", () => beamDetail(s, n));
    g.addEventListener("focus", () => beamDetail(s, n));
    svg.appendChild(g);
  }));
  clear($("beam-detail")).textContent = `${x.beam.length} steps; beam width ${$("beam").value}.`;
}

// The output's node at each step: the path whose tokens are the output's.
function bestPath(x) {
  const steps = x.beam.length;
  for (let s = steps - 1; s >= 0; s--) {
    for (let n = 0; n < x.beam[s].length; n++) {
      const path = [];
      for (let at = n, t = s; t >= 0; t--) { path.unshift(at); at = x.beam[t][at].parent; }
      const tokens = path.map((at, t) => x.beam[t][at].token);
      if (tokens.length === x.target.length && tokens.every((tok, t) => tok === x.target[t]) &&
        Math.abs(x.beam[s][n].log_prob - x.log_prob) < 1e-9) return path;
    }
  }
  return [];
}

function beamDetail(s, n) {
  const x = state.explanation;
  const node = x.beam[s][n];
  const panel = clear($("beam-detail"));
  panel.appendChild(element("p", {}, `Step ${s + 1}, hypothesis ${n + 1}: “${node.token}”, summed log-probability ` +
    `${fixed(node.log_prob)}${node.finished ? ", finished" : ""}.`));
  if (!node.attention.length) return;
  const maps = x.attention[0];
  const layer = maps.layers > 1 ? state.layer : 0;
  const heads = node.attention[Math.min(layer, node.attention.length - 1)];
  const row = state.head === "mean" || maps.name !== "cross"
    ? heads[0].map((_, k) => heads.reduce((sum, h) => sum + h[k], 0) / heads.length) : heads[Number(state.head)];
  const labels = x.source || gridLabels(x.grid);
  panel.appendChild(element("p", { class: "note" }, "The cross-attention that drew this token:"));
  const bars = element("div", { class: "bars" }), names = element("div", { class: "bar-labels" });
  row.forEach((alpha, k) => {
    bars.appendChild(element("div", { style: `height: ${Math.round(60 * alpha)}px`, title: `${labels[k]}: ${alpha}`,
      "data-k": k, "data-value": alpha }));
    names.appendChild(element("span", {}, labels[k]));
  });
  panel.append(bars, names);
}

// ---- "pixels" (an image model's): the image under the attention of one output token --------------------------------

function renderImage() {
  const x = state.explanation;
  const choice = clear($("token-choice"));
  x.target.forEach((token, j) => {
    const button = element("button", { type: "button", "data-j": j,
      "aria-pressed": j === state.imageToken ? "true" : "false" },
      token);
    button.addEventListener("click", () => {
      for (const b of choice.querySelectorAll("button")) b.setAttribute("aria-pressed", b === button);
      state.imageToken = j;
      drawImage(j);
    });
    choice.appendChild(button);
  });
  $("overlay").value = state.overlay;
  drawImage(state.imageToken);
}

function drawImage(j) {
  const image = state.image, x = state.explanation, canvas = $("image");
  const context = canvas.getContext("2d");
  const scale = Math.max(1, Math.floor(640 / Math.max(image.width, image.height)));
  canvas.width = image.width * scale;
  canvas.height = image.height * scale;
  for (let r = 0; r < image.height; r++) for (let c = 0; c < image.width; c++) {
    const v = Math.round(255 * (1 - image.pixels[r * image.width + c] / image.max));
    context.fillStyle = `rgb(${v}, ${v}, ${v})`;
    context.fillRect(c * scale, r * scale, scale, scale);
  }
  // the attention over the image's pixels (each grid position's α spread over its patch): attend predict --svg's map;
  // or the chosen attribution method's row over the pixels, once the server gave it
  const method = state.overlay === "attention" ? null
    : x.attribution && x.attribution.methods.find((m) => m.name === state.overlay);
  const map = state.overlay === "attention" ? x.pixels.maps[j] : method && method.rows[j];
  if (x.attribution && !method) x.attributionError = `the answer has no ${METHOD_LABELS[state.overlay]} rows`;
  $("image-note").textContent = map ? "" : x.attributionError ||
    "Computing the attribution (forward and backward passes over copies of the image)…";
  canvas.setAttribute("data-overlay", map ? state.overlay : "");
  canvas.setAttribute("data-j", j);
  if (!map) return state.overlay === "attention" || x.attributionError || loadAttribution();
  const most = Math.max(...map) || 1;
  for (let r = 0; r < x.pixels.height; r++) for (let c = 0; c < x.pixels.width; c++) {
    context.fillStyle = `rgba(211, 47, 47, ${0.6 * map[r * x.pixels.width + c] / most})`;
    context.fillRect(c * scale, r * scale, scale, scale);
  }
  const what = state.overlay === "attention" ? "the attention" : `the ${METHOD_LABELS[state.overlay]} attribution`;
  canvas.setAttribute("aria-label", `the image, and ${what} of output “${x.target[j]}” over it`);
}

// ---- views and choices -------------------------------------------------------------------------------------------

// ---- attribution beside attention (POST /v1/explain, "attribution": true) ----------------------------------------------

// Each method's mean agreement with the attention rows (Spearman's ρ), for the summary.
function agreementSummary(x) {
  if (!x.attribution) return "";
  const means = x.attribution.methods.filter((m) => m.agreement).map((m) =>
    `${METHOD_LABELS[m.name] || m.name} ${fixed(m.agreement.reduce((s, r) => s + r, 0) / m.agreement.length, 2)}`);
  return means.length ? `Attribution against attention, mean ρ over the rows: ${means.join(", ")}.` : "";
}

// The cross-attention the attribution is set beside: its last layer, mean of the heads (null without attention).
function crossRows(x) {
  const cross = x.attention.find((m) => m.name === "cross");
  return cross ? matrix(cross, cross.layers - 1, "mean") : null;
}

// A table of rows of shares (0 … 1) over the input, each row's colours scaled to its largest share, cells pickable;
// `extra`, if given, one more number a row.
function shareTable(table, rows, queries, keys, colour, extra) {
  clear(table);
  const top = element("tr");
  top.appendChild(element("th"));
  for (const k of keys) top.appendChild(element("th", { scope: "col" }, k));
  if (extra) top.appendChild(element("th", { scope: "col" }, "ρ"));
  table.appendChild(element("thead")).appendChild(top);
  const body = table.appendChild(element("tbody"));
  rows.forEach((row, q) => {
    const tr = body.appendChild(element("tr"));
    tr.appendChild(element("th", { scope: "row" }, queries[q]));
    const largest = Math.max(...row) || 1;
    row.forEach((v, k) => {
      const td = element("td", { class: "cell", tabindex: q === 0 && k === 0 ? 0 : -1, "data-q": q, "data-k": k,
        "data-value": v, title: `${v}`, style: `background: rgba(${colour}, ${v / largest})`, "aria-label": `${queries[q]} → ${keys[k]}: ${fixed(v)}` });
      td.addEventListener("click", () => chooseAttribution(q, k));
      td.addEventListener("keydown", (e) => moveIn(e, table, q, k, rows.length, row.length, chooseAttribution));
      tr.appendChild(td);
    });
    if (extra) tr.appendChild(element("td", { class: "rho", "data-q": q, "data-value": extra[q] }, fixed(extra[q], 2)));
  });
}

// The attribution of the explanation shown, asked for once, when its tab first opens: it costs forward and backward
// passes over (steps + 3) × |output| copies of the input, far more than the explanation. The same request again with
// "attribution": the same decoding gives the same output, checked before its rows are drawn. Aborted when another
// explanation comes (the connection closes, and the server stops the work).
async function loadAttribution() {
  const x = state.explanation;
  if (!state.request || x.attribution || state.attributing === x) return;
  state.attributing = x;
  state.aborting = new AbortController();
  renderAttribution();
  let answer, body;
  try {
    answer = await fetch("v1/explain", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...state.request, attribution: true }), signal: state.aborting.signal });
    body = await answer.json();
  } catch (e) {
    if (e.name === "AbortError") return;  // another explanation asked for
    body = { error: "the server did not answer: " + e.message };
  }
  if (state.explanation !== x) return;  // another explanation since
  state.attributing = null;
  state.aborting = null;
  if (answer && answer.ok && body.explanation.output !== x.output) {
    body = { error: `the output decoded again, “${body.explanation.output}”, is not “${x.output}”` };
  } else if (answer && answer.ok && !body.explanation.attribution) {
    body = { error: "the answer has no attribution" };
  }
  if (!answer || !answer.ok || body.error) {
    x.attributionError = `Attribution failed: ${answer ? answer.status + ": " : ""}${body.error}`;
  } else {
    x.attribution = body.explanation.attribution;
  }
  $("agreement").textContent = agreementSummary(x);
  renderAttribution();
}

function renderAttribution() {
  const x = state.explanation, a = x.attribution;
  $("tab-attribution").hidden = !!x.pixels || (!a && !state.request);  // an image's is drawn over it (Image tab)
  if (x.pixels) {
    if (state.image && !$("image-view").hidden) drawImage(state.imageToken);
    return;
  }
  $("attribution-tables").hidden = !a;
  $("attribution-method").disabled = !a;
  if (!a) {
    if (!state.request && !$("attribution-view").hidden) showView("heatmap");
    $("attribution-note").textContent = x.attributionError ||
      (state.attributing === x ? "Computing the attribution (forward and backward passes over copies of the input)…" : "");
    if (!state.attributing && !x.attributionError && !$("attribution-view").hidden) loadAttribution();
    return;
  }
  state.method = Math.min(state.method, a.methods.length - 1);
  const methods = clear($("attribution-method"));
  a.methods.forEach((m, i) => methods.appendChild(element("option", { value: i }, METHOD_LABELS[m.name] || m.name)));
  methods.value = state.method;
  const method = a.methods[state.method];
  $("attribution-note").textContent = (METHOD_NOTES[method.name] || "") +
    (method.steps ? ` ${method.steps} steps.` : "");
  const keys = x.source || gridLabels(x.grid), alpha = crossRows(x);
  $("attribution-alpha").hidden = !alpha;
  if (alpha) shareTable($("attribution-attention"), alpha, x.target, keys, "21, 101, 192");
  shareTable($("attribution-table"), method.rows, x.target, keys, "216, 67, 21", method.agreement);
  $("attribution-cell").textContent = "Choose a cell for its values.";
  if (state.chosenAttribution) chooseAttribution(state.chosenAttribution.q, state.chosenAttribution.k);
}

// Cell (j, i) chosen in either table: marked in both, with α, the share and the method's value.
function chooseAttribution(q, k) {
  const x = state.explanation, method = x.attribution.methods[state.method];
  if (q >= method.rows.length || k >= method.rows[q].length) return;
  state.chosenAttribution = { q, k };
  for (const c of document.querySelectorAll(".pickable td.cell.chosen")) c.classList.remove("chosen");
  for (const c of document.querySelectorAll(`.pickable td.cell[data-q="${q}"][data-k="${k}"]`)) c.classList.add("chosen");
  const keys = x.source || gridLabels(x.grid), alpha = crossRows(x);
  $("attribution-cell").textContent = `${x.target[q]} → ${keys[k]}: ` + (alpha ? `α = ${alpha[q][k]}, ` : "") +
    `attribution share = ${method.rows[q][k]} (a = ${method.values[q][k]})` +
    (method.agreement ? `; ρ of the row = ${fixed(method.agreement[q], 3)}` : "") +
    (method.change ? `; the row's change of log p = ${fixed(method.change[q])}` : "");
}

// ---- the same input in every precision (POST /v1/explain, "precision") ---------------------------------------------

// The explanation shown, decoded again in each other precision the model offers, once, when the tab first opens (one
// explanation each: decoding alone, no attribution). A precision refused or failed ends the asking, and says why;
// another explanation aborts it (the server stops the decoding whose client left).
async function loadPrecisions() {
  const x = state.explanation, m = state.model;
  if (!state.asked || x.precisions || state.decodingPrecisions === x) return;
  state.decodingPrecisions = x;
  state.abortingPrecisions = new AbortController();
  renderPrecisions();
  const found = { [x.precision]: x };
  let error = "";
  for (const precision of m.precisions.filter((p) => p !== x.precision)) {
    let answer, body;
    try {
      answer = await fetch("v1/explain", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ...state.asked, precision }), signal: state.abortingPrecisions.signal });
      body = await answer.json();
    } catch (e) {
      if (e.name === "AbortError") return;  // another explanation asked for
      body = { error: "the server did not answer: " + e.message };
    }
    if (state.explanation !== x) return;  // another explanation since
    if (!answer || !answer.ok) {
      error = `${precision}: ${answer ? answer.status + ": " : ""}${body.error}`;
      break;
    }
    found[precision] = body.explanation;
  }
  state.decodingPrecisions = null;
  state.abortingPrecisions = null;
  x.precisions = found;
  x.precisionError = error;
  renderPrecisions();
}

// How many rows of two outputs' attention are computed from the same output tokens: those both outputs share, and
// the first that differs (its row was computed from the tokens before it).
function sharedRows(a, b) { return Math.min(sharedTokens(a, b) + 1, a.target.length, b.target.length); }
function sharedTokens(a, b) {
  let n = 0;
  while (n < a.target.length && n < b.target.length && a.target[n] === b.target[n]) n++;
  return n;
}

// The part of a map of kind `name` two outputs can compare: its query rows and key columns.
function comparedPart(name, a, b) {
  const rows = sharedRows(a, b), source = (a.source || gridLabels(a.grid)).length;
  if (name === "encoder") return { queries: source, keys: source };
  if (name === "decoder") return { queries: rows, keys: rows };
  return { queries: rows, keys: source };
}

// |α′ − α| of two maps' layer and head (or mean), on their compared part.
function differences(ma, mb, layer, head, part) {
  const a = matrix(ma, layer, head), b = matrix(mb, layer, head);
  return a.slice(0, part.queries).map((row, q) => row.slice(0, part.keys).map((v, k) => Math.abs(b[q][k] - v)));
}

// The largest |α′ − α| of a kind of attention over every layer and head.
function largestDifference(ma, mb, part) {
  let worst = 0;
  for (let l = 0; l < ma.layers; l++) {
    for (let h = 0; h < ma.heads; h++) {
      for (const row of differences(ma, mb, l, h, part)) worst = Math.max(worst, ...row);
    }
  }
  return worst;
}

function renderPrecisions() {
  const x = state.explanation, m = state.model;
  $("tab-precision").hidden = !state.asked || !m || !m.precisions || m.precisions.length < 2;
  const all = x.precisions;
  $("precision-note").textContent = x.precisionError ? `Decoding in another precision failed: ${x.precisionError}`
    : state.decodingPrecisions === x ? "Decoding in the other precisions…" : "";
  if (!all) {  // nothing of an earlier explanation stays
    for (const id of ["precision-table", "precision", "precision-differences"]) clear($(id));
    $("precision-worst").textContent = "";
    if (!state.decodingPrecisions && !$("precision-view").hidden) loadPrecisions();
    return;
  }
  const table = clear($("precision-table")), top = element("tr");
  for (const h of ["Precision", "Output", "Score", "log p(y | x)"]) top.appendChild(element("th", { scope: "col" }, h));
  for (const maps of x.attention) top.appendChild(element("th", { scope: "col" }, `largest |Δα|, ${maps.name}`));
  table.appendChild(element("thead")).appendChild(top);
  const body = table.appendChild(element("tbody"));
  for (const [name, y] of Object.entries(all)) {
    const tr = body.appendChild(element("tr", { "data-precision": name, class: name === x.precision ? "shown" : "" }));
    tr.appendChild(element("th", { scope: "row" }, name + (name === x.precision ? " (shown)" : "")));
    tr.appendChild(element("td", { class: "output" }, y.output));
    tr.appendChild(element("td", { class: "number score", "data-value": y.score }, fixed(y.score)));
    tr.appendChild(element("td", { class: "number", "data-value": y.log_prob }, fixed(y.log_prob)));
    x.attention.forEach((maps, k) => {
      const worst = name === x.precision ? 0 : largestDifference(maps, y.attention[k], comparedPart(maps.name, x, y));
      tr.appendChild(element("td", { class: "number difference", "data-kind": maps.name, "data-value": worst },
        name === x.precision ? "—" : worst.toExponential(2)));
    });
  }
  renderPrecisionMap();
}

// The map of differences: the chosen precision's |α′ − α| for the attention, layer and head chosen above.
function renderPrecisionMap() {
  const x = state.explanation, others = Object.keys(x.precisions).filter((p) => p !== x.precision);
  const select = clear($("precision"));
  for (const p of others) select.appendChild(element("option", { value: p }, `${p} − ${x.precision}`));
  const table = clear($("precision-differences"));
  if (!others.length || !x.attention.length) return ($("precision-worst").textContent = "");
  if (!others.includes(state.precision)) state.precision = others[0];
  select.value = state.precision;
  const y = x.precisions[state.precision], maps = currentMaps(), { queries, keys } = axes(maps);
  const d = differences(maps, y.attention[state.kind], state.layer, state.head, comparedPart(maps.name, x, y));
  const largest = Math.max(0, ...d.flat());
  const top = element("tr");
  top.appendChild(element("th"));
  for (const k of keys.slice(0, d.length ? d[0].length : 0)) top.appendChild(element("th", { scope: "col" }, k));
  table.appendChild(element("thead")).appendChild(top);
  const body = table.appendChild(element("tbody"));
  let at = null;
  d.forEach((row, q) => {
    const tr = body.appendChild(element("tr"));
    tr.appendChild(element("th", { scope: "row" }, queries[q]));
    row.forEach((v, k) => {
      if (v === largest && !at) at = `${queries[q]} → ${keys[k]}`;
      tr.appendChild(element("td", { class: "cell", "data-q": q, "data-k": k, "data-value": v, title: `|Δα| = ${v}`,
        style: `background: rgba(106, 27, 154, ${largest > 0 ? v / largest : 0})` }));
    });
  });
  const head = state.head === "mean" ? "mean of the heads" : `head ${state.head + 1}`;
  $("precision-worst").textContent = `${state.precision} against ${x.precision}, ${maps.name} layer ${state.layer + 1}, ` +
    `${head}: largest |Δα| = ${largest.toExponential(2)}` + (at ? ` at ${at}` : "") +
    (y.output === x.output ? "; the same output." : `; the outputs share their first ${sharedTokens(x, y)} tokens.`);
}

function showView(name) {
  for (const view of VIEWS) {
    $(`tab-${view}`).setAttribute("aria-selected", view === name);
    $(`${view}-view`).hidden = view !== name;
  }
  if (name === "attribution" && state.explanation) loadAttribution();
  if (name === "precision" && state.explanation) loadPrecisions();
}

function start() {
  $("ask").addEventListener("submit", explain);
  $("model").addEventListener("change", (e) => chooseModel(e.target.value));
  $("example").addEventListener("change", (e) => chooseExample(e.target.value));
  $("image-file").addEventListener("change", () => { state.pickedImage = null; });
  $("input").addEventListener("input", () => { $("example").value = ""; });
  $("kind").addEventListener("change", (e) => {
    state.kind = Number(e.target.value);
    state.layer = Math.min(state.layer, currentMaps().layers - 1);
    state.chosen = null;
    renderChoices();
    renderAll();
  });
  $("layer").addEventListener("change", (e) => { state.layer = Number(e.target.value); renderAll(); });
  $("head").addEventListener("change", (e) => {
    state.head = e.target.value === "mean" ? "mean" : Number(e.target.value);
    renderAll();
  });
  for (const view of VIEWS) {
    $(`tab-${view}`).addEventListener("click", () => showView(view));
  }
  $("attribution-method").addEventListener("change", (e) => { state.method = Number(e.target.value); renderAttribution(); });
  $("precision").addEventListener("change", (e) => { state.precision = e.target.value; renderPrecisions(); });
  $("overlay").addEventListener("change", (e) => { state.overlay = e.target.value; drawImage(state.imageToken); });
  loadModels();
}

start();
