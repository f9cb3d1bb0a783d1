// The npm package `eventsource` (4.1.1), browsers' EventSource for Node, reading one of attend serve's streams:
//   node eventsource.mjs URL BODY
// An EventSource only sends GET; the package's `fetch` option lets a client POST BODY (JSON) instead, as its
// documentation shows. Collects the events until "done" or "error", then closes (an EventSource would reconnect, and
// post again), and prints one JSON line: {"tokens": [each token event's data], "done": its data or null, "error": the
// server's error event's data or null, "failed": {"code", "message"} when the connection failed (a refusal's status)
// or null}. Run by the serve suite (tests/serve/test_stream.cpp); scripts/setup installs the package.
import { EventSource } from "eventsource";

const [url, body] = process.argv.slice(2);
const result = { tokens: [], done: null, error: null, failed: null };
const source = new EventSource(url, {
  fetch: (input, init) =>
    fetch(input, { ...init, method: "POST", headers: { ...init.headers, "Content-Type": "application/json" }, body }),
});
const end = () => {
  source.close();
  console.log(JSON.stringify(result));
};
source.addEventListener("token", (e) => result.tokens.push(JSON.parse(e.data)));
source.addEventListener("done", (e) => {
  result.done = JSON.parse(e.data);
  end();
});
// the server's "error" event and the client's own failures share the name: the server's has data
source.addEventListener("error", (e) => {
  if (typeof e.data === "string") {
    result.error = JSON.parse(e.data);
  } else {
    result.failed = { code: e.code ?? null, message: e.message ?? null };
  }
  end();
});
