#!/usr/bin/env python3
"""The attention explorer in two real browsers, headless: Debian's Chromium, driven by Selenium (chromium-driver,
python3-selenium), and Debian's Firefox ESR, driven through WebDriver BiDi (bidi.py: Debian has no geckodriver) —
against a real `attend serve` on a free port with small models this test trains first. Every check runs in both.

    explorer_test.py ATTEND WORK_DIR

What it checks (issue 37): typing "Saturday 09 May 2018" into the dates model's page shows "2018-05-09"; every heatmap
row the page holds sums to 1 within 1e-5 and equals the numbers of the API (POST /v1/explain); switching the layer or
the head changes the heatmap to that head's weights; while the output is streamed the page draws a row of weights a
token, the API's (issue 67); pointing at a cell shows its value; the head view draws a line
per weight and hovering a token keeps only its lines; the model view holds every layer x head and opens one in the
head view; the beam tree holds at most k unfinished hypotheses a step; the attribution tab shows each method's rows
and ρ as the API gives them beside the cross-attention, a chosen cell marked in both tables, and the precisions tab
each precision's output, score and largest difference of each attention, and the map of differences, as the API's
answers in each precision give them (issue 68); the Bahdanau equation panel's numbers give α_ij
from e_ij, and a Luong model's its own score's; the arrow keys and Enter choose a cell; the summary states the rows'
sums; a digits image shows its overlay, the attention over its pixels, and each attribution method's map over them
as the API gives it; an example of the test split chosen from the
page's list is explained; an input at the model's longest is answered and shown without widening the page; the
browser's console holds no error. Screenshots of each view go to WORK_DIR/screenshots/ (docs/explorer.md shows them),
each checked for being more than a blank page.

Without the browsers it exits 77, which Meson counts as skipped, saying why — unless ATTEND_REQUIRE_BROWSER=1 (CI sets
it: the browsers are installed there), when a missing browser is a failure. Without the digits data (found as the
program finds it: attend data where digits) it is skipped too, naming the file and the folders searched."""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time
import urllib.request
import zlib

SKIP = 77
failures = []
browser_now = ""  # the browser the checks run in, which a failure names


def check(condition, message):
    if not condition:
        failures.append(f"{browser_now}: {message}")
        print(f"FAILED ({browser_now}):", message, flush=True)
    return condition


