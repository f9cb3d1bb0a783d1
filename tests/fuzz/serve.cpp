// Fuzz target `serve`: what attend serve reads of a request's body before any model sees it (apps/serve/api.hpp:
// parse_predict_request, parse_explain_request, parse_examples_query, decode_base64, error_body), on arbitrary bytes,
// checked against what the header promises. A finding is a crash, hang, leak, sanitizer report or unexpected exception,
// and any of these broken promises:
//   - a body is either read or refused with an ApiError of status 400 or 413 — nothing else escapes;
//   - a request read is a JSON object of the known fields only, with 1 to max_inputs inputs, each valid UTF-8 (the
//     oracle: utf8proc), a beam from 1 to max_beam, and one input when it streams; a refused one names a problem,
//     and its answer (error_body) is one line of JSON holding a string "error";
//   - an explain request read is an object of model, input (valid UTF-8), beam (1 to max_beam), attribution, steps (1
//     to max_attribution_steps) and precision (empty, or a precision this process can run) only;
//   - the same bytes read as GET /v1/examples's query (parse_examples_query) are read or refused with a 400 — a count
//     read is from 1 to max_examples, and a query without escapes ('%', '+') gives as model the text after "model="
//     up to the next '&' (the oracle: a plain split);
//   - the same bytes read twice give the same request (no hidden state);
//   - LibreTranslate's POST /translate and /detect (apps/serve/libretranslate.hpp), the bytes read as a JSON body, as
//     a form body and as a multipart/form-data body of boundary "x" (the first half also as the query): read or refused
//     with a 400; a request read has 1 to max_inputs texts, a source and a target that are not empty and have no
//     upper-case ASCII letter, and at most max_beam − 1 alternatives; a JSON q list is a list; the same bytes read
//     twice give the same request;
//   - base64: decode_base64 refuses a text or decodes it to 3 bytes a group of 4 characters (less the padding),
//     and what it decodes, encoded again (encode_base64), decodes to the same bytes.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "apps/serve/api.hpp"
#include "apps/serve/libretranslate.hpp"
#include "precision/precision.hpp"
#include "tests/fuzz/fuzz.hpp"

using attend::fuzz::check;
using attend::fuzz::printable;
using namespace attend::app::serve;

namespace {

void check_read(const std::string& body, const PredictRequest& r, const RequestLimits& limits) {
  check(!r.inputs.empty() && r.inputs.size() <= limits.max_inputs, "inputs out of the limits: " + printable(body));
  check(r.beam >= 1 && r.beam <= limits.max_beam, "beam out of the limits: " + printable(body));
  for (const std::string& input : r.inputs)
    check(attend::fuzz::utf8proc_characters(input).has_value(), "an input that is not UTF-8: " + printable(body));
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, false);
  check(json.is_object(), "a request read from what is not a JSON object: " + printable(body));
  for (const auto& [key, value] : json.items()) {
    check(
        key == "model" || key == "inputs" || key == "beam" || key == "scores" || key == "attention" || key == "stream",
        "an unknown field let through: " + printable(body));
  }
  check(!r.stream || r.inputs.size() == 1, "a stream of several inputs let through: " + printable(body));
  const PredictRequest again = parse_predict_request(body, limits);
  check(again.inputs == r.inputs && again.model == r.model && again.beam == r.beam && again.scores == r.scores &&
            again.attention == r.attention && again.stream == r.stream,
        "the same body read twice differs: " + printable(body));
}

void check_explain(const std::string& body, const ExplainRequest& r, const RequestLimits& limits) {
  check(r.beam >= 1 && r.beam <= limits.max_beam, "beam out of the limits: " + printable(body));
  check(r.steps >= 1 && r.steps <= limits.max_attribution_steps, "steps out of the limits: " + printable(body));
  check(attend::fuzz::utf8proc_characters(r.input).has_value(), "an input that is not UTF-8: " + printable(body));
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, false);
  check(json.is_object() && json.contains("input"), "an explain request without an input read: " + printable(body));
  for (const auto& [key, value] : json.items()) {
    check(key == "model" || key == "input" || key == "beam" || key == "attribution" || key == "steps" ||
              key == "precision",
          "an unknown field let through: " + printable(body));
  }
  const attend::PrecisionBackend* precision = attend::find_precision(r.precision);
  check(r.precision.empty() || (precision != nullptr && precision->unavailable().empty()),
        "a precision this process cannot run let through: " + printable(body));
  const ExplainRequest again = parse_explain_request(body, limits);
  check(again.input == r.input && again.model == r.model && again.beam == r.beam &&
            again.attribution == r.attribution && again.steps == r.steps && again.precision == r.precision,
        "the same body read twice differs: " + printable(body));
}

