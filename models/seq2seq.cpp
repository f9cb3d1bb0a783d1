// The encoder–decoder model and its configuration (seq2seq.hpp).
#include "models/seq2seq.hpp"

#include <stdexcept>

#include "models/json_field.hpp"
#include "models/search.hpp"

namespace attend::models {

namespace {

const char* const decoder_names[] = {"vanilla", "bahdanau", "luong-dot", "luong-general", "luong-concat"};

std::string decoder_name_list() {
  std::string list;
  for (const char* name : decoder_names) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

}  // namespace

std::string Seq2seqConfig::decoder_name() const {
  switch (decoder) {
    case DecoderKind::vanilla:
      return "vanilla";
    case DecoderKind::bahdanau:
      return score == ScoreKind::additive ? "bahdanau" : "bahdanau-" + to_string(score);
    case DecoderKind::luong:
      return "luong-" + to_string(score);
  }
  return "?";
}

void Seq2seqConfig::set_decoder(const std::string& name) {
  if (name == "vanilla") {
    decoder = DecoderKind::vanilla;
  } else if (name == "bahdanau") {
    decoder = DecoderKind::bahdanau;
    score = ScoreKind::additive;
  } else if (name.rfind("luong-", 0) == 0 && name != "luong-additive") {
    try {
      score = score_kind_from_string(name.substr(6));
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("unknown decoder \"" + name + "\" (expected " + decoder_name_list() + ")");
    }
    decoder = DecoderKind::luong;
  } else {
    throw std::invalid_argument("unknown decoder \"" + name + "\" (expected " + decoder_name_list() + ")");
  }
}

void Seq2seqConfig::validate() const {
  auto positive = [](std::size_t value, const char* name) {
    if (value == 0) throw std::invalid_argument(std::string("model config: ") + name + " must be positive");
  };
  positive(source_vocab_size, "source_vocab_size");
  positive(target_vocab_size, "target_vocab_size");
  positive(embedding_dim, "embedding_dim");
  positive(hidden_size, "hidden_size");
  positive(num_layers, "num_layers");
  positive(max_target_length, "max_target_length");
  if (target_vocab_size <= eos_id) {
    throw std::invalid_argument("model config: target_vocab_size must include the special tokens");
  }
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    throw std::invalid_argument("model config: dropout " + std::to_string(dropout) + " is outside [0, 1)");
  }
  if (decoder != DecoderKind::vanilla && score == ScoreKind::dot && bidirectional) {
    throw std::invalid_argument(
        "model config: the dot score s_jᵀ h_i needs equal sizes, but a bidirectional encoder "
        "gives annotations of 2H; use luong-general or luong-concat");
  }
}

nlohmann::json Seq2seqConfig::to_json() const {
  return {{"source_vocab_size", source_vocab_size},
          {"target_vocab_size", target_vocab_size},
          {"cell", nn::to_string(cell)},
          {"embedding_dim", embedding_dim},
          {"hidden_size", hidden_size},
          {"num_layers", num_layers},
          {"bidirectional", bidirectional},
          {"dropout", dropout},
          {"decoder", decoder_name()},
          {"input_feeding", input_feeding},
          {"attention_size", attention_size},
          {"max_target_length", max_target_length},
          {"seed", seed}};
}

Seq2seqConfig Seq2seqConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::invalid_argument("model config: not a JSON object");
  Seq2seqConfig config;
  config.source_vocab_size = config_field<std::size_t>(json, "source_vocab_size");
  config.target_vocab_size = config_field<std::size_t>(json, "target_vocab_size");
  config.cell = nn::cell_kind_from_string(config_field<std::string>(json, "cell"));
  config.embedding_dim = config_field<std::size_t>(json, "embedding_dim");
  config.hidden_size = config_field<std::size_t>(json, "hidden_size");
  config.num_layers = config_field<std::size_t>(json, "num_layers");
  config.bidirectional = config_field<bool>(json, "bidirectional");
  config.dropout = config_field<double>(json, "dropout");
  config.set_decoder(config_field<std::string>(json, "decoder"));
  config.input_feeding = config_field<bool>(json, "input_feeding");
  config.attention_size = config_field<std::size_t>(json, "attention_size");
  config.max_target_length = config_field<std::size_t>(json, "max_target_length");
  config.seed = config_field<std::uint64_t>(json, "seed");
  config.validate();
  return config;
}

