// LibreTranslate's API (libretranslate.hpp). The messages in quotes are LibreTranslate 1.9's, word for word
// (libretranslate/app.py), so that a client written against it reads attend's answers as its own.
#include "apps/serve/libretranslate.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>

namespace attend::app::serve {

namespace {

using Json = nlohmann::json;

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The value of parameter `name` of a header's value ("multipart/form-data; boundary=\"x\"" → x), quotes removed;
// "" when absent.
std::string header_parameter(const std::string& header, const std::string& name) {
  for (std::size_t at = header.find(';'); at != std::string::npos; at = header.find(';', at + 1)) {
    std::size_t begin = header.find_first_not_of(' ', at + 1);
    if (begin == std::string::npos) return "";
    const std::size_t equals = header.find('=', begin);
    if (equals == std::string::npos || lower(header.substr(begin, equals - begin)) != name) continue;
    begin = equals + 1;
    if (begin < header.size() && header[begin] == '"') {
      const std::size_t close = header.find('"', begin + 1);
      return close == std::string::npos ? "" : header.substr(begin + 1, close - begin - 1);
    }
    const std::size_t end = header.find_first_of("; ", begin);
    return header.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  }
  return "";
}

// One part's name from its headers (Content-Disposition: form-data; name="q"), "" for a file's part (it has a
// filename), nullopt when it has no name.
std::optional<std::string> part_name(const std::string& headers) {
  for (std::size_t at = 0; at < headers.size();) {
    const std::size_t end = std::min(headers.find("\r\n", at), headers.size());
    const std::string line = headers.substr(at, end - at);
    at = end + 2;
    if (lower(line.substr(0, 20)) != "content-disposition:") continue;
    if (!header_parameter(line, "filename").empty()) return "";
    const std::string name = header_parameter(line, "name");
    if (!name.empty()) return name;
  }
  return std::nullopt;
}

// What LibreTranslate reads of a request, as strings (q also as a list): from a JSON body, or from the query and the
// form body (the query's field first, as Werkzeug's request.values gives it).
struct Fields {
  std::map<std::string, std::string> text;
  std::vector<std::string> q_list;
  bool q_is_list = false;
};

// A JSON field LibreTranslate reads as a string (null: absent; a number as its text, as Python's str() would not be
// asked: LibreTranslate reads alternatives with int(), which takes 3 and "3").
void json_field(Fields& fields, const std::string& key, const Json& value) {
  if (value.is_null()) return;
  if (value.is_string()) {
    fields.text[key] = value.get<std::string>();
  } else if (value.is_number_integer()) {
    fields.text[key] = value.dump();
  } else {
    throw ApiError(400, "\"" + key + "\" must be a string, not " + value.type_name());
  }
}

Fields json_fields(const std::string& body) {
  const Json json = request_object(body);
  Fields fields;
  for (const auto& [key, value] : json.items()) {
    if (key == "q" && value.is_array()) {
      for (const Json& text : value) {
        if (!text.is_string()) throw ApiError(400, std::string("\"q\" must hold strings, not ") + text.type_name());
        fields.q_list.push_back(text.get<std::string>());
      }
      fields.q_is_list = true;
      if (!fields.q_list.empty()) fields.text["q"] = fields.q_list.front();
    } else if (key == "q" || key == "source" || key == "target" || key == "format" || key == "alternatives" ||
               key == "api_key") {
      json_field(fields, key, value);
    }  // any other field is ignored, as LibreTranslate ignores it (the npm client sends "apiKey")
  }
  return fields;
}

Fields read_fields(const std::string& content_type, const std::string& query, const std::string& body) {
  const std::string type = lower(content_type.substr(0, content_type.find(';')));
  const auto trimmed = [](std::string t) {
    while (!t.empty() && t.back() == ' ') t.pop_back();
    return t;
  };
  if (trimmed(type) == "application/json" ||
      (type.rfind("application/", 0) == 0 && type.find("+json") != std::string::npos))
    return json_fields(body);
  Fields fields;
  for (auto& [name, value] : form_fields(query)) fields.text.try_emplace(name, std::move(value));  // the query first
  if (trimmed(type) == "application/x-www-form-urlencoded") {
    for (auto& [name, value] : form_fields(body)) fields.text.try_emplace(name, std::move(value));
  } else if (trimmed(type) == "multipart/form-data") {
    for (auto& [name, value] : multipart_fields(content_type, body)) fields.text.try_emplace(name, std::move(value));
  }
  if (const auto q = fields.text.find("q"); q != fields.text.end()) {
    std::string normalised;  // LibreTranslate joins a form's lines with "\n" (CR LF and CR become LF)
    for (std::size_t at = 0; at < q->second.size(); ++at) {
      if (q->second[at] == '\r') {
        normalised += '\n';
        if (at + 1 < q->second.size() && q->second[at + 1] == '\n') ++at;
      } else {
        normalised += q->second[at];
      }
    }
    while (!normalised.empty() && normalised.back() == '\n') normalised.pop_back();
    q->second = normalised;
  }
  return fields;
}

std::string field(const Fields& fields, const char* name) {
  const auto found = fields.text.find(name);
  return found == fields.text.end() ? "" : found->second;
}

std::vector<std::string> texts_of(const Fields& fields) {
  if (fields.q_is_list) return fields.q_list;
  const std::string q = field(fields, "q");
  return q.empty() ? std::vector<std::string>{} : std::vector<std::string>{q};
}

// "Invalid request: request (N) exceeds text limit (M)" beyond limits.max_inputs texts.
void check_count(std::size_t count, const RequestLimits& limits) {
  if (count > limits.max_inputs) {
    throw ApiError(400, "Invalid request: request (" + std::to_string(count) + ") exceeds text limit (" +
                            std::to_string(limits.max_inputs) + ")");
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> multipart_fields(const std::string& content_type,
                                                                  const std::string& body) {
  const std::string boundary = header_parameter(content_type, "boundary");
  if (boundary.empty() || boundary.size() > 70)  // RFC 2046: 1 to 70 characters
    throw ApiError(400, "a multipart/form-data body needs a boundary of 1 to 70 characters in its Content-Type");
  const std::string delimiter = "--" + boundary;
  // the first delimiter begins the body or a line (a preamble before it is not read, nor an epilogue after the last)
  std::size_t at = body.compare(0, delimiter.size(), delimiter) == 0 ? 0 : body.find("\r\n" + delimiter);
  if (at == std::string::npos) throw ApiError(400, "the multipart/form-data body does not hold its boundary");
  at += (at == 0 ? 0 : 2) + delimiter.size();
  std::vector<std::pair<std::string, std::string>> fields;
  for (;;) {
    if (body.compare(at, 2, "--") == 0) return fields;  // the closing delimiter
    if (body.compare(at, 2, "\r\n") != 0)
      throw ApiError(400, "the multipart/form-data body has a boundary not followed by a line end");
    const std::size_t headers_end = body.find("\r\n\r\n", at + 2);
    const std::size_t next = body.find("\r\n" + delimiter, at + 2);
    if (next == std::string::npos)
      throw ApiError(400, "the multipart/form-data body does not end with its closing boundary");
    if (headers_end == std::string::npos || headers_end + 4 > next)  // the blank line before the part's delimiter
      throw ApiError(400, "a part of the multipart/form-data body has no blank line after its headers");
    const std::optional<std::string> name = part_name(body.substr(at + 2, headers_end - at - 2));
    if (!name) throw ApiError(400, "a part of the multipart/form-data body has no name (Content-Disposition)");
    if (!name->empty()) fields.emplace_back(*name, body.substr(headers_end + 4, next - headers_end - 4));
    at = next + 2 + delimiter.size();
  }
}

ApiLanguage api_language(const std::string& given) {
  const std::string code = lower(given);
  for (const LanguageCode& language : language_codes()) {
    if (code == language.three || code == language.two) return {language.two, language.name};
  }
  return {code, code};
}

std::vector<ServedPair> served_pairs(const std::vector<const ModelFile*>& files) {
  std::vector<ServedPair> pairs;
  for (std::size_t m = 0; m < files.size(); ++m) {
    const auto [source, target] = files[m]->task->languages();
    if (!source.empty()) pairs.push_back({m, api_language(source), api_language(target)});
  }
  return pairs;
}

TranslateRequest parse_translate_request(const std::string& content_type, const std::string& query,
                                         const std::string& body, const RequestLimits& limits) {
  const Fields fields = read_fields(content_type, query, body);
  TranslateRequest request;
  request.q = texts_of(fields);
  request.q_list = fields.q_is_list;
  request.source = lower(field(fields, "source"));
  request.target = lower(field(fields, "target"));
  request.api_key = field(fields, "api_key");
  if (request.q.empty()) throw ApiError(400, "Invalid request: missing q parameter");
  if (request.source.empty()) throw ApiError(400, "Invalid request: missing source parameter");
  if (request.target.empty()) throw ApiError(400, "Invalid request: missing target parameter");
  if (const std::string format = field(fields, "format"); !format.empty()) request.format = format;
  const std::string alternatives = field(fields, "alternatives");
  if (!alternatives.empty()) {
    long long n = 0;
    const auto [end, error] = std::from_chars(alternatives.data(), alternatives.data() + alternatives.size(), n);
    if (error != std::errc() || end != alternatives.data() + alternatives.size())
      throw ApiError(400, "Invalid request: alternatives parameter is not a number");
    request.alternatives = n < 0 ? 0 : static_cast<std::size_t>(n);
  }
  if (request.alternatives > limits.max_beam - 1) {
    throw ApiError(400, "Invalid request: alternatives parameter must be <= " + std::to_string(limits.max_beam - 1));
  }
  check_count(request.q.size(), limits);
  return request;
}

DetectRequest parse_detect_request(const std::string& content_type, const std::string& query, const std::string& body,
                                   const RequestLimits& limits) {
  const Fields fields = read_fields(content_type, query, body);
  DetectRequest request;
  request.q = texts_of(fields);
  request.api_key = field(fields, "api_key");
  if (request.q.empty()) throw ApiError(400, "Invalid request: missing q parameter");
  check_count(request.q.size(), limits);
  return request;
}

std::vector<std::string> read_api_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("--api-key-file " + path + ": cannot be read");
  std::vector<std::string> keys;
  for (std::string line; std::getline(in, line);) {
    const std::size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    keys.push_back(line.substr(first, last - first + 1));
  }
  if (in.bad()) throw InputError("--api-key-file " + path + ": cannot be read");
  if (keys.empty()) throw InputError("--api-key-file " + path + ": no API key in it (one a line)");
  return keys;
}

void check_api_key(const std::vector<std::string>& keys, const std::string& given) {
  if (keys.empty()) return;
  if (given.empty()) throw ApiError(400, "Please contact the server operator to get an API key");
  bool found = false;
  for (const std::string& key : keys) {
    // every byte of the longer compared, so that the time says nothing of where a guess goes wrong
    unsigned char differ = key.size() == given.size() ? 0 : 1;
    const std::size_t n = std::max(key.size(), given.size());
    for (std::size_t i = 0; i < n; ++i) {
      differ |= static_cast<unsigned char>((i < key.size() ? key[i] : 0) ^ (i < given.size() ? given[i] : 0));
    }
    found = found || differ == 0;
  }
  if (!found) throw ApiError(403, "Invalid API key");
}

double vocabulary_coverage(const ModelFile& file, const std::vector<std::string>& texts) {
  std::size_t known = 0, tokens = 0;
  for (const std::string& text : texts) {
    try {
      for (const std::string& token : file.task->source_tokens(text)) {
        ++tokens;
        known += file.source_vocabulary.contains(token) ? 1 : 0;
      }
    } catch (const std::exception&) {  // a text the task cannot read: no token of it is known
    }
  }
  return tokens == 0 ? 0.0 : std::round(100.0 * static_cast<double>(known) / static_cast<double>(tokens));
}

ChosenPair choose_pair(const TranslateRequest& request, const std::vector<ServedPair>& pairs,
                       const std::vector<const ModelFile*>& files) {
  const auto has = [&pairs](const std::string& code, bool source) {
    return std::any_of(pairs.begin(), pairs.end(),
                       [&](const ServedPair& p) { return (source ? p.source.code : p.target.code) == code; });
  };
  if (request.source != "auto" && !has(request.source, true)) throw ApiError(400, request.source + " is not supported");
  if (!has(request.target, false)) throw ApiError(400, request.target + " is not supported");
  if (request.format != "text") {
    throw ApiError(400, request.format == "html" ? "html format is not supported by attend serve: send format text"
                                                 : request.format + " format is not supported");
  }
  ChosenPair chosen;
  chosen.detected = request.source == "auto";
  bool found = false;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const ServedPair& p = pairs[k];
    if (p.target.code != request.target || (!chosen.detected && p.source.code != request.source)) continue;
    const double coverage = chosen.detected ? vocabulary_coverage(*files[p.model], request.q) : 100.0;
    if (!found || coverage > chosen.confidence) chosen.pair = k, chosen.confidence = coverage, found = true;
  }
  if (!found) {
    const ApiLanguage source = api_language(request.source), target = api_language(request.target);
    throw ApiError(400, target.name + " (" + target.code + ") is not available as a target language from " +
                            source.name + " (" + source.code + ")");
  }
  return chosen;
}

nlohmann::ordered_json translate_json(const TranslateRequest& request, const ChosenPair& chosen,
                                      const std::vector<ServedPair>& pairs, const std::vector<std::string>& outputs,
                                      const std::vector<std::vector<std::string>>& others) {
  std::vector<std::vector<std::string>> alternatives(outputs.size());
  for (std::size_t k = 0; k < outputs.size() && k < others.size(); ++k) {
    for (const std::string& text : others[k]) {  // as LibreTranslate's filter_unique
      std::vector<std::string>& kept = alternatives[k];
      if (kept.size() < request.alternatives && !text.empty() && text != outputs[k] &&
          std::find(kept.begin(), kept.end(), text) == kept.end())
        kept.push_back(text);
    }
  }
  nlohmann::ordered_json answer;
  const nlohmann::ordered_json detected = {{"confidence", chosen.confidence},
                                           {"language", pairs[chosen.pair].source.code}};
  if (request.q_list) {
    answer["translatedText"] = outputs;
    if (chosen.detected) answer["detectedLanguage"] = std::vector<nlohmann::ordered_json>(outputs.size(), detected);
    if (request.alternatives > 0) answer["alternatives"] = alternatives;
  } else {
    answer["translatedText"] = outputs.front();
    if (chosen.detected) answer["detectedLanguage"] = detected;
    if (request.alternatives > 0) answer["alternatives"] = alternatives.front();
  }
  return answer;
}

nlohmann::ordered_json detect_json(const DetectRequest& request, const std::vector<ServedPair>& pairs,
                                   const std::vector<const ModelFile*>& files) {
  std::map<std::string, double> best;  // by source language
  for (const ServedPair& p : pairs) {
    const double coverage = vocabulary_coverage(*files[p.model], request.q);
    const auto [at, added] = best.emplace(p.source.code, coverage);
    if (!added) at->second = std::max(at->second, coverage);
  }
  std::vector<std::pair<std::string, double>> ranked(best.begin(), best.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  nlohmann::ordered_json answer = nlohmann::ordered_json::array();
  for (const auto& [code, confidence] : ranked) answer.push_back({{"confidence", confidence}, {"language", code}});
  return answer;
}

nlohmann::ordered_json languages_json(const std::vector<ServedPair>& pairs) {
  std::vector<ApiLanguage> languages;  // in the order the pairs name them
  std::map<std::string, std::set<std::string>> targets;
  for (const ServedPair& p : pairs) {
    for (const ApiLanguage* l : {&p.source, &p.target}) {
      if (targets.count(l->code) == 0) languages.push_back(*l), targets[l->code];
    }
    targets[p.source.code].insert(p.target.code);
  }
  nlohmann::ordered_json answer = nlohmann::ordered_json::array();
  for (const ApiLanguage& l : languages) {
    answer.push_back({{"code", l.code}, {"name", l.name}, {"targets", targets[l.code]}});
  }
  return answer;
}

nlohmann::ordered_json frontend_settings_json(const std::vector<ServedPair>& pairs, bool keys) {
  nlohmann::ordered_json target = {{"code", ""}, {"name", ""}};
  if (!pairs.empty()) target = {{"code", pairs.front().target.code}, {"name", pairs.front().target.name}};
  return {{"charLimit", -1},
          {"frontendTimeout", 500},
          {"apiKeys", keys},
          {"keyRequired", keys},
          {"suggestions", false},
          {"filesTranslation", false},
          {"supportedFilesFormat", nlohmann::ordered_json::array()},
          {"language", {{"source", {{"code", "auto"}, {"name", "Auto Detect"}}}, {"target", target}}}};
}

}  // namespace attend::app::serve
