// attend serve's JSON API (docs/reference/serve.md): a request's body read and checked, and the answers written. No
// HTTP here: the server (server.hpp) calls these, and so do the tests and the fuzz target (tests/fuzz/serve.cpp).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "apps/model_file.hpp"

namespace attend::app::serve {

// A request answered with an error: the HTTP status and the message of its body {"error": message}.
struct ApiError : std::runtime_error {
  int status;
  ApiError(int status, const std::string& message) : std::runtime_error(message), status(status) {}
};

// What one request may ask for (the flags --max-inputs and --max-beam).
struct RequestLimits {
  std::size_t max_inputs = 64;
  std::size_t max_beam = 16;
  std::size_t max_attribution_steps = 64;  // integrated gradients' points an explain request may ask for
};

// POST /v1/predict's body: {"model": name, "inputs": [...], "beam": k, "scores": bool, "attention": bool, "stream":
// bool}; only "inputs" is required ("model" when more than one model is served), and a stream has one input.
struct PredictRequest {
  std::string model;                // empty: not given
  std::vector<std::string> inputs;  // texts; for an image model each a PGM file in base64
  std::size_t beam = 1;
  bool scores = false;     // each output's length-normalised log-probability, as `attend predict --scores`
  bool attention = false;  // each output's attention weights
  bool stream = false;     // answer as server-sent events, token by token (one input; docs/reference/serve.md)
};

// POST /v1/explain's body: {"model": name, "input": text or base64 PGM, "beam": k, "attribution": bool, "steps": m,
// "precision": name}; "input" is required ("model" when more than one model is served). The explorer page asks it.
struct ExplainRequest {
  std::string model;
  std::string input;
  std::size_t beam = 1;
  bool attribution = false;  // with gradient attribution (Explanation::attribution)
  std::size_t steps = 32;    // its integrated gradients' points; not given: 32, or the limit when lower
  std::string precision;     // the products the input is decoded with (precision/precision.hpp); empty: the server's
};

// GET /v1/examples's query, "model=NAME&count=N" (both optional, percent-encoded as a URL's query): the first `count`
// inputs of the model's test split, which the explorer offers to choose from.
struct ExamplesRequest {
  std::string model;
  std::size_t count = 20;
};
constexpr std::size_t max_examples = 1000;  // a request's largest count

// A request's body as a JSON object. Throws ApiError 400 naming the problem: not JSON (with the parser's position),
// invalid UTF-8, nesting deeper than a request has (an object of fields, one an array of strings), not an object.
nlohmann::json request_object(const std::string& body);

// Reads a request's body. Throws ApiError 400 naming the problem: not JSON (with the parser's position), invalid
// UTF-8, nesting deeper than a request has, not an object, an unknown field, a field of the wrong type or out of its
// range; 413 for more inputs than limits.max_inputs.
PredictRequest parse_predict_request(const std::string& body, const RequestLimits& limits);

// Reads an explain request's body, as parse_predict_request reads its own (the same errors).
ExplainRequest parse_explain_request(const std::string& body, const RequestLimits& limits);

// The name=value pairs of a query or of an application/x-www-form-urlencoded body, in order, their escapes undone ('+'
// a space, %XX a byte; a pair without '=' has the value ""). Throws ApiError 400 for a '%' not followed by two
// hexadecimal digits.
std::vector<std::pair<std::string, std::string>> form_fields(const std::string& text);

// Reads GET /v1/examples's query (what follows '?', without it). Throws ApiError 400 naming the problem: an unknown or
// repeated parameter, a bad percent escape, a count that is not a whole number from 1 to max_examples.
ExamplesRequest parse_examples_query(const std::string& query);

// The bytes a base64 text (RFC 4648, with its '=' padding; no line breaks) encodes. Throws std::invalid_argument
// naming the first character that is not base64, or a length that is not a multiple of 4.
std::string decode_base64(const std::string& text);

// Bytes as base64 text (RFC 4648, padded): what a client sends of an image.
std::string encode_base64(const std::string& bytes);

// {"error": message} as a body.
std::string error_body(const std::string& message);

// A JSON value as a body: one line, invalid UTF-8 (which no answer should hold) replaced rather than thrown.
std::string body_of(const nlohmann::ordered_json& json);

// One model as GET /v1/models lists it: its name, kind, task, input, vocabulary sizes, parameters, longest input,
// attention maps, the precision it decodes in and the ones an explain request may ask for (available_precisions), and
// how its training ended.
nlohmann::ordered_json model_json(const std::string& name, const ModelFile& file, std::size_t parameters);

// The precision `file`'s model decodes in unless a request names another (--precision).
std::string decoding_precision(const ModelFile& file);

// The precisions this process can decode in (precision/precision.hpp: those whose unavailable() is ""), in --help's
// order.
std::vector<std::string> available_precisions();

// One input as the model reads it, or why it cannot be read.
struct ReadInput {
  std::vector<std::int64_t> source;  // text models
  data::Image image;                 // image models
  std::vector<std::string> tokens;   // text models: the source's tokens, the attention's columns
  std::string error;                 // not empty: the input's own error ("input 2: …"), and nothing else is set
};

// Input k (from 0) of a request as `file`'s model reads it: a text encoded by the task, or an image from base64 PGM.
ReadInput read_input(const ModelFile& file, const std::string& input, std::size_t k);

// One output as /v1/predict answers it: {"output": text} and, when asked, "score" and "attention" (the input's and
// output's tokens, and weights[layer][head][output token][input position]); "note" when the task has one for it.
nlohmann::ordered_json output_json(const ModelFile& file, const AttentionLayout& layout, const ReadInput& input,
                                   const std::string& text_input, const models::Hypothesis& output,
                                   const PredictRequest& request);

// What a streamed output's attention rows run over, as its first event tells it: {"source": the input's tokens} or,
// for an image, {"grid": [rows, columns]} (as "attention" of output_json has them).
nlohmann::ordered_json input_json(const AttentionLayout& layout, const ReadInput& input);

// A streamed output's token as its event tells it (docs/reference/serve.md): {"index": its place in the output,
// "token": its text, "text": the output so far as /v1/predict writes it, "log_prob": log p(token | tokens before,
// input)} and, when asked, "attention": its row as weights[layer][head][input position]. `so_far` holds the output's
// tokens up to this one, included.
nlohmann::ordered_json token_json(const ModelFile& file, const AttentionLayout& layout, std::size_t index,
                                  const models::SettledToken& token, const std::vector<std::int64_t>& so_far,
                                  bool attention);

// /v1/explain's answer for one input (docs/reference/serve.md): the output as /v1/predict gives it with its score, the
// input's and output's tokens (or the image's grid), every attention's maps, the search's tree, and for a recurrent
// attention decoder the numbers of its equations.
nlohmann::ordered_json explanation_json(const ModelFile& file, const ReadInput& input, const std::string& text_input,
                                        const Explanation& explanation);

// GET /v1/examples's answer: the first `count` of the held-out `examples` of the model's test split, each as a client
// sends it to /v1/predict or /v1/explain (a text that reads as the example's tokens; an image as base64 PGM) with its
// references as outputs are written, and how many the split holds.
nlohmann::ordered_json examples_json(const std::string& name, const ModelFile& file,
                                     const std::vector<Example>& examples, std::size_t count);

}  // namespace attend::app::serve