DecoderConfig decoder_config(const Seq2seqConfig& config) {
  DecoderConfig d;
  d.kind = config.decoder;
  d.score = config.score;
  d.cell = config.cell;
  d.vocab_size = config.target_vocab_size;
  d.embedding_dim = config.embedding_dim;
  d.hidden_size = config.hidden_size;
  d.num_layers = config.num_layers;
  d.encoder_directions = config.bidirectional ? 2 : 1;
  d.annotation_size = d.encoder_directions * config.hidden_size;
  d.attention_size = config.attention_size;
  d.input_feeding = config.input_feeding;
  d.padding_id = pad_id;
  return d;
}

namespace {

nn::EncoderConfig encoder_config(const Seq2seqConfig& config) {
  config.validate();
  nn::EncoderConfig e;
  e.vocab_size = config.source_vocab_size;
  e.embedding_dim = config.embedding_dim;
  e.padding_id = pad_id;
  e.rnn.cell = config.cell;
  e.rnn.input_size = config.embedding_dim;
  e.rnn.hidden_size = config.hidden_size;
  e.rnn.num_layers = config.num_layers;
  e.rnn.bidirectional = config.bidirectional;
  e.rnn.dropout = config.dropout;
  e.rnn.dropout_seed = config.seed + 1;
  return e;
}

}  // namespace

// One generator for all initial weights: the encoder's are drawn first, then the decoder's.
template <class T>
Seq2seq<T>::Seq2seq(const Seq2seqConfig& config, Rng&& rng)
    : encoder(encoder_config(config), rng), decoder(make_decoder<T>(decoder_config(config), rng)), config_(config) {}

template <class T>
Encoded<T> Seq2seq<T>::encode(Tape<T>& tape, const Ids& source, const std::vector<std::int64_t>& lengths) {
  return decoder_inputs(encoder(tape, source, lengths), lengths);
}

template <class T>
Encoded<T> Seq2seq<T>::encode_embedded(const Variable<T>& embedded, const std::vector<std::int64_t>& lengths) {
  return decoder_inputs(encoder.rnn.forward(embedded, lengths), lengths);
}

// The decoder's memory (keys precomputed) and s_0 from the encoder's output.
template <class T>
Encoded<T> Seq2seq<T>::decoder_inputs(const nn::RecurrentOutput<T>& encoded, const std::vector<std::int64_t>& lengths) {
  Encoded<T> result;
  result.memory = decoder->memory(encoded, lengths);
  result.state = decoder->initial_state(encoded);
  return result;
}

template <class T>
TeacherForced<T> Seq2seq<T>::forward(Tape<T>& tape, const Batch& batch) {
  const Shape& shape = batch.target_in.shape();
  if (shape.rank() != 2 || shape[0] != batch.size() || batch.target_out.shape() != shape) {
    throw std::invalid_argument("Seq2seq::forward: the batch has no targets (target_in " + to_string(shape) + ", " +
                                std::to_string(batch.size()) + " sources)");
  }
  return teacher_forced(*decoder, encode(tape, batch.source, batch.source_lengths), batch.target_in);
}

namespace {

// The decoder's steps over target_in, each reading the true previous token: every step's output features (B, F), and
// (attention not null) its scores, attention weights and context.
template <class T>
void teacher_forced_steps(Decoder<T>& decoder, const Encoded<T>& encoded, const Ids& target_in,
                          std::vector<Variable<T>>& features, TeacherForced<T>* attention) {
  const std::size_t B = target_in.shape()[0];
  const std::size_t steps = target_in.shape()[1];
  DecoderState<T> state = encoded.state;
  Ids y_prev(Shape{B});
  for (std::size_t j = 0; j < steps; ++j) {
    // teacher forcing: step j reads the true previous token y_{j-1}, not the model's own prediction
    for (std::size_t b = 0; b < B; ++b) y_prev.data()[b] = target_in.data()[b * steps + j];
    DecoderStep<T> step = decoder.step(y_prev, state, encoded.memory);
    features.push_back(step.output);
    if (attention && !step.alpha.empty()) {
      attention->energies.push_back(step.energies);
      attention->alpha.push_back(step.alpha);
      attention->context.push_back(step.context);
    }
    state = std::move(step.state);
  }
}

}  // namespace

