// A POST of a form as a browser's FormData sends it (multipart/form-data) — LibreTranslate's own page translates so —
// with Node's fetch and FormData (no package):
//   node formdata.mjs URL NAME=VALUE...
// Prints the answer's status and body as one JSON line: {"status": N, "body": the parsed JSON}. Run by the serve suite
// (tests/serve/test_libretranslate.cpp).
const [url, ...pairs] = process.argv.slice(2);
const form = new FormData();
for (const pair of pairs) {
  const equals = pair.indexOf("=");
  form.append(pair.slice(0, equals), pair.slice(equals + 1));
}
const answer = await fetch(url, { method: "POST", body: form });
console.log(JSON.stringify({ status: answer.status, body: await answer.json() }));
