// LibreTranslate's API (apps/serve/libretranslate.hpp): requests read as LibreTranslate reads them — JSON, a form, the
// query string, q a string or a list — with its error messages word for word, the language codes it uses (ISO 639-1
// from a model's ISO 639-3 names), and a real `attend serve` answering POST /translate with `attend serve`'s own
// /v1/predict outputs, finding the source language by the models' vocabularies, POST /detect, GET /languages and GET
// /frontend/settings field by field.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "apps/serve/libretranslate.hpp"
#include "tests/serve/serve_helpers.hpp"

using namespace serve_test;
using nlohmann::json;
namespace lt = attend::app::serve;

namespace {

const lt::RequestLimits limits{4, 3};  // 4 texts, beams of 3: alternatives ≤ 2

lt::TranslateRequest translate_request(const std::string& content_type, const std::string& query,
                                       const std::string& body) {
  return lt::parse_translate_request(content_type, query, body, limits);
}

// Whether `f` throws ApiError with this status and exactly this message.
template <class F>
bool refuses(F f, int status, const std::string& message) {
  try {
    f();
  } catch (const lt::ApiError& e) {
    BOOST_TEST(e.status == status);
    BOOST_TEST(std::string(e.what()) == message);
    return e.status == status && std::string(e.what()) == message;
  }
  BOOST_ERROR("no error; expected " << status << " " << message);
  return false;
}

// Numbers as words in three languages: sentence-pair files of every pair of numbers from 1 to 15, one in each order.
const std::vector<std::string> spanish = {"uno",   "dos",  "tres", "cuatro", "cinco", "seis",    "siete", "ocho",
                                          "nueve", "diez", "once", "doce",   "trece", "catorce", "quince"};
const std::vector<std::string> french = {"un",   "deux", "trois", "quatre", "cinq",   "six",      "sept",  "huit",
                                         "neuf", "dix",  "onze",  "douze",  "treize", "quatorze", "quinze"};
const std::vector<std::string> english = {"one",  "two", "three",  "four",   "five",     "six",      "seven",  "eight",
                                          "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen"};

std::string pairs_file(const std::vector<std::string>& words) {
  std::string text;
  for (std::size_t a = 0; a < words.size(); ++a)
    for (std::size_t b = 0; b < words.size(); ++b)
      text += words[a] + " " + words[b] + " .\t" + english[a] + " " + english[b] + " .\n";
  return text;
}

// Two small translation models, spa → eng and fra → eng, trained once.
struct PairsModels {
  std::string spanish, french;
};
const PairsModels& pairs_models() {
  static Scratch scratch;
  static const PairsModels trained = [] {
    PairsModels m{scratch.path("es-en.safetensors"), scratch.path("fr-en.safetensors")};
    for (const auto& [file, words, model] :
         {std::tuple{"spa-eng.tsv", &spanish, m.spanish}, std::tuple{"fra-eng.tsv", &french, m.french}}) {
      const std::string source = std::string(file).substr(0, 3);
      std::ofstream(scratch.path(file)) << pairs_file(*words);
      const Run run = run_attend("train --task pairs --data '" + scratch.path(file) + "' --source " + source +
                                 " --target eng --min-count 1 --epochs 1 --hidden 8 --embed 4 --valid-size 10 "
                                 "--test-size 10 --out '" +
                                 model + "'");
      BOOST_TEST_REQUIRE(run.status == 0, run.err);
    }
    return m;
  }();
  return trained;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(libretranslate)

BOOST_AUTO_TEST_CASE(languages_are_named_by_their_two_letter_codes) {
  BOOST_TEST(lt::api_language("spa").code == "es");
  BOOST_TEST(lt::api_language("spa").name == "Spanish");
  BOOST_TEST(lt::api_language("ENG").code == "en");
  BOOST_TEST(lt::api_language("ger").code == "de");  // ISO 639-2/B
  BOOST_TEST(lt::api_language("deu").name == "German");
  BOOST_TEST(lt::api_language("es").code == "es");    // a two-letter code as given
  BOOST_TEST(lt::api_language("cmn").code == "cmn");  // none: the code as given
  BOOST_TEST(lt::language_codes().size() > 180u);
}

// JSON, a form body, the query string (its field first); q as a string or a list; LibreTranslate's messages.
BOOST_AUTO_TEST_CASE(translate_requests_are_read_as_libretranslate_reads_them) {
  lt::TranslateRequest r =
      translate_request("application/json; charset=utf-8", "",
                        R"({"q":"Hola","source":"ES","target":"en","apiKey":"x","alternatives":"2"})");
  BOOST_TEST(r.q == std::vector<std::string>{"Hola"});
  BOOST_TEST(!r.q_list);
  BOOST_TEST(r.source == "es");
  BOOST_TEST(r.target == "en");
  BOOST_TEST(r.format == "text");
  BOOST_TEST(r.alternatives == 2u);
  BOOST_TEST(r.api_key == "");  // the npm client's "apiKey" is not LibreTranslate's field
  r = translate_request("application/json", "q=ignored",
                        R"({"q":["a","b"],"source":"auto","target":"en","api_key":"k"})");
  BOOST_TEST(r.q == (std::vector<std::string>{"a", "b"}));
  BOOST_TEST(r.q_list);
  BOOST_TEST(r.api_key == "k");
  r = translate_request("application/x-www-form-urlencoded", "source=fr",
                        "q=Hola+%C3%B1%0D%0Aa%0D%0A&source=es&target=en&format=text");
  BOOST_TEST(r.q == std::vector<std::string>{"Hola ñ\na"});  // CR LF → LF, the last line break dropped
  BOOST_TEST(r.source == "fr");                              // the query's field first
  // a browser's FormData (LibreTranslate's page sends one): parts in any order, a quoted boundary, CR LF in a text, a
  // file's part left out, the query's field first
  const std::string parts =
      "preamble\r\n--AaB03x\r\nContent-Disposition: form-data; name=\"q\"\r\n\r\nuno\r\ndos\r\n\r\n"
      "--AaB03x\r\ncontent-disposition: form-data; name=\"target\"\r\nContent-Type: text/plain\r\n\r\nen\r\n"
      "--AaB03x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nq=no\r\n"
      "--AaB03x\r\nContent-Disposition: form-data; name=\"source\"\r\n\r\nes\r\n"
      "--AaB03x\r\nContent-Disposition: form-data; name=\"alternatives\"\r\n\r\n2\r\n--AaB03x--\r\n";
  const std::string body = parts.substr(parts.find("--AaB03x"));
  BOOST_TEST(lt::multipart_fields("multipart/form-data; boundary=AaB03x", parts) ==
             lt::multipart_fields("multipart/form-data; boundary=AaB03x", body));  // the preamble is not read
  r = translate_request("multipart/form-data; charset=utf-8; boundary=\"AaB03x\"", "source=fr", body);
  BOOST_TEST(r.q == std::vector<std::string>{"uno\ndos"});
  BOOST_TEST(r.source == "fr");
  BOOST_TEST(r.target == "en");
  BOOST_TEST(r.alternatives == 2u);
  BOOST_TEST(lt::multipart_fields("multipart/form-data; boundary=AaB03x", body).size() == 4u);  // not the file
  r = translate_request("", "q=x&source=es&target=en&alternatives=-3", "q=ignored");  // no form type: the query only
  BOOST_TEST(r.q == std::vector<std::string>{"x"});
  BOOST_TEST(r.alternatives == 0u);
}

BOOST_AUTO_TEST_CASE(translate_requests_are_refused_with_libretranslates_messages) {
  const std::string json = "application/json", form = "application/x-www-form-urlencoded";
  const auto t = [](const std::string& type, const std::string& body) {
    return [type, body] { translate_request(type, "", body); };
  };
  BOOST_TEST(refuses(t(json, R"({"source":"es","target":"en"})"), 400, "Invalid request: missing q parameter"));
  BOOST_TEST(refuses(t(json, R"({"q":[],"source":"es","target":"en"})"), 400, "Invalid request: missing q parameter"));
  BOOST_TEST(refuses(t(form, "q=&source=es&target=en"), 400, "Invalid request: missing q parameter"));
  BOOST_TEST(refuses(t(json, R"({"q":"a","target":"en"})"), 400, "Invalid request: missing source parameter"));
  BOOST_TEST(refuses(t(form, "q=a&source=es"), 400, "Invalid request: missing target parameter"));
  BOOST_TEST(refuses(t(form, "q=a&source=es&target=en&alternatives=two"), 400,
                     "Invalid request: alternatives parameter is not a number"));
  BOOST_TEST(refuses(t(json, R"({"q":"a","source":"es","target":"en","alternatives":3})"), 400,
                     "Invalid request: alternatives parameter must be <= 2"));
  BOOST_TEST(refuses(t(json, R"({"q":["a","b","c","d","e"],"source":"es","target":"en"})"), 400,
                     "Invalid request: request (5) exceeds text limit (4)"));
  BOOST_TEST(refuses(t("text/plain", R"({"q":"a","source":"es","target":"en"})"), 400,
                     "Invalid request: missing q parameter"));  // JSON without its type: no form, no q
  BOOST_TEST(refuses(t(json, R"({"q":[1],"source":"es","target":"en"})"), 400, "\"q\" must hold strings, not number"));
  BOOST_TEST(refuses(t(json, R"([1])"), 400, "the body must be a JSON object, not array"));
  BOOST_TEST(refuses(t("multipart/form-data", "--x\r\n"), 400,
                     "a multipart/form-data body needs a boundary of 1 to 70 characters in its Content-Type"));
  const std::string multipart = "multipart/form-data; boundary=x";
  BOOST_TEST(refuses(t(multipart, "x--x"), 400, "the multipart/form-data body does not hold its boundary"));
  BOOST_TEST(refuses(t(multipart, "--x\r\nContent-Disposition: form-data; name=\"q\"\r\n\r\nHola"), 400,
                     "the multipart/form-data body does not end with its closing boundary"));
  BOOST_TEST(refuses(t(multipart, "--x\r\nContent-Type: text/plain\r\n\r\nHola\r\n--x--"), 400,
                     "a part of the multipart/form-data body has no name (Content-Disposition)"));
  BOOST_TEST(
      refuses(t(multipart, "--xy"), 400, "the multipart/form-data body has a boundary not followed by a line end"));
  BOOST_TEST(refuses(t(multipart, "--x\r\nContent-Disposition: form-data; name=q\r\n--x--"), 400,
                     "a part of the multipart/form-data body has no blank line after its headers"));
  BOOST_TEST(refuses(t(multipart, "--x\r\nContent-Disposition: form-data; name=q\r\n\r\n--x--"), 400,
                     "a part of the multipart/form-data body has no blank line after its headers"));
  BOOST_TEST(lt::multipart_fields(multipart, "--x\r\nContent-Disposition: form-data; name=q\r\n\r\n\r\n--x--") ==
             (std::vector<std::pair<std::string, std::string>>{{"q", ""}}));  // an empty value
  BOOST_TEST(refuses([] { lt::parse_detect_request("application/json", "", "{}", limits); }, 400,
                     "Invalid request: missing q parameter"));
}

// Which model a request takes, and LibreTranslate's messages for what none of them translates.
BOOST_AUTO_TEST_CASE(a_translate_request_takes_the_model_of_its_languages) {
  const std::vector<lt::ServedPair> pairs = {{0, lt::api_language("spa"), lt::api_language("eng")},
                                             {1, lt::api_language("eng"), lt::api_language("fra")}};
  const auto choose = [&pairs](const std::string& source, const std::string& target, const std::string& format) {
    lt::TranslateRequest r;
    r.q = {"a"}, r.source = source, r.target = target, r.format = format;
    return lt::choose_pair(r, pairs, {});
  };
  BOOST_TEST(choose("es", "en", "text").pair == 0u);
  BOOST_TEST(choose("en", "fr", "text").pair == 1u);
  BOOST_TEST(!choose("en", "fr", "text").detected);
  BOOST_TEST(refuses([&] { choose("zz", "en", "text"); }, 400, "zz is not supported"));
  BOOST_TEST(refuses([&] { choose("es", "zz", "text"); }, 400, "zz is not supported"));
  BOOST_TEST(refuses([&] { choose("es", "en", "xml"); }, 400, "xml format is not supported"));
  BOOST_TEST(refuses([&] { choose("es", "en", "html"); }, 400,
                     "html format is not supported by attend serve: send format text"));
  BOOST_TEST(refuses([&] { choose("es", "fr", "text"); }, 400,
                     "French (fr) is not available as a target language from Spanish (es)"));
  const json languages = json::parse(lt::languages_json(pairs).dump());
  BOOST_TEST(languages == json::parse(R"([{"code":"es","name":"Spanish","targets":["en"]},
                                          {"code":"en","name":"English","targets":["fr"]},
                                          {"code":"fr","name":"French","targets":[]}])"));
}

// A real server with two models into English: every endpoint, field by field.
BOOST_AUTO_TEST_CASE(a_server_answers_libretranslates_endpoints) {
  const PairsModels& m = pairs_models();
  Server server("--model '" + m.spanish + "' --model '" + m.french + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const auto predicted = [&server](const std::string& model, const std::string& text) {
    const Reply r = post(server.port, json{{"model", model}, {"inputs", {text}}}.dump());
    return r.json()["outputs"][0]["output"].get<std::string>();
  };
  BOOST_TEST(
      get(server.port, "/languages").json() ==
      json::parse(R"([{"code":"es","name":"Spanish","targets":["en"]},{"code":"en","name":"English","targets":[]},
                             {"code":"fr","name":"French","targets":["en"]}])"));
  const json settings = get(server.port, "/frontend/settings").json();
  BOOST_TEST(settings["charLimit"] == -1);
  BOOST_TEST(settings["apiKeys"] == false);
  BOOST_TEST(settings["language"]["source"] == json::parse(R"({"code":"auto","name":"Auto Detect"})"));
  BOOST_TEST(settings["language"]["target"] == json::parse(R"({"code":"en","name":"English"})"));
  // a string q, JSON: the model's own output
  Reply r = post(server.port, R"({"q":"tres siete .","source":"es","target":"en"})", "/translate");
  BOOST_TEST(r.status == 200);
  BOOST_TEST(r.content_type == "application/json");
  BOOST_TEST(r.json() == (json{{"translatedText", predicted("es-en", "tres siete .")}}), r.body);
  // a list q, source auto: French found by its vocabulary, the detection repeated for each text
  r = post(server.port, R"({"q":["deux trois .","dix ."],"source":"auto","target":"en"})", "/translate");
  const json detected = {{"confidence", 100.0}, {"language", "fr"}};
  BOOST_TEST(r.json() == (json{{"translatedText", {predicted("fr-en", "deux trois ."), predicted("fr-en", "dix .")}},
                               {"detectedLanguage", {detected, detected}}}),
             r.body);
  // alternatives: a beam of one more, whose best is the translation (/v1/predict's with that beam), and for each text
  // at most that many other outputs, none the translation, none twice
  const std::vector<std::string> texts = {"tres siete .", "uno .", "quince quince ."};
  r = post(server.port, json{{"q", texts}, {"source", "es"}, {"target", "en"}, {"alternatives", 2}}.dump(),
           "/translate");
  const json beam3 = post(server.port, json{{"model", "es-en"}, {"inputs", texts}, {"beam", 3}}.dump()).json();
  const json answer = r.json();
  BOOST_TEST_REQUIRE(answer["alternatives"].size() == texts.size(), r.body);
  std::size_t alternatives = 0;
  for (std::size_t k = 0; k < texts.size(); ++k) {
    const std::string translation = answer["translatedText"][k];
    BOOST_TEST(translation == beam3["outputs"][k]["output"].get<std::string>());
    const std::vector<std::string> others = answer["alternatives"][k];
    BOOST_TEST(others.size() <= 2u);
    for (std::size_t a = 0; a < others.size(); ++a) {
      BOOST_TEST(others[a] != translation);
      BOOST_TEST(!others[a].empty());
      for (std::size_t b = 0; b < a; ++b) BOOST_TEST(others[a] != others[b]);
    }
    alternatives += others.size();
  }
  BOOST_TEST(alternatives > 0u, r.body);  // (the checks above can fail)
  r = post(server.port, R"({"q":"uno .","source":"es","target":"en","alternatives":1})", "/translate");
  BOOST_TEST(r.json()["alternatives"].is_array(), r.body);  // a list for a string q
  // a form, the query string
  r = request(server.port, http::verb::post, "/translate?target=en", "q=uno+dos+.&source=es",
              "application/x-www-form-urlencoded");
  BOOST_TEST(r.json() == (json{{"translatedText", predicted("es-en", "uno dos .")}}), r.body);
  r = request(server.port, http::verb::post, "/detect", "q=uno+dos+xyz+.", "application/x-www-form-urlencoded");
  BOOST_TEST(r.json() == json::parse(R"([{"confidence":75.0,"language":"es"},{"confidence":25.0,"language":"fr"}])"),
             r.body);
  // errors: LibreTranslate's statuses and bodies
  r = post(server.port, R"({"q":"uno","source":"es","target":"fr"})", "/translate");
  BOOST_TEST(r.status == 400);
  BOOST_TEST(r.json() == json::parse(R"({"error":"fr is not supported"})"));
  r = post(server.port, R"({"q":"uno","source":"fr","target":"es"})", "/translate");
  BOOST_TEST(r.json() == json::parse(R"({"error":"es is not supported"})"));
  BOOST_TEST(get(server.port, "/translate").status == 405);
  BOOST_TEST(post(server.port, "{}", "/languages").status == 405);
}

// A real LibreTranslate client, the npm package `libretranslate`, translating with an attend model as it would with
// LibreTranslate: it lists the languages, checks its codes against them, and posts JSON; its translations are the
// model's own (/v1/predict's), a named source and "auto" alike.
BOOST_AUTO_TEST_CASE(the_npm_libretranslate_client_translates_with_attend,
                     *boost::unit_test::precondition(NodeClient{"libretranslate"})) {
  const PairsModels& m = pairs_models();
  Server server("--model '" + m.spanish + "' --model '" + m.french + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port);
  const std::vector<std::string> spanish_texts = {"uno dos .", "catorce tres ."}, french_texts = {"huit un ."};
  json want = json::array();
  for (const std::string& text : spanish_texts)
    want.push_back(
        post(server.port, json{{"model", "es-en"}, {"inputs", {text}}}.dump()).json()["outputs"][0]["output"]);
  const auto client = [&](const std::string& source, const std::vector<std::string>& texts) {
    std::string args = "'" + clients + "/libretranslate.mjs' " + url + " " + source + " en";
    for (const std::string& text : texts) args += " '" + text + "'";
    const Run run = run_attend(args, "", "node");
    BOOST_TEST(run.status == 0, run.err);
    return json::parse(run.out, nullptr, false);
  };
  BOOST_TEST(client("es", spanish_texts) == want);
  BOOST_TEST(client("auto", spanish_texts) == want);
  const json french = post(server.port, json{{"model", "fr-en"}, {"inputs", french_texts}}.dump()).json();
  BOOST_TEST(client("auto", french_texts) == json::array({french["outputs"][0]["output"]}));
  const Run unknown = run_attend("'" + clients + "/libretranslate.mjs' " + url + " de en 'eins .'", "", "node");
  BOOST_TEST(unknown.status != 0);  // the client refuses a code /languages does not list
  BOOST_TEST(unknown.err.find("This language was not found") != std::string::npos, unknown.err);
  // as LibreTranslate's page asks: a FormData (multipart/form-data), Node's as a browser's
  const Run form = run_attend("'" + clients + "/formdata.mjs' " + url + "/translate 'q=" + spanish_texts[0] +
                                  "' source=es target=en format=text",
                              "", "node");
  BOOST_TEST(form.status == 0, form.err);
  const json answered = json::parse(form.out, nullptr, false);
  BOOST_TEST(answered["status"] == 200, form.out);
  BOOST_TEST(answered["body"]["translatedText"] == want[0], form.out);
}

// --api-key-file: LibreTranslate's endpoints answer as LibreTranslate does when keys are required; the others ask none.
BOOST_AUTO_TEST_CASE(api_keys_are_asked_as_libretranslate_asks_them) {
  const Scratch scratch;
  std::ofstream(scratch.path("keys")) << "# the keys\n  first-key \n\nsecond-key\n";
  Server server("--model '" + pairs_models().spanish + "' --api-key-file '" + scratch.path("keys") + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const std::string form = "application/x-www-form-urlencoded";
  Reply r = request(server.port, http::verb::post, "/translate", "q=uno+.&source=es&target=en", form);
  BOOST_TEST(r.status == 400);
  BOOST_TEST(r.json() == json::parse(R"({"error":"Please contact the server operator to get an API key"})"));
  r = request(server.port, http::verb::post, "/translate", "q=uno+.&source=es&target=en&api_key=first", form);
  BOOST_TEST(r.status == 403);
  BOOST_TEST(r.json() == json::parse(R"({"error":"Invalid API key"})"));
  r = post(server.port, R"({"q":"uno .","source":"es","target":"en","apiKey":"first-key"})", "/translate");
  BOOST_TEST(r.status == 400);  // the npm client's field is not the key
  r = request(server.port, http::verb::post, "/translate", "q=uno+.&source=es&target=en&api_key=first-key", form);
  BOOST_TEST(r.status == 200, r.body);
  r = post(server.port, R"({"q":"uno .","api_key":"second-key"})", "/detect");
  BOOST_TEST(r.status == 200, r.body);
  r = post(server.port, R"({"q":"uno ."})", "/detect");
  BOOST_TEST(r.status == 400);
  BOOST_TEST(get(server.port, "/languages").status == 200);
  BOOST_TEST(get(server.port, "/frontend/settings").json()["keyRequired"] == true);
  BOOST_TEST(post(server.port, R"({"inputs":["uno ."]})").status == 200);  // attend's own API asks no key
  std::ofstream(scratch.path("empty")) << "# none\n\n";
  Run run = run_attend("serve --port 0 --model '" + pairs_models().spanish + "' --api-key-file '" +
                       scratch.path("empty") + "'");
  BOOST_TEST(run.status == 2);
  BOOST_TEST(run.err.find("--api-key-file " + scratch.path("empty") + ": no API key in it") != std::string::npos,
             run.err);
  run = run_attend("serve --port 0 --model '" + pairs_models().spanish + "' --cors-origin example.org");
  BOOST_TEST(run.status == 2);
  BOOST_TEST(run.err.find("--cors-origin example.org: an origin is a scheme and a host") != std::string::npos, run.err);
}

// --cors-origin: the origins named get CORS headers on every answer and on a preflight; others, and every origin of
// a server without the flag, get none.
BOOST_AUTO_TEST_CASE(cors_headers_go_to_the_origins_named_only) {
  Server open("--model '" + pairs_models().spanish + "'");
  Server cors("--model '" + pairs_models().spanish +
              "' --cors-origin https://a.example --cors-origin http://b.example:81");
  BOOST_TEST_REQUIRE((open.port != 0 && cors.port != 0), open.log() + cors.log());
  const auto from = [](const std::string& origin) {
    return std::vector<std::pair<std::string, std::string>>{{"Origin", origin},
                                                            {"Access-Control-Request-Method", "POST"}};
  };
  Reply r = request(cors.port, http::verb::options, "/translate", "", "", from("https://a.example"));
  BOOST_TEST(r.status == 204);
  BOOST_TEST(r.headers["Access-Control-Allow-Origin"] == "https://a.example");
  BOOST_TEST(r.headers["Access-Control-Allow-Methods"] == "POST, OPTIONS");
  BOOST_TEST(r.headers["Access-Control-Allow-Headers"] == "Authorization, Content-Type");
  BOOST_TEST(r.headers["Vary"] == "Origin");
  BOOST_TEST(r.headers.count("Content-Length") == 0u);
  r = request(cors.port, http::verb::get, "/languages", "", "", from("http://b.example:81"));
  BOOST_TEST(r.status == 200);
  BOOST_TEST(r.headers["Access-Control-Allow-Origin"] == "http://b.example:81");
  BOOST_TEST(r.headers.count("Access-Control-Allow-Methods") == 0u);  // only a preflight's
  r = request(cors.port, http::verb::post, "/translate", R"({"q":"x","source":"es"})", "application/json",
              from("https://a.example"));
  BOOST_TEST(r.status == 400);  // an error answer carries it too, so that the page can read the error
  BOOST_TEST(r.headers["Access-Control-Allow-Origin"] == "https://a.example");
  for (const unsigned short port : {cors.port, open.port}) {
    r = request(port, http::verb::options, "/languages", "", "",
                from(port == open.port ? "https://a.example" : "https://c.example"));
    BOOST_TEST(r.status == 204);
    BOOST_TEST(r.headers["Allow"] == "GET, OPTIONS");
    BOOST_TEST(r.headers.count("Access-Control-Allow-Origin") == 0u);
  }
}

BOOST_AUTO_TEST_SUITE_END()