void check_query(const std::string& query, const ExamplesRequest& r) {
  check(r.count >= 1 && r.count <= max_examples, "count out of its range: " + printable(query));
  if (query.find_first_of("%+") == std::string::npos) {
    std::string model;
    for (std::size_t at = 0; at <= query.size();) {
      const std::size_t end = std::min(query.find('&', at), query.size());
      if (query.compare(at, 6, "model=") == 0 && end >= at + 6) model = query.substr(at + 6, end - at - 6);
      at = end + 1;
    }
    check(r.model == model, "the model read is not the text after model=: " + printable(query));
  }
  const ExamplesRequest again = parse_examples_query(query);
  check(again.model == r.model && again.count == r.count, "the same query read twice differs: " + printable(query));
}

void check_refusal(const std::string& body, const ApiError& e) {
  check(e.status == 400 || e.status == 413, "status " + std::to_string(e.status) + " for " + printable(body));
  check(*e.what() != '\0', "an empty message for " + printable(body));
  const std::string answer = error_body(e.what());
  check(!answer.empty() && answer.back() == '\n' && answer.find('\n') == answer.size() - 1,
        "an answer that is not one line for " + printable(body));
  const nlohmann::json json = nlohmann::json::parse(answer, nullptr, false);
  check(json.is_object() && json.contains("error") && json["error"].is_string(),
        "an answer that is not {\"error\": text} for " + printable(body));
}

void check_base64(const std::string& text) {
  std::string bytes;
  try {
    bytes = decode_base64(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  const std::size_t padding =
      text.empty() ? 0 : (text.back() == '=') + (text.size() > 1 && text[text.size() - 2] == '=');
  check(bytes.size() == text.size() / 4 * 3 - padding, "decoded to the wrong length: " + printable(text));
  check(decode_base64(encode_base64(bytes)) == bytes, "decoded bytes do not survive encoding: " + printable(text));
}

bool has_upper(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

// The bytes as POST /translate's and /detect's requests, of each content type.
void check_libretranslate(const std::string& body, const RequestLimits& limits) {
  const std::string query = body.substr(0, body.size() / 2);
  for (const char* type :
       {"application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}) {
    const bool json = type[12] == 'j';
    try {
      const TranslateRequest r = parse_translate_request(type, json ? "" : query, body, limits);
      check(!r.q.empty() && r.q.size() <= limits.max_inputs, "texts out of the limits: " + printable(body));
      check(!r.source.empty() && !r.target.empty() && !has_upper(r.source) && !has_upper(r.target),
            "languages not read as lower-case codes: " + printable(body));
      check(r.alternatives + 1 <= limits.max_beam, "alternatives out of the limits: " + printable(body));
      check(!r.q_list || json, "a q list read from a form: " + printable(body));
      const TranslateRequest again = parse_translate_request(type, json ? "" : query, body, limits);
      check(again.q == r.q && again.q_list == r.q_list && again.source == r.source && again.target == r.target &&
                again.format == r.format && again.alternatives == r.alternatives && again.api_key == r.api_key,
            "the same translate request read twice differs: " + printable(body));
    } catch (const ApiError& e) {
      check(e.status == 400, "status " + std::to_string(e.status) + " for a translate request " + printable(body));
      check_refusal(body, e);
    }
    try {
      const DetectRequest r = parse_detect_request(type, json ? "" : query, body, limits);
      check(!r.q.empty() && r.q.size() <= limits.max_inputs, "texts out of the limits: " + printable(body));
    } catch (const ApiError& e) {
      check(e.status == 400, "status " + std::to_string(e.status) + " for a detect request " + printable(body));
      check_refusal(body, e);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  const RequestLimits limits{8, 4, 16};
  try {
    check_read(body, parse_predict_request(body, limits), limits);
  } catch (const ApiError& e) {
    check_refusal(body, e);
  }
  try {
    check_explain(body, parse_explain_request(body, limits), limits);
  } catch (const ApiError& e) {
    check_refusal(body, e);
  }
  try {
    check_query(body, parse_examples_query(body));
  } catch (const ApiError& e) {
    check(e.status == 400, "status " + std::to_string(e.status) + " for the query " + printable(body));
    check_refusal(body, e);
  }
  check_libretranslate(body, limits);
  check_base64(body);
  return 0;
}