def need_browsers():
    missing = [p for p in ("chromium", "chromedriver", "firefox-esr") if shutil.which(p) is None]
    for module, package in (("selenium", "python3-selenium"), ("websocket", "python3-websocket")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if not missing:
        return
    why = ("no " + ", ".join(missing) + " (apt-get install chromium chromium-driver python3-selenium firefox-esr "
           "python3-websocket; scripts/setup does)")
    if os.environ.get("ATTEND_REQUIRE_BROWSER") == "1":
        sys.exit("explorer: " + why)
    print("explorer: skipped:", why)
    sys.exit(SKIP)


def train(attend, work, data):
    """Small models of the three kinds the page draws, trained anew at every run (by the program under test)."""
    runs = {
        "dates.safetensors": ["--task", "dates", "--train-size", "6000", "--epochs", "4", "--hidden", "48", "--embed",
                              "16", "--seed", "3"],
        "dates-luong.safetensors": ["--task", "dates", "--decoder", "luong-general", "--train-size", "600", "--epochs",
                                    "1", "--hidden", "16", "--embed", "8", "--seed", "5"],
        "dates-transformer.safetensors": ["--arch", "transformer", "--task", "dates", "--train-size", "600",
                                          "--epochs", "1", "--d-model", "16", "--heads", "2", "--ff", "32", "--warmup",
                                          "10", "--seed", "9"],
        "digits.safetensors": digits_flags(data) + ["--epochs", "1", "--hidden", "8", "--embed", "4",
                                                    "--annotation-size", "8", "--patch-hidden", "0", "--batch", "16"],
    }
    for name, flags in runs.items():
        subprocess.run([attend, "train", *flags, "--out", os.path.join(work, name), "--force"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    images = os.path.join(work, "digits")
    shutil.rmtree(images, ignore_errors=True)
    subprocess.run([attend, "data", *digits_flags(data), "--write", images], check=True, stdout=subprocess.DEVNULL)
    return [os.path.join(work, name) for name in runs]


def digits_flags(data):
    return ["--task", "digits", "--data", data, "--train-size", "32",
            "--valid-size", "4", "--test-size", "4"]


def start_server(attend, models):
    args = [attend, "serve", "--port", "0"]
    for m in models:
        args += ["--model", m]
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    if "listening on http://" not in line:
        server.kill()
        sys.exit("explorer: attend serve did not start: " + line + server.stderr.read())
    return server, line.split("http://")[1].split()[0]


def get_json(address, target):
    with urllib.request.urlopen(f"http://{address}{target}") as answer:
        return json.load(answer)


def explain(address, model, text, beam=1, precision=None):
    """The API's explanation, with the attribution the page asks for (text models), or in another precision as the
    Precisions tab asks it (without attribution)."""
    asked = {"model": model, "input": text, "beam": beam}
    asked.update({"precision": precision} if precision else {"attribution": True})
    request = urllib.request.Request(f"http://{address}/v1/explain", json.dumps(asked).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)["explanation"]


def png_is_not_blank(path):
    """True when the PNG (8-bit RGB or RGBA, as Chromium writes) has at least 50 distinct pixel values."""
    with open(path, "rb") as f:
        data = f.read()
    at, idat, width, colour = 8, b"", 0, 2
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        chunk = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, _, _, colour = struct.unpack(">IIBB", chunk[:10])
        elif kind == b"IDAT":
            idat += chunk
        at += 12 + length
    raw = zlib.decompress(idat)
    step = 1 + width * (4 if colour == 6 else 3)
    distinct = set()
    for row in range(0, len(raw) // step, 7):  # filtered bytes of every 7th row: enough to tell a blank page
        distinct.update(raw[row * step + 1:(row + 1) * step:5])
    return len(distinct) >= 50


def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1300,1000",
                 "--disable-gpu"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_page_load_timeout(30)
    return driver


class Page:
    """The explorer in one browser: Chromium through Selenium (chromedriver), or Firefox through WebDriver BiDi
    (bidi.py), behind the same calls."""

    def __init__(self, address, shots, browser):
        self.firefox = browser == "firefox"
        if self.firefox:
            import bidi
            self.driver = bidi.Firefox(1300, 1000)
        else:
            self.driver = chromium()
        self.address, self.shots = address, shots
        self.driver.get(f"http://{address}/")
        self.wait(lambda: self.by_id("model").find_elements("tag name", "option"))

    def by_id(self, name):
        return self.driver.find_element("id", name)

    def css(self, selector):
        return self.driver.find_elements("css selector", selector)

    def wait(self, condition, seconds=30):
        end = time.time() + seconds
        while time.time() < end:
            try:
                value = condition()
                if value:
                    return value
            except Exception:  # noqa: BLE001 — the page is still being drawn
                pass
            time.sleep(0.05)
        raise TimeoutError("the page did not get there in time")

    def choose(self, select, value):
        if self.firefox:
            return self.by_id(select).select(value)
        from selenium.webdriver.support.ui import Select
        Select(self.by_id(select)).select_by_value(str(value))

    def ask(self, model, text=None, beam=1, image=None):
        self.choose("model", model)
        if image:
            self.by_id("image-file").send_keys(image)
        else:
            box = self.by_id("input")
            box.clear()
            box.send_keys(text)
        beam_box = self.by_id("beam")
        beam_box.clear()
        beam_box.send_keys(str(beam))
        self.driver.execute_script("document.getElementById('result').hidden = true")
        self.by_id("explain").click()
        self.wait(lambda: not self.by_id("result").get_attribute("hidden"))

    def press(self, *keys):
        """Keys pressed on whatever has the focus."""
        if self.firefox:
            return self.driver.press(*keys)
        from selenium.webdriver.common.action_chains import ActionChains
        ActionChains(self.driver).send_keys(*keys).perform()

    def tab(self, name):
        self.by_id("tab-" + name).click()
        self.wait(lambda: self.by_id(name + "-view").is_displayed())

    def hover(self, element):
        if self.firefox:
            return element.hover()
        from selenium.webdriver.common.action_chains import ActionChains
        ActionChains(self.driver).move_to_element(element).perform()

    def heatmap(self, table="heatmap"):
        """A table's weights as the page holds them (data-value of each cell, row by row): one call, not one a
        cell."""
        return self.driver.execute_script("""
            const rows = [];
            for (const cell of document.querySelectorAll("#""" + table + """ td.cell")) {
              const q = Number(cell.dataset.q), k = Number(cell.dataset.k);
              (rows[q] = rows[q] || [])[k] = Number(cell.dataset.value);
            }
            return rows;""")

    def shot(self, name):
        path = os.path.join(self.shots, name + ".png")
        self.driver.save_screenshot(path)
        check(png_is_not_blank(path), f"screenshot {name}.png is blank")

    def console_errors(self):
        if self.firefox:
            return self.driver.errors
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]


def same_rows(page_rows, api_rows, what):
    if not check(len(page_rows) == len(api_rows), f"{what}: {len(page_rows)} rows on the page, {len(api_rows)} in the API"):
        return
    worst = max((abs(a - b) for p, q in zip(page_rows, api_rows) for a, b in zip(p, q)), default=0.0)
    check(all(len(p) == len(q) for p, q in zip(page_rows, api_rows)), f"{what}: rows of other lengths than the API's")
    check(worst <= 1e-7, f"{what}: the page's weights differ from the API's by {worst}")
    sums = [abs(sum(row) - 1) for row in page_rows]
    check(max(sums) <= 1e-5, f"{what}: a row sums to 1 ± {max(sums)}")


def mean_of_heads(layer):
    return [[sum(h[q][k] for h in layer) / len(layer) for k in range(len(layer[0][q]))] for q in range(len(layer[0]))]


def streamed(page, x, what):
    """What the page drew while the output was streamed (POST /v1/predict, "stream": true), kept hidden under the
    explanation: a row for each output token (the end token has none), each the API's cross-attention row of the last
    layer, mean of the heads; the stream ended with its "done" event."""
    live = page.by_id("live")
    tokens = len(x["target"]) - (1 if x["finished"] else 0)
    check(live.get_attribute("data-done") == "done", f"{what}: the stream ended with {live.get_attribute('data-done')!r}")
    check(live.get_attribute("data-rows") == str(tokens), f"{what}: {live.get_attribute('data-rows')} rows streamed, "
                                                          f"{tokens} tokens")
    rows = page.driver.execute_script("""
        return [...document.querySelectorAll("#live-heatmap tr[data-q]")].map(
          (tr) => [...tr.querySelectorAll("td.cell")].map((td) => Number(td.dataset.value)));""")
    cross = x["attention"][0]
    same_rows(rows, mean_of_heads(cross["weights"][cross["layers"] - 1])[:tokens], what + " streamed")
    labels = page.driver.execute_script("""
        return [...document.querySelectorAll("#live-heatmap thead th[scope=col]")].map((th) => th.textContent);""")
    check(labels == x["source"], f"{what}: the streamed table's columns are {labels}, not the input's tokens")


ARROW_RIGHT, ARROW_DOWN, ENTER = "\ue014", "\ue015", "\ue007"  # WebDriver's key codes (Selenium's Keys, BiDi's too)


def attribution(page, x, what):
    """The attribution tab: for each method the API gave, its rows (shares summing to 1) and each row's ρ as the API's,
    beside the cross-attention's last layer, mean of the heads; a chosen cell marked in both tables with its values;
    the summary's mean ρ of each method."""
    agreement = page.by_id("agreement").text
    check("ρ" not in agreement, f"{what}: attribution shown before its tab opened: {agreement!r}")
    page.tab("attribution")  # the page asks for the attribution now
    page.wait(lambda: page.css("#attribution-method option") and page.by_id("attribution-tables").is_displayed())
    cross = next(m for m in x["attention"] if m["name"] == "cross")
    methods = x["attribution"]["methods"]
    offered = [o.get_attribute("value") for o in page.css("#attribution-method option")]
    check(len(offered) == len(methods), f"{what}: {len(offered)} attribution methods offered, {len(methods)} in the API")
    for m, method in enumerate(methods):
        page.choose("attribution-method", m)
        same_rows(page.heatmap("attribution-table"), method["rows"], f"{what} {method['name']}")
        same_rows(page.heatmap("attribution-attention"), mean_of_heads(cross["weights"][-1]), f"{what} α")
        rho = [float(c.get_attribute("data-value")) for c in page.css("#attribution-table td.rho")]
        check(rho == method["agreement"], f"{what} {method['name']}: ρ {rho} on the page, {method['agreement']} in the API")
        mean = sum(method["agreement"]) / len(method["agreement"])
        summary = page.by_id("agreement").text
        check(f"{mean:.2f}" in summary.split("mean ρ over the rows:")[-1], f"{what}: the summary {summary!r} lacks {mean:.2f}")
    page.choose("attribution-method", 1)
    page.css('#attribution-table td.cell[data-q="1"][data-k="2"]')[0].click()
    chosen = [(c.get_attribute("data-q"), c.get_attribute("data-k")) for c in page.css(".pickable td.cell.chosen")]
    check(chosen == [("1", "2"), ("1", "2")], f"{what}: the chosen cell marked at {chosen}, not in both tables")
    shown = page.by_id("attribution-cell").text

    def number_after(label):
        try:
            return float(shown.split(label, 1)[1].split(",")[0].split(" ")[0].rstrip(";"))
        except (IndexError, ValueError):
            return math.nan
    check(number_after("share = ") == methods[1]["rows"][1][2] and
          abs(number_after("α = ") - mean_of_heads(cross["weights"][-1])[1][2]) <= 1e-12,
          f"{what}: the chosen cell shows {shown!r}")
    # with the keyboard: from the chosen cell one to the right, Enter chooses (1, 3) in both tables
    page.css('#attribution-table td.cell[data-q="1"][data-k="2"]')[0].click()
    page.press(ARROW_RIGHT, ENTER)
    chosen = [(c.get_attribute("data-q"), c.get_attribute("data-k")) for c in page.css(".pickable td.cell.chosen")]
    check(chosen == [("1", "3"), ("1", "3")], f"{what}: arrow and Enter chose {chosen}, not (1, 3) in both tables")
    page.shot(what.replace(" ", "-") + "-attribution")


def shared_tokens(a, b):
    n = 0
    while n < min(len(a["target"]), len(b["target"])) and a["target"][n] == b["target"][n]:
        n += 1
    return n


def difference_map(maps_a, maps_b, layer, head, a, b):
    """|α_b − α_a| of one layer and head ("mean": of the heads) on the part two outputs share, as the page defines it
    (docs/explorer.md, Precisions)."""
    rows = min(shared_tokens(a, b) + 1, len(a["target"]), len(b["target"]))
    keys = len(a["source"])
    if maps_a["name"] == "encoder":
        rows = keys
    elif maps_a["name"] == "decoder":
        keys = rows
    pick = (lambda m: mean_of_heads(m["weights"][layer])) if head == "mean" else (lambda m: m["weights"][layer][head])
    wa, wb = pick(maps_a), pick(maps_b)
    return [[abs(wb[q][k] - wa[q][k]) for k in range(keys)] for q in range(rows)]


def precisions(page, x, model, text, beam, what):
    """The Precisions tab: each precision the server offers, its output and score as the API gives them in it, each
    kind of attention's largest difference against the precision shown, and the map of differences of the chosen
    attention, layer and head for each precision chosen."""
    offered = next(m for m in get_json(page.address, "/v1/models")["models"] if m["name"] == model)["precisions"]
    if len(offered) < 2:
        check(page.by_id("tab-precision").get_attribute("hidden") is not None, f"{what}: a Precisions tab with one")
        return
    page.tab("precision")
    page.wait(lambda: len(page.css("#precision-table tbody tr")) == len(offered))
    shown = page.by_id("precision-table").find_elements("css selector", "tr.shown")[0].get_attribute("data-precision")
    base = x if shown == "float32" else explain(page.address, model, text, beam, shown)
    for precision in offered:
        y = base if precision == shown else explain(page.address, model, text, beam, precision)
        row = page.css(f'#precision-table tr[data-precision="{precision}"]')[0]
        cell = lambda c: row.find_elements("css selector", c)[0]  # noqa: E731
        check(cell("td.output").text == y["output"], f"{what} {precision}: output {cell('td.output').text!r}")
        check(float(cell("td.score").get_attribute("data-value")) == y["score"], f"{what} {precision}: score")
        for k, maps in enumerate(base["attention"]):
            worst = max((max(max(r, default=0.0) for r in difference_map(maps, y["attention"][k], l, h, base, y))
                         for l in range(maps["layers"]) for h in range(maps["heads"])), default=0.0)
            page_worst = float(row.find_elements("css selector", "td.difference")[k].get_attribute("data-value"))
            check(abs(page_worst - worst) <= 1e-12, f"{what} {precision} {maps['name']}: largest |Δα| {page_worst}, "
                  f"{worst} from the API")
        if precision == shown:
            continue
        page.choose("precision", precision)
        kind, layer = int(page.by_id("kind").get_attribute("value")), int(page.by_id("layer").get_attribute("value"))
        head = page.by_id("head").get_attribute("value")
        head = head if head == "mean" else int(head)
        expected = difference_map(base["attention"][kind], y["attention"][kind], layer, head, base, y)
        drawn = page.heatmap("precision-differences")
        worst = max((abs(a - b) for p, q in zip(drawn, expected) for a, b in zip(p, q)), default=0.0)
        check(len(drawn) == len(expected) and all(len(p) == len(q) for p, q in zip(drawn, expected)) and worst <= 1e-12,
              f"{what} {precision}: the map of differences is not the API's (off by {worst})")
        check(f"largest |Δα| = " in page.by_id("precision-worst").text, f"{what}: {page.by_id('precision-worst').text!r}")
    others = [p for p in offered if p != shown]
    page.choose("precision", "int8" if "int8" in others else others[0])  # the picture: int8's differences, where offered
    page.shot(what.replace(" ", "-") + "-precisions")


def equation_panel(page, x, j, formula):
    """The equation panel of the chosen cell in row j: the API's scores, α as their softmax, the score's formula."""
    rows = page.css("#equation-table tr[data-i]")
    energies = [float(r.get_attribute("data-e")) for r in rows]
    alphas = [float(r.get_attribute("data-alpha")) for r in rows]
    total = sum(math.exp(e) for e in energies)
    worst = max(abs(math.exp(e) / total - a) for e, a in zip(energies, alphas))
    check(len(rows) == len(x["source"]) and worst < 1e-5, f"equation panel: softmax of e differs from α by {worst}")
    check(energies == [float(v) for v in x["equations"]["energies"][j]], "equation panel: not the API's scores")
    shown = page.by_id("equation").text
    check(formula in shown and (formula == "tanh") == ("tanh" in shown),
          f"equation panel: not the {x['equations']['score']} score's formula: {shown[:80]!r}")


def luong(page, address):
    """A Luong model (the general score): its own formula, α from its scores."""
    page.ask("dates-luong", "9 May 2018")
    x = explain(address, "dates-luong", "9 May 2018")
    check(x["equations"]["score"] == "general", f"luong: the API's score is {x['equations']['score']}")
    page.tab("heatmap")
    same_rows(page.heatmap(), x["attention"][0]["weights"][0][0], "luong heatmap")
    page.css('#heatmap td.cell[data-q="0"][data-k="1"]')[0].click()
    equation_panel(page, x, 0, "Wa hi")


def dates_rnn(page, address):
    """The Bahdanau model: the output, the heatmap against the API, hover, the equation panel, the beam tree."""
    page.ask("dates", "Saturday 09 May 2018", beam=3)
    check(page.by_id("output").text == "2018-05-09", f"dates: the page shows {page.by_id('output').text!r}")
    x = explain(address, "dates", "Saturday 09 May 2018", beam=3)
    streamed(page, x, "dates, beam 3")
    page.tab("heatmap")
    same_rows(page.heatmap(), x["attention"][0]["weights"][0][0], "dates heatmap")
    cell = page.css('#heatmap td.cell[data-q="0"][data-k="2"]')[0]
    page.hover(cell)
    shown = page.by_id("cell-value").text
    check(cell.get_attribute("data-value") in shown, f"hover: {shown!r} does not show {cell.get_attribute('data-value')}")
    # the page states what it shows: every row sums to 1, and the largest |Σ − 1|
    summary = page.by_id("summary").text
    worst_sum = float(summary.split("here is ")[-1].split(". ")[0].rstrip("."))
    check("Every row of weights sums to 1" in summary and worst_sum <= 1e-5, f"summary: {summary!r}")
    # the equation panel of cell (j, i) = (1, 3): α from the scores it shows
    page.css('#heatmap td.cell[data-q="1"][data-k="3"]')[0].click()
    equation_panel(page, x, 1, "tanh")
    page.shot("dates-heatmap-equation")
    # with the keyboard: from the chosen cell one to the right and one down, Enter chooses (2, 4)
    page.press(ARROW_RIGHT, ARROW_DOWN, ENTER)
    chosen = page.css("#heatmap td.cell.chosen")
    check([(c.get_attribute("data-q"), c.get_attribute("data-k")) for c in chosen] == [("2", "4")],
          "keyboard: arrows and Enter did not choose cell (2, 4)")
    check([r.get_attribute("data-i") for r in page.css("#equation-table tr.chosen")] == ["4"],
          "keyboard: the equation panel is not the chosen cell's")
    attribution(page, x, "dates")
    precisions(page, x, "dates", "Saturday 09 May 2018", 3, "dates")
    page.tab("beam")
    steps = {}
    for node in page.css("#beam-svg g.node[data-step]"):
        steps.setdefault(int(node.get_attribute("data-step")), []).append("finished" in node.get_attribute("class"))
    check(len(steps) == len(x["beam"]), f"beam tree: {len(steps)} steps on the page, {len(x['beam'])} in the API")
    check(all(sum(not f for f in s) <= 3 for s in steps.values()), "beam tree: more than k open hypotheses a step")
    check(any(len(s) > 1 for s in steps.values()), "beam tree: one hypothesis a step with k = 3")
    node = page.css('#beam-svg g.node[data-step="1"]')[0]
    page.hover(node)
    bars = page.css("#beam-detail .bars div")
    check(len(bars) == len(x["source"]), f"beam tree: the hypothesis's attention has {len(bars)} bars")
    page.shot("dates-beam")
    page.tab("head")
    page.shot("dates-head")


def transformer(page, address):
    """The Transformer: three kinds of attention, layer and head switching, the head and model views."""
    page.ask("dates-transformer", "9 May 2018")
    x = explain(address, "dates-transformer", "9 May 2018")
    streamed(page, x, "transformer")
    kinds = [o.get_attribute("value") for o in page.css("#kind option")]
    check(len(kinds) == 3, f"transformer: {len(kinds)} kinds of attention offered")
    page.tab("heatmap")
    for kind, maps in enumerate(x["attention"]):
        page.choose("kind", kind)
        for layer in range(maps["layers"]):
            page.choose("layer", layer)
            page.choose("head", "mean")
            same_rows(page.heatmap(), mean_of_heads(maps["weights"][layer]), f"{maps['name']} layer {layer} mean")
            for head in range(maps["heads"]):
                page.choose("head", head)
                same_rows(page.heatmap(), maps["weights"][layer][head], f"{maps['name']} layer {layer} head {head}")
    decoder = x["attention"][2]["weights"][1][1]
    check(all(decoder[j][u] == 0 for j in range(len(decoder)) for u in range(j + 1, len(decoder))),
          "decoder self-attention: not causal")
    page.shot("transformer-heatmap")
    # the head view: one line a weight of the shown heads (weights below 0.005 are not drawn); hover keeps one token's
    page.choose("kind", 0)
    page.choose("layer", 1)
    page.choose("head", "mean")
    page.tab("head")
    weights = x["attention"][0]["weights"][1]
    drawn = sum(1 for head in weights for row in head for a in row if a >= 0.005)
    check(len(page.css("#head-lines line")) == drawn, f"head view: {len(page.css('#head-lines line'))} lines, {drawn} weights")
    page.hover(page.css('#head-svg text.token[data-side="q"][data-t="0"]')[0])
    kept = {line.get_attribute("data-q") for line in page.css("#head-lines line")}
    check(kept == {"0"}, f"head view: hovering query 0 keeps the lines of {sorted(kept)}")
    page.shot("transformer-head")
    page.tab("model")
    thumbs = page.css("#thumbs .thumb")
    check(len(thumbs) == 4, f"model view: {len(thumbs)} thumbnails for 2 layers x 2 heads")
    page.css('#thumbs .thumb[data-layer="0"][data-head="1"]')[0].click()
    check(page.by_id("head-view").is_displayed(), "model view: a thumbnail does not open the head view")
    check(page.by_id("layer").get_attribute("value") == "0" and page.by_id("head").get_attribute("value") == "1",
          "model view: the head view shows another layer or head than the one chosen")
    page.tab("model")
    page.shot("transformer-model")
    attribution(page, x, "transformer")
    precisions(page, x, "dates-transformer", "9 May 2018", 1, "transformer")


def choose_example(page, model, k):
    """Example k of the model's list on the page (GET /v1/examples), chosen: the page explains it."""
    listed = get_json(page.address, f"/v1/examples?model={model}&count=50")["examples"]
    page.choose("model", model)
    page.wait(lambda: len(page.css("#example option")) == 1 + len(listed))
    page.driver.execute_script("document.getElementById('result').hidden = true")
    page.choose("example", k)
    page.wait(lambda: not page.by_id("result").get_attribute("hidden"))
    return listed[k]


def examples(page, address):
    """The test split's inputs offered on the page: one chosen is put in the form and explained."""
    example = choose_example(page, "dates", 2)
    x = explain(address, "dates", example["input"])
    check(page.by_id("input").get_attribute("value") == example["input"], "examples: the input box does not hold it")
    check(page.by_id("output").text == x["output"], f"examples: the page shows {page.by_id('output').text!r}, "
                                                    f"the API {x['output']!r}")


def longest(page, address):
    """An input at the dates model's longest (max_input_length characters): answered, with every column; the page no
    wider than the window in every view (the wide ones scroll in their frames); the last column's value on hover."""
    limit = next(m for m in get_json(address, "/v1/models")["models"] if m["name"] == "dates")["max_input_length"]
    text = ("09 May 2018 " * 10)[:limit]
    page.ask("dates", text)
    x = explain(address, "dates", text)
    check(len(x["source"]) == limit, f"longest: the API read {len(x['source'])} tokens of {limit}")
    check(page.by_id("output").text == x["output"], "longest: the page's output is not the API's")
    for view in ("heatmap", "model", "beam", "head"):
        page.tab(view)
        wide, window = page.driver.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        check(wide <= window, f"longest: the {view} view makes the page {wide} px wide in a window of {window}")
    page.tab("heatmap")
    check(all(len(row) == limit for row in page.heatmap()), "longest: a heatmap row without every column")
    cell = page.css(f'#heatmap td.cell[data-q="0"][data-k="{limit - 1}"]')[0]
    page.hover(cell)
    shown = page.by_id("cell-value").text
    check(cell.get_attribute("data-value") in shown, f"longest: the last column's value is not shown ({shown!r})")
    page.tab("head")
    page.shot("dates-longest")


def overlay_red(page, height, width):
    """How much redder than green the image's canvas is at the centre of each pixel of the image, row by row: the
    overlay's red (211, 47, 47) at opacity a over grey makes it 164 a."""
    return page.driver.execute_script("""
        const canvas = document.getElementById("image"), [height, width] = arguments;
        const scale = canvas.height / height, context = canvas.getContext("2d"), red = [];
        for (let r = 0; r < height; r++) for (let c = 0; c < width; c++) {
          const [R, G] = context.getImageData((c + 0.5) * scale, (r + 0.5) * scale, 1, 1).data;
          red.push(R - G);
        }
        return red;""", height, width)


def same_overlay(page, pixels, j, what):
    """The canvas shows output j's map of `pixels` (the API's "pixels"): opacity 0.6 where it is largest."""
    page.css(f'#token-choice button[data-j="{j}"]')[0].click()
    values = pixels["maps"][j]
    red = overlay_red(page, pixels["height"], pixels["width"])
    worst = max(abs(r - 0.6 * 164 * v / max(values)) for r, v in zip(red, values))
    check(worst <= 3, f"digits: {what}: the overlay of output {j} is off the API's map by {worst:.1f} of 164")


def digits(page, address, work):
    """The digits captioner: a test image uploaded, and one chosen from the examples, its overlay drawn: the
    attention over the pixels that attend predict --svg draws (the API's "pixels"), reddest where it is largest."""
    import base64
    path = os.path.join(work, "digits", "test-0001.pgm")
    page.ask("digits", image=path)
    with open(path, "rb") as f:
        x = explain(address, "digits", base64.b64encode(f.read()).decode())
    page.tab("image")
    check(page.by_id("image").get_attribute("data-j") == "0", "digits: no overlay drawn for the first output")
    check(len(page.css("#token-choice button")) == len(x["target"]), "digits: not one button an output token")
    pixels = x["pixels"]
    for j in (0, 1):
        same_overlay(page, pixels, j, "the model's")
    # this small model's maps hardly differ from one output to the next: a map of one pixel, put in the page's
    # explanation, shows that the overlay is the chosen output's
    pixels["maps"][1] = [1.0 if k == 3 * pixels["width"] + 17 else 0.0 for k in range(len(pixels["maps"][1]))]
    page.driver.execute_script("state.explanation.pixels.maps[1] = arguments[0]", pixels["maps"][1])
    same_overlay(page, pixels, 1, "one pixel's")
    same_overlay(page, pixels, 0, "the model's")
    page.shot("digits-image")
    # the attribution over the pixels, asked for when chosen: each method's row of the API, drawn as the attention is
    check("ρ" not in page.by_id("agreement").text, "digits: attribution shown before it was chosen")
    for method in x["attribution"]["methods"]:
        page.choose("overlay", method["name"])
        page.wait(lambda: page.by_id("image").get_attribute("data-overlay") == method["name"])
        rows = {"height": pixels["height"], "width": pixels["width"], "maps": method["rows"]}
        for j in (0, 1):
            same_overlay(page, rows, j, method["name"])
        mean = sum(method["agreement"]) / len(method["agreement"])
        check(f"{mean:.2f}" in page.by_id("agreement").text, f"digits: the summary lacks {method['name']}'s mean ρ")
    page.choose("overlay", "attention")
    example = choose_example(page, "digits", 1)
    x = explain(address, "digits", example["input"])
    check(page.by_id("output").text == x["output"], "digits: the chosen example's output is not the API's")


def in_browser(browser, address, shots, work):
    """Every check in one browser."""
    global browser_now
    browser_now = browser
    page = Page(address, shots, browser)
    try:
        dates_rnn(page, address)
        examples(page, address)
        luong(page, address)
        longest(page, address)
        transformer(page, address)
        digits(page, address, work)
        errors = page.console_errors()
        check(not errors, f"the console holds errors: {errors}")
    finally:
        page.driver.quit()


def digits_data(attend):
    """The digits file, found by the program's own rule (attend data where); without it the test is skipped."""
    where = subprocess.run([attend, "data", "where", "digits"], capture_output=True, text=True)
    if where.returncode != 0:
        print("explorer: skipped: needs data:", where.stderr.strip().removeprefix("attend: error: "))
        sys.exit(SKIP)
    return where.stdout.strip()


def main(attend, work):
    need_browsers()
    data = digits_data(attend)
    os.makedirs(work, exist_ok=True)
    shots = os.path.join(work, "screenshots")
    models = train(attend, work, data)
    server, address = start_server(attend, models)
    try:
        # Chromium's pictures are the ones docs/explorer.md shows; Firefox's go beside them
        for browser, folder in (("chromium", shots), ("firefox", os.path.join(shots, "firefox"))):
            os.makedirs(folder, exist_ok=True)
            start = time.time()
            in_browser(browser, address, folder, work)
            print(f"explorer: {browser} done in {time.time() - start:.1f} s", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"explorer: {len(failures)} failures; screenshots in {shots}")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