template <class T>
TeacherForced<T> teacher_forced(Decoder<T>& decoder, const Encoded<T>& encoded, const Ids& target_in) {
  TeacherForced<T> result;
  std::vector<Variable<T>> features;
  teacher_forced_steps(decoder, encoded, target_in, features, &result);
  // the output layer over all steps at once: (B, T, F) → (B, T, V), one product instead of T
  result.logits = decoder.logits(stack(features, 1));
  return result;
}

template <class T>
Variable<T> teacher_forced_features(Decoder<T>& decoder, const Encoded<T>& encoded, const Ids& target_in) {
  std::vector<Variable<T>> features;
  teacher_forced_steps<T>(decoder, encoded, target_in, features, nullptr);
  return stack(features, 1);
}

template <class T>
Variable<T> target_loss(const Variable<T>& features, const Ids& target_out, const Variable<T>& W, const Variable<T>& b,
                        double label_smoothing) {
  const Shape& shape = features.shape();
  if (shape.rank() != 3 || target_out.shape() != Shape{shape[0], shape[1]}) {
    throw std::invalid_argument("target_loss: features " + to_string(shape) + " with targets " +
                                to_string(target_out.shape()) + " (expected (B, T, F) and (B, T))");
  }
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> targets;
  for (std::size_t r = 0; r < target_out.size(); ++r) {
    if (target_out.data()[r] == pad_id) continue;
    rows.push_back(static_cast<std::int64_t>(r));
    targets.push_back(target_out.data()[r]);
  }
  if (rows.empty()) throw std::invalid_argument("target_loss: every target is <pad>");
  const auto F = static_cast<std::int64_t>(shape[2]);
  Ids packed(Shape{targets.size()});
  std::copy(targets.begin(), targets.end(), packed.data());
  // -(1/N) Σ_{b,j: y_bj ≠ pad} log p(y_bj | y_b,<j, x_b)
  return linear_cross_entropy(gather_rows(reshape(features, {-1, F}), rows), W, b, packed, pad_id, label_smoothing);
}

template <class T>
Variable<T> Seq2seq<T>::loss(Tape<T>& tape, const Batch& batch, double label_smoothing) {
  const Shape& shape = batch.target_in.shape();
  if (shape.rank() != 2 || shape[0] != batch.size() || batch.target_out.shape() != shape) {
    throw std::invalid_argument("Seq2seq::loss: the batch has no targets (target_in " + to_string(shape) + ", " +
                                std::to_string(batch.size()) + " sources)");
  }
  const Encoded<T> encoded = encode(tape, batch.source, batch.source_lengths);
  nn::Linear<T>& output = decoder->output;
  return target_loss<T>(teacher_forced_features(*decoder, encoded, batch.target_in), batch.target_out,
                        tape.param(output.W), output.has_bias() ? tape.param(output.b) : Variable<T>(),
                        label_smoothing);
}

template <class T>
void Seq2seq<T>::visit(nn::ModuleVisitor<T>& v) {
  v.module("encoder", encoder);
  v.module("decoder", *decoder);
}

template class Seq2seq<float>;
template class Seq2seq<double>;
template TeacherForced<float> teacher_forced(Decoder<float>&, const Encoded<float>&, const Ids&);
template TeacherForced<double> teacher_forced(Decoder<double>&, const Encoded<double>&, const Ids&);
template Variable<float> teacher_forced_features(Decoder<float>&, const Encoded<float>&, const Ids&);
template Variable<double> teacher_forced_features(Decoder<double>&, const Encoded<double>&, const Ids&);
template Variable<float> target_loss(const Variable<float>&, const Ids&, const Variable<float>&, const Variable<float>&,
                                     double);
template Variable<double> target_loss(const Variable<double>&, const Ids&, const Variable<double>&,
                                      const Variable<double>&, double);

}  // namespace attend::models
