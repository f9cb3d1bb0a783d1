// The Transformer encoder-decoder, its configuration and its two steppers (transformer.hpp).
#include "models/transformer.hpp"

#include <cmath>
#include <stdexcept>

#include "models/json_field.hpp"

namespace attend::models {

// ---- configuration -----------------------------------------------------------------------------------------------

std::string to_string(PositionKind kind) { return kind == PositionKind::learned ? "learned" : "sinusoidal"; }

PositionKind position_kind_from_string(const std::string& name) {
  if (name == "sinusoidal") return PositionKind::sinusoidal;
  if (name == "learned") return PositionKind::learned;
  throw std::invalid_argument("unknown positions \"" + name + "\" (expected sinusoidal, learned)");
}

nn::TransformerLayerConfig TransformerConfig::layer_config() const {
  nn::TransformerLayerConfig c;
  c.d_model = d_model;
  c.heads = heads;
  c.ff = ff;
  c.dropout = dropout;
  c.norm_first = norm_first;
  return c;
}

void TransformerConfig::validate() const {
  auto positive = [](std::size_t value, const char* name) {
    if (value == 0) throw std::invalid_argument(std::string("model config: ") + name + " must be positive");
  };
  positive(source_vocab_size, "source_vocab_size");
  positive(target_vocab_size, "target_vocab_size");
  positive(d_model, "d_model");
  positive(heads, "heads");
  positive(ff, "ff");
  positive(encoder_layers, "encoder_layers");
  positive(decoder_layers, "decoder_layers");
  positive(max_positions, "max_positions");
  positive(max_target_length, "max_target_length");
  if (target_vocab_size <= eos_id) {
    throw std::invalid_argument("model config: target_vocab_size must include the special tokens");
  }
  if (d_model % heads != 0) {
    throw std::invalid_argument("model config: d_model " + std::to_string(d_model) + " must be a multiple of heads " +
                                std::to_string(heads));
  }
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    throw std::invalid_argument("model config: dropout " + std::to_string(dropout) + " is outside [0, 1)");
  }
  if (positions == PositionKind::learned && max_target_length > max_positions) {
    throw std::invalid_argument("model config: max_target_length " + std::to_string(max_target_length) +
                                " is more than max_positions " + std::to_string(max_positions));
  }
}

nlohmann::json TransformerConfig::to_json() const {
  return {{"source_vocab_size", source_vocab_size},
          {"target_vocab_size", target_vocab_size},
          {"d_model", d_model},
          {"heads", heads},
          {"ff", ff},
          {"encoder_layers", encoder_layers},
          {"decoder_layers", decoder_layers},
          {"dropout", dropout},
          {"norm", norm_first ? "pre" : "post"},
          {"positions", to_string(positions)},
          {"max_positions", max_positions},
          {"tie_embeddings", tie_embeddings},
          {"max_target_length", max_target_length},
          {"seed", seed}};
}

TransformerConfig TransformerConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::invalid_argument("model config: not a JSON object");
  TransformerConfig c;
  c.source_vocab_size = config_field<std::size_t>(json, "source_vocab_size");
  c.target_vocab_size = config_field<std::size_t>(json, "target_vocab_size");
  c.d_model = config_field<std::size_t>(json, "d_model");
  c.heads = config_field<std::size_t>(json, "heads");
  c.ff = config_field<std::size_t>(json, "ff");
  c.encoder_layers = config_field<std::size_t>(json, "encoder_layers");
  c.decoder_layers = config_field<std::size_t>(json, "decoder_layers");
  c.dropout = config_field<double>(json, "dropout");
  const std::string norm = config_field<std::string>(json, "norm");
  if (norm != "pre" && norm != "post") {
    throw std::invalid_argument("model config: norm \"" + norm + "\" is not pre or post");
  }
  c.norm_first = norm == "pre";
  c.positions = position_kind_from_string(config_field<std::string>(json, "positions"));
  c.max_positions = config_field<std::size_t>(json, "max_positions");
  c.tie_embeddings = config_field<bool>(json, "tie_embeddings");
  c.max_target_length = config_field<std::size_t>(json, "max_target_length");
  c.seed = config_field<std::uint64_t>(json, "seed");
  c.validate();
  return c;
}

