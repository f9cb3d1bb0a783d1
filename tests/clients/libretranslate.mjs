// The npm package `libretranslate` (1.0.1), a LibreTranslate client as its users call it, against a server:
//   node libretranslate.mjs URL SOURCE TARGET TEXT...
// Prints one JSON line, the translations of the texts in order (the client asks GET /languages, then POST /translate,
// for each). Run by the serve suite (tests/serve/test_libretranslate.cpp); scripts/setup installs the package.
import client from "libretranslate";

const [apiurl, source, target, ...texts] = process.argv.slice(2);
const translations = [];
for (const query of texts) translations.push(await client.translate({ query, source, target, apiurl }));
console.log(JSON.stringify(translations));
