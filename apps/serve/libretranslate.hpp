// LibreTranslate's API, which translation clients speak (browser extensions, apps, the npm `libretranslate` package),
// as LibreTranslate 1.9 defines it: POST /translate, POST /detect, GET /languages, GET /frontend/settings
// (docs/reference/serve.md, "LibreTranslate's API"). A request read from a JSON body or from a form — the query string
// and an application/x-www-form-urlencoded body, the query's field first — and the answers, with LibreTranslate's
// statuses and its error messages word for word. No HTTP here: the server (server.cpp) calls these, and so do the
// tests and the fuzz target.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/model_file.hpp"
#include "apps/serve/api.hpp"

namespace attend::app::serve {

// An ISO 639 language with a two-letter code (generated from Debian's iso-codes by scripts/language_codes.py).
struct LanguageCode {
  const char* three;  // ISO 639-3 ("spa"), or ISO 639-2/B where it differs ("ger")
  const char* two;    // ISO 639-1 ("es")
  const char* name;   // English ("Spanish")
};
const std::vector<LanguageCode>& language_codes();

// A language as the API names it: the two-letter code of a model's language (--source spa: "es"), or the code as the
// model names it when it has none ("cmn"), lower-cased; and its English name (the code when unknown).
struct ApiLanguage {
  std::string code, name;
};
ApiLanguage api_language(const std::string& given);

// A model that translates, as the API sees it: its place among the served models and its two languages.
struct ServedPair {
  std::size_t model;
  ApiLanguage source, target;
};
// The served models that translate between named languages (Task::languages), in the order they are served.
std::vector<ServedPair> served_pairs(const std::vector<const ModelFile*>& files);

struct TranslateRequest {
  std::vector<std::string> q;  // the texts
  bool q_list = false;         // q came as a list: every answer field is a list
  std::string source, target;  // lower-cased; source may be "auto"
  std::string format = "text";
  std::size_t alternatives = 0;
  std::string api_key;  // "" when not given (an API key, when the server wants one: its check is the server's)
};

struct DetectRequest {
  std::vector<std::string> q;
  std::string api_key;
};

// The fields of a multipart/form-data body (RFC 7578), as a browser's FormData sends them — LibreTranslate's own page
// does — in order: each part's name (Content-Disposition: form-data; name="…") and its bytes; a part with a filename
// (a file) is left out. `content_type` is the whole header, whose boundary parameter delimits the parts. Throws
// ApiError 400 naming the problem: no boundary, a body that does not hold it or does not end with its closing
// delimiter, a part without a name. A preamble before the first delimiter and an epilogue after the last are not read.
std::vector<std::pair<std::string, std::string>> multipart_fields(const std::string& content_type,
                                                                  const std::string& body);

// Reads POST /translate's request: `content_type` its Content-Type, `query` what follows '?' in its target, `body` its
// body. A JSON body (application/json) is read alone; fields other than LibreTranslate's are ignored, as it ignores
// them. Throws ApiError 400 with LibreTranslate's message ("Invalid request: missing q parameter", …, "Invalid
// request: request (N) exceeds text limit (M)" for more texts than limits.max_inputs, "Invalid request: alternatives
// parameter must be <= N" beyond limits.max_beam − 1) and attend's for what LibreTranslate does not read (a multipart
// body, a field of the wrong JSON type).
TranslateRequest parse_translate_request(const std::string& content_type, const std::string& query,
                                         const std::string& body, const RequestLimits& limits);
// Reads POST /detect's request likewise.
DetectRequest parse_detect_request(const std::string& content_type, const std::string& query, const std::string& body,
                                   const RequestLimits& limits);

// The API keys of --api-key-file: one a line, spaces around it dropped; empty lines and lines starting with '#' are
// not keys. Throws InputError naming the file when it cannot be read or holds no key.
std::vector<std::string> read_api_keys(const std::string& path);
// Whether a request may go on, as LibreTranslate decides it when keys are required: throws ApiError 400 "Please
// contact the server operator to get an API key" without a key, 403 "Invalid API key" for one not among `keys`
// (compared in a time that does not depend on where they differ). No keys: every request goes on.
void check_api_key(const std::vector<std::string>& keys, const std::string& given);

// The pair a translate request asks for, and the source language found when it asked for "auto".
struct ChosenPair {
  std::size_t pair = 0;   // into the served pairs
  bool detected = false;  // source "auto"
  double confidence = 0;  // of the detection: percent of the texts' tokens the model's source vocabulary holds
};
// Throws ApiError 400 with LibreTranslate's message: "zz is not supported" for a source or target no model has, "xml
// format is not supported" (and html, which attend does not translate), "Spanish (es) is not available as a target
// language from Irish (ga)". Source "auto" takes the model into the target whose source vocabulary holds the most of
// the texts' tokens (the first served of equals).
ChosenPair choose_pair(const TranslateRequest& request, const std::vector<ServedPair>& pairs,
                       const std::vector<const ModelFile*>& files);

// The share of the texts' tokens that `file`'s source vocabulary holds, in percent rounded to a whole number (0 for
// no token, or a text the task cannot read).
double vocabulary_coverage(const ModelFile& file, const std::vector<std::string>& texts);

// POST /translate's answer: translatedText (a string, or a list for a list q), detectedLanguage when the source was
// "auto" (repeated for each text of a list, as LibreTranslate repeats its one detection), alternatives when asked:
// for each text the texts of `others` (the beam's other outputs, best first) that differ from its translation, from
// each other and from "", at most request.alternatives — possibly fewer, as LibreTranslate allows.
nlohmann::ordered_json translate_json(const TranslateRequest& request, const ChosenPair& chosen,
                                      const std::vector<ServedPair>& pairs, const std::vector<std::string>& outputs,
                                      const std::vector<std::vector<std::string>>& others);
// POST /detect's answer: each served source language with the coverage of the texts by its models' vocabularies
// (the best of its models), best first.
nlohmann::ordered_json detect_json(const DetectRequest& request, const std::vector<ServedPair>& pairs,
                                   const std::vector<const ModelFile*>& files);
// GET /languages's answer: every source and target language of the served pairs, each with the targets it
// translates into (sorted by code).
nlohmann::ordered_json languages_json(const std::vector<ServedPair>& pairs);
// GET /frontend/settings's answer: what LibreTranslate's web page reads (no character limit, API keys required when
// `keys` is set, no suggestions, no files; the first served pair's languages, source "auto").
nlohmann::ordered_json frontend_settings_json(const std::vector<ServedPair>& pairs, bool keys);

}  // namespace attend::app::serve