// ---- the model ---------------------------------------------------------------------------------------------------

namespace {

const TransformerConfig& validated(const TransformerConfig& config) {
  config.validate();
  return config;
}

// N(0, 1/D), the padding row 0: √D times it has unit variance, as the sinusoids
template <class T>
void scaled_normal(nn::Embedding<T>& embedding, std::size_t D, Rng& rng) {
  Tensor<T> w = rng.normal_tensor<T>(embedding.W.value.shape(), 0.0, 1.0 / std::sqrt(static_cast<double>(D)));
  if (embedding.padding_id() >= 0) {
    for (std::size_t d = 0; d < D; ++d) w.at({static_cast<std::size_t>(embedding.padding_id()), d}) = T(0);
  }
  embedding.W.assign(std::move(w));
}

void check_source(const Ids& source, const std::vector<std::int64_t>& lengths) {
  const Shape& s = source.shape();
  bool ok = s.rank() == 2 && s[0] == lengths.size() && !lengths.empty();
  for (std::size_t b = 0; ok && b < lengths.size(); ++b) {
    ok = lengths[b] >= 1 && static_cast<std::size_t>(lengths[b]) <= s[1];
  }
  if (!ok) {
    throw std::invalid_argument("TransformerModel: source " + to_string(s) + " with " + std::to_string(lengths.size()) +
                                " lengths (expected (batch, S) and batch lengths from 1 to S)");
  }
}

}  // namespace

template <class T>
TransformerModel<T>::TransformerModel(const TransformerConfig& config, Rng&& rng)
    : src_emb(validated(config).source_vocab_size, config.d_model, rng, pad_id),
      tgt_emb(config.target_vocab_size, config.d_model, rng, pad_id),
      transformer(config.layer_config(), config.encoder_layers, config.decoder_layers, rng),
      out(config.d_model, config.target_vocab_size, rng),
      dropout(config.dropout, rng.next()),
      config_(config) {
  const std::size_t D = config.d_model;
  scaled_normal(src_emb, D, rng);
  scaled_normal(tgt_emb, D, rng);
  const double sd = 1.0 / std::sqrt(static_cast<double>(D));
  if (config.positions == PositionKind::learned) {
    src_pos = Parameter<T>(rng.normal_tensor<T>({config.max_positions, D}, 0.0, sd));
    tgt_pos = Parameter<T>(rng.normal_tensor<T>({config.max_positions, D}, 0.0, sd));
  } else {
    sinusoids_ = nn::sinusoidal_positions<T>(config.max_positions, D);
  }
}

template <class T>
Variable<T> TransformerModel<T>::embed(Tape<T>& tape, const Ids& ids, bool source, std::size_t offset) {
  return embed_rows((source ? src_emb : tgt_emb)(tape, ids), source, offset);
}

template <class T>
Variable<T> TransformerModel<T>::embed_rows(const Variable<T>& tokens, bool source, std::size_t offset) {
  const std::size_t D = config_.d_model;
  const std::size_t length = tokens.shape()[1];
  Tape<T>& tape = tokens.tape();
  const bool learned = config_.positions == PositionKind::learned;
  if (learned && offset + length > config_.max_positions) {
    throw std::invalid_argument("TransformerModel: a " + std::string(source ? "source" : "target") + " of " +
                                std::to_string(offset + length) + " positions is longer than max_positions " +
                                std::to_string(config_.max_positions) + " of the learned positions");
  }
  if (!learned && offset + length > sinusoids_.shape()[0]) {
    sinusoids_ = nn::sinusoidal_positions<T>(2 * (offset + length), D);  // any length: the table grows
  }
  Variable<T> positions;
  if (learned) {
    positions = slice(tape.param(source ? src_pos : tgt_pos), 0, offset, offset + length);
  } else {
    Tensor<T> rows(Shape{length, D}, uninitialized);
    std::copy(sinusoids_.data() + offset * D, sinusoids_.data() + (offset + length) * D, rows.data());
    positions = tape.constant(std::move(rows));
  }
  const auto L = static_cast<std::int64_t>(length), d = static_cast<std::int64_t>(D);
  // x = √D · E[y] + P[p]
  return dropout(mul(tokens, static_cast<T>(std::sqrt(static_cast<double>(D)))) + reshape(positions, {1, L, d}));
}

template <class T>
Variable<T> TransformerModel<T>::logits(const Variable<T>& y) {
  if (!config_.tie_embeddings) return out(y);
  Tape<T>& tape = y.tape();
  return dense(y, tape.param(tgt_emb.W), tape.param(out.b));
}

template <class T>
TransformerEncoded<T> TransformerModel<T>::encode(Tape<T>& tape, const Ids& source,
                                                  const std::vector<std::int64_t>& lengths,
                                                  nn::AttentionWeights<T>* weights) {
  check_source(source, lengths);
  const std::size_t B = lengths.size(), S = source.shape()[1];
  TransformerEncoded<T> encoded;
  encoded.mask = Mask(Shape{B, S});
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(lengths[b]); ++i) encoded.mask.at({b, i}) = 1;
  }
  encoded.memory =
      transformer.encoder.forward(embed(tape, source, true), &encoded.mask, weights ? &weights->encoder : nullptr);
  return encoded;
}

template <class T>
TransformerEncoded<T> TransformerModel<T>::encode_embedded(const Variable<T>& tokens,
                                                           nn::AttentionWeights<T>* weights) {
  const Shape& shape = tokens.shape();
  if (shape.rank() != 3 || shape[0] == 0 || shape[1] == 0 || shape[2] != config_.d_model) {
    throw std::invalid_argument("TransformerModel::encode_embedded: embeddings of shape " + to_string(shape) +
                                "; expected (batch, source, " + std::to_string(config_.d_model) + ")");
  }
  TransformerEncoded<T> encoded;
  encoded.mask = Mask(Shape{shape[0], shape[1]}, std::uint8_t{1});
  encoded.memory =
      transformer.encoder.forward(embed_rows(tokens, true), &encoded.mask, weights ? &weights->encoder : nullptr);
  return encoded;
}

template <class T>
Variable<T> TransformerModel<T>::forward(Tape<T>& tape, const Batch& batch, nn::AttentionWeights<T>* weights) {
  const TransformerEncoded<T> encoded = encode(tape, batch.source, batch.source_lengths, weights);
  const Variable<T> y = embed(tape, batch.target_in, false);
  if (weights == nullptr) return logits(transformer.decoder.forward(y, encoded.memory, &encoded.mask));
  return logits(transformer.decoder.forward(y, encoded.memory, &encoded.mask, &weights->decoder, &weights->cross));
}

template <class T>
Variable<T> TransformerModel<T>::loss(Tape<T>& tape, const Batch& batch, double label_smoothing) {
  const TransformerEncoded<T> encoded = encode(tape, batch.source, batch.source_lengths);
  const Variable<T> h = transformer.decoder.forward(embed(tape, batch.target_in, false), encoded.memory, &encoded.mask);
  const Variable<T> W = tape.param(config_.tie_embeddings ? tgt_emb.W : out.W);
  return target_loss<T>(h, batch.target_out, W, out.has_bias() ? tape.param(out.b) : Variable<T>(), label_smoothing);
}

template <class T>
void TransformerModel<T>::visit(nn::ModuleVisitor<T>& v) {
  v.module("src_emb", src_emb);
  v.module("tgt_emb", tgt_emb);
  if (config_.positions == PositionKind::learned) {
    v.parameter("src_pos", src_pos);
    v.parameter("tgt_pos", tgt_pos);
  }
  v.module("transformer", transformer);
  if (config_.tie_embeddings) {
    v.parameter("out.b", out.b);
  } else {
    v.module("out", out);
  }
  v.module("dropout", dropout);
}

// ---- decoding ----------------------------------------------------------------------------------------------------

namespace {

// Every layer's cross-attention weights, each (rows, H, T_q, S), at query row q → (rows, L·H·S).
template <class T>
Tensor<T> every_map(const std::vector<Tensor<T>>& weights, std::size_t q) {
  const std::size_t L = weights.size(), rows = weights[0].shape()[0], H = weights[0].shape()[1];
  const std::size_t Tq = weights[0].shape()[2], S = weights[0].shape()[3];
  Tensor<T> alpha(Shape{rows, L * H * S}, uninitialized);
  for (std::size_t l = 0; l < L; ++l) {
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t h = 0; h < H; ++h) {
        const T* row = weights[l].data() + ((r * H + h) * Tq + q) * S;
        std::copy(row, row + S, alpha.data() + (r * L * H + l * H + h) * S);
      }
    }
  }
  return alpha;
}

// The cross-attention weights of the view, (rows, H, T_q, S) at query row q → α (rows, S), or (rows, L·H·S) for
// every map.
template <class T>
Variable<T> viewed(Tape<T>& tape, const std::vector<Tensor<T>>& weights, AttentionView view, std::size_t q) {
  if (view.every) return tape.constant(every_map(weights, q));
  const int L = static_cast<int>(weights.size());
  const int layer = view.layer < 0 ? L + view.layer : view.layer;
  if (layer < 0 || layer >= L) {
    throw std::invalid_argument("decode: attention layer " + std::to_string(view.layer) + " of a decoder with " +
                                std::to_string(L) + " layers");
  }
  const Tensor<T>& w = weights[static_cast<std::size_t>(layer)];
  const std::size_t rows = w.shape()[0], H = w.shape()[1], Tq = w.shape()[2], S = w.shape()[3];
  if (view.head >= static_cast<int>(H)) {
    throw std::invalid_argument("decode: attention head " + std::to_string(view.head) + " of " + std::to_string(H) +
                                " heads");
  }
  Tensor<T> alpha(Shape{rows, S});
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t h = 0; h < H; ++h) {
      if (view.head >= 0 && h != static_cast<std::size_t>(view.head)) continue;
      const T* row = w.data() + ((r * H + h) * Tq + q) * S;
      for (std::size_t i = 0; i < S; ++i) alpha.at({r, i}) += row[i];
    }
  }
  if (view.head < 0) alpha.flat() *= static_cast<T>(1.0 / static_cast<double>(H));
  return tape.constant(std::move(alpha));
}

// The maps a view records: L·H for every one, else 1.
template <class T>
std::size_t view_maps(const std::vector<Tensor<T>>& weights, AttentionView view) {
  return view.every ? weights.size() * weights[0].shape()[1] : 1;
}

std::vector<std::int64_t> repeated_rows(std::size_t B, std::size_t k) {
  std::vector<std::int64_t> rows(B * k);
  for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<std::int64_t>(r / k);
  return rows;
}

template <class T>
Ids column(const Ids& y) {
  Ids ids(Shape{y.size(), 1}, uninitialized);
  std::copy(y.data(), y.data() + y.size(), ids.data());
  return ids;
}

}  // namespace

template <class T>
CachedStepper<T>::CachedStepper(TransformerModel<T>& model, const TransformerEncoded<T>& encoded, AttentionView view)
    : model_(model), mask_(encoded.mask), caches_(model.transformer.decoder.start_cache(encoded.memory)), view_(view) {}

template <class T>
void CachedStepper<T>::expand(std::size_t k) {
  const std::vector<std::int64_t> rows = repeated_rows(mask_.shape()[0], k);
  mask_ = gather_mask(mask_, rows);
  for (nn::DecoderLayerCache<T>& cache : caches_) {
    cache.cross_k = gather_rows(cache.cross_k, rows);
    cache.cross_v = gather_rows(cache.cross_v, rows);
  }
}

template <class T>
typename Stepper<T>::Step CachedStepper<T>::step(const Ids& y_prev) {
  Tape<T>& tape = caches_.front().cross_k.tape();
  if (position_ == 0) {
    mark_ = tape.size();
  } else {
    // the tape keeps the source side and the cached keys and values (moved, not copied); the last step's other
    // nodes go
    std::vector<Variable<T>> kept;
    for (const nn::DecoderLayerCache<T>& cache : caches_) {
      kept.push_back(cache.self_k);
      kept.push_back(cache.self_v);
    }
    kept = tape.truncate_keeping(mark_, kept);
    for (std::size_t l = 0; l < caches_.size(); ++l) {
      caches_[l].self_k = kept[2 * l];
      caches_[l].self_v = kept[2 * l + 1];
    }
  }
  const Variable<T> y = model_.embed(tape, column<T>(y_prev), false, position_);
  std::vector<Tensor<T>> weights;
  const Variable<T> h = model_.transformer.decoder.step(y, caches_, &mask_, nullptr, &weights);  // (rows, 1, D)
  ++position_;
  const auto D = static_cast<std::int64_t>(model_.config().d_model);
  return {model_.logits(reshape(h, {-1, D})), viewed(tape, weights, view_, 0), view_maps(weights, view_)};
}

template <class T>
void CachedStepper<T>::reorder(const std::vector<std::int64_t>& parents) {
  for (nn::DecoderLayerCache<T>& cache : caches_) {
    cache.self_k = gather_rows(cache.self_k, parents);
    cache.self_v = gather_rows(cache.self_v, parents);
  }
}

template <class T>
RecomputeStepper<T>::RecomputeStepper(TransformerModel<T>& model, const TransformerEncoded<T>& encoded,
                                      AttentionView view)
    : model_(model), encoded_(encoded), prefixes_(encoded.mask.shape()[0]), view_(view) {}

template <class T>
void RecomputeStepper<T>::expand(std::size_t k) {
  const std::vector<std::int64_t> rows = repeated_rows(encoded_.mask.shape()[0], k);
  encoded_.mask = gather_mask(encoded_.mask, rows);
  encoded_.memory = gather_rows(encoded_.memory, rows);
  prefixes_.assign(rows.size(), {});
}

template <class T>
typename Stepper<T>::Step RecomputeStepper<T>::step(const Ids& y_prev) {
  Tape<T>& tape = encoded_.memory.tape();
  if (prefixes_.front().empty()) {
    mark_ = tape.size();
  } else {
    tape.truncate(mark_);  // the last step's nodes go; the source side stays
  }
  for (std::size_t r = 0; r < prefixes_.size(); ++r) prefixes_[r].push_back(y_prev.data()[r]);
  const std::size_t rows = prefixes_.size(), t = prefixes_.front().size();
  Ids ids(Shape{rows, t}, uninitialized);
  for (std::size_t r = 0; r < rows; ++r) std::copy(prefixes_[r].begin(), prefixes_[r].end(), ids.data() + r * t);
  std::vector<Tensor<T>> weights;
  const Variable<T> h = model_.transformer.decoder.forward(model_.embed(tape, ids, false), encoded_.memory,
                                                           &encoded_.mask, nullptr, &weights);  // (rows, t, D)
  const auto D = static_cast<std::int64_t>(model_.config().d_model);
  return {model_.logits(reshape(slice(h, 1, t - 1, t), {-1, D})), viewed(tape, weights, view_, t - 1),
          view_maps(weights, view_)};
}

template <class T>
void RecomputeStepper<T>::reorder(const std::vector<std::int64_t>& parents) {
  std::vector<std::vector<std::int64_t>> next(parents.size());
  for (std::size_t r = 0; r < parents.size(); ++r) next[r] = prefixes_[static_cast<std::size_t>(parents[r])];
  prefixes_ = std::move(next);
}

template <class T>
std::vector<Hypothesis> decode(TransformerModel<T>& model, const Ids& source, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options, AttentionView view, bool recompute) {
  TapeWithContext<T> on(Context{nullptr, options.products});  // the products of the search's precision
  Tape<T>& tape = on.tape;
  NoGradGuard<T> no_grad(tape);
  const TransformerEncoded<T> encoded = model.encode(tape, source, lengths);
  const std::size_t longest = options.max_length ? options.max_length : model.config().max_target_length;
  if (model.config().positions == PositionKind::learned && longest > model.config().max_positions) {
    throw std::invalid_argument("decode: maximum length " + std::to_string(longest) + " is more than the model's " +
                                std::to_string(model.config().max_positions) + " positions");
  }
  if (recompute) {
    RecomputeStepper<T> stepper(model, encoded, view);
    return decode(stepper, lengths, options, longest);
  }
  CachedStepper<T> stepper(model, encoded, view);
  return decode(stepper, lengths, options, longest);
}

#define ATTEND_INSTANTIATE(T)                                                                                    \
  template class TransformerModel<T>;                                                                            \
  template class CachedStepper<T>;                                                                               \
  template class RecomputeStepper<T>;                                                                            \
  template std::vector<Hypothesis> decode<T>(TransformerModel<T>&, const Ids&, const std::vector<std::int64_t>&, \
                                             const SearchOptions&, AttentionView, bool);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend::models
