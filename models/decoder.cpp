// The vanilla, Bahdanau and Luong decoders (decoder.hpp).
#include "models/decoder.hpp"

#include <cmath>
#include <stdexcept>

namespace attend::models {

namespace {

bool is_lstm(const DecoderConfig& config) { return config.cell == nn::CellKind::lstm; }

std::size_t attention_size(const DecoderConfig& config) {
  return config.attention_size ? config.attention_size : config.hidden_size;
}

// The size of what the output layer reads: [s_j; c; E y_{j-1}] or h̃_j.
std::size_t output_features(const DecoderConfig& config) {
  if (config.kind == DecoderKind::luong) return config.hidden_size;
  return config.hidden_size + config.annotation_size + (config.output_embedding ? config.embedding_dim : 0);
}

// What the first cell reads: [E y_{j-1}; c] (vanilla, Bahdanau), [E y_{j-1}; h̃_{j-1}] or E y_{j-1} (Luong).
std::size_t cell_input_size(const DecoderConfig& config) {
  if (config.kind == DecoderKind::luong) {
    return config.embedding_dim + (config.input_feeding ? config.hidden_size : 0);
  }
  return config.embedding_dim + config.annotation_size;
}

const DecoderConfig& checked(const DecoderConfig& config) {
  if (config.vocab_size == 0 || config.embedding_dim == 0 || config.hidden_size == 0 || config.num_layers == 0 ||
      config.annotation_size == 0 || (config.encoder_directions != 1 && config.encoder_directions != 2)) {
    throw std::invalid_argument(
        "Decoder: vocab_size, embedding_dim, hidden_size, num_layers and annotation_size "
        "must be positive and encoder_directions 1 or 2");
  }
  return config;
}

}  // namespace

template <class T>
Decoder<T>::Decoder(const DecoderConfig& config, std::size_t cell_input_size, std::size_t output_features, Rng& rng)
    : embedding(checked(config).vocab_size, config.embedding_dim, rng, config.padding_id),
      output(output_features, config.vocab_size, rng),
      config_(config) {
  for (std::size_t l = 0; l < config.num_layers; ++l) {
    cells.push_back(
        nn::make_cell<T>(config.cell, l == 0 ? cell_input_size : config.hidden_size, config.hidden_size, rng));
  }
  if (config.encoder_directions == 2) {
    for (std::size_t l = 0; l < config.num_layers; ++l) {
      bridge.emplace_back(config.annotation_size, config.hidden_size, rng);
      if (is_lstm(config)) bridge_c.emplace_back(config.annotation_size, config.hidden_size, rng);
    }
  }
}

template <class T>
SourceMemory<T> Decoder<T>::memory(const nn::RecurrentOutput<T>& encoded, const std::vector<std::int64_t>& lengths) {
  SourceMemory<T> memory;
  memory.annotations = encoded.outputs;
  memory.mask = source_mask(lengths, encoded.outputs.shape()[1]);
  return memory;
}

template <class T>
DecoderState<T> Decoder<T>::initial_state(const nn::RecurrentOutput<T>& encoded) {
  const std::size_t D = config_.encoder_directions;
  if (encoded.h_final.size() != config_.num_layers * D) {
    throw std::invalid_argument("Decoder: the encoder has " + std::to_string(encoded.h_final.size() / D) +
                                " layers, the decoder " + std::to_string(config_.num_layers) + " (they must match)");
  }
  DecoderState<T> state;
  for (std::size_t l = 0; l < config_.num_layers; ++l) {
    if (D == 1) {
      // s_0^l = h_Tx^l (and c_0^l = the encoder's memory cell): the encoder and decoder share H
      if (encoded.h_final[l].shape()[1] != config_.hidden_size) {
        throw std::invalid_argument("Decoder: the encoder's final state has size " +
                                    std::to_string(encoded.h_final[l].shape()[1]) + ", the decoder's H is " +
                                    std::to_string(config_.hidden_size) + " (s_0 = h_Tx needs them equal)");
      }
      state.h.push_back(encoded.h_final[l]);
      if (is_lstm(config_)) state.c.push_back(encoded.c_final[l]);
    } else {
      // s_0^l = tanh(W_b^l [h→_Tx^l; h←_1^l] + b_b^l)
      state.h.push_back(tanh(bridge[l](concat<T>({encoded.h_final[2 * l], encoded.h_final[2 * l + 1]}, 1))));
      if (is_lstm(config_)) {
        state.c.push_back(bridge_c[l](concat<T>({encoded.c_final[2 * l], encoded.c_final[2 * l + 1]}, 1)));
      }
    }
  }
  if (config_.kind == DecoderKind::luong && config_.input_feeding) {
    // h̃_0 = 0: (B, H)
    const Variable<T>& s = state.h.front();
    state.feed = s.tape().constant(Tensor<T>(Shape{s.shape()[0], config_.hidden_size}));
  }
  return state;
}

template <class T>
DecoderState<T> Decoder<T>::advance(const Variable<T>& x, const DecoderState<T>& state) {
  DecoderState<T> next;
  next.feed = state.feed;
  Variable<T> input = x;
  for (std::size_t l = 0; l < cells.size(); ++l) {
    // s_j^l = f(s_{j-1}^l, input), input = x for the first layer, s_j^{l-1} above it
    nn::LstmState<T> previous{state.h[l], is_lstm(config_) ? state.c[l] : Variable<T>{}};
    nn::LstmState<T> s = nn::cell_forward(cells[l], input, previous);
    next.h.push_back(s.h);
    if (is_lstm(config_)) next.c.push_back(s.c);
    input = s.h;
  }
  return next;
}

template <class T>
Variable<T> Decoder<T>::embed(const Variable<T>& like, const Ids& y_prev) {
  if (y_prev.shape().rank() != 1 || y_prev.shape()[0] != like.shape()[0]) {
    throw std::invalid_argument("Decoder step: previous tokens " + to_string(y_prev.shape()) +
                                " must be (batch,) for a batch of " + std::to_string(like.shape()[0]));
  }
  return embedding(like.tape(), y_prev);
}

template <class T>
void Decoder<T>::visit(nn::ModuleVisitor<T>& v) {
  v.module("embedding", embedding);
  for (std::size_t l = 0; l < cells.size(); ++l) {
    std::visit([&](auto& cell) { v.module("cells." + std::to_string(l), cell); }, cells[l]);
  }
  for (std::size_t l = 0; l < bridge.size(); ++l) v.module("bridge." + std::to_string(l), bridge[l]);
  for (std::size_t l = 0; l < bridge_c.size(); ++l) v.module("bridge_c." + std::to_string(l), bridge_c[l]);
  v.module("output", output);
}

// ---- vanilla ---------------------------------------------------------------------------------------------------

template <class T>
VanillaDecoder<T>::VanillaDecoder(const DecoderConfig& config, Rng& rng)
    : Decoder<T>(config, cell_input_size(config), output_features(config), rng) {}

template <class T>
SourceMemory<T> VanillaDecoder<T>::memory(const nn::RecurrentOutput<T>& encoded,
                                          const std::vector<std::int64_t>& lengths) {
  SourceMemory<T> memory = Decoder<T>::memory(encoded, lengths);
  const std::size_t D = this->config_.encoder_directions;
  const std::size_t top = (this->config_.num_layers - 1) * D;
  // c = [h→_Tx; h←_1] of the top layer: the whole source in one vector, (B, A)
  memory.context = D == 1 ? encoded.h_final[top] : concat<T>({encoded.h_final[top], encoded.h_final[top + 1]}, 1);
  return memory;
}

template <class T>
DecoderStep<T> VanillaDecoder<T>::step(const Ids& y_prev, const DecoderState<T>& state, const SourceMemory<T>& memory) {
  const Variable<T>& c = memory.context;
  Variable<T> y = this->embed(c, y_prev);  // E y_{j-1}: (B, E)
  DecoderStep<T> out;
  // s_j = f(s_{j-1}, [E y_{j-1}; c])
  out.state = this->advance(concat<T>({y, c}, 1), state);
  const Variable<T>& s_j = out.state.h.back();
  // g(y_{j-1}, s_j, c) reads [s_j; c; E y_{j-1}]: (B, H + A + E)
  out.output = this->config_.output_embedding ? concat<T>({s_j, c, y}, 1) : concat<T>({s_j, c}, 1);
  return out;
}

// ---- Bahdanau --------------------------------------------------------------------------------------------------

template <class T>
BahdanauDecoder<T>::BahdanauDecoder(const DecoderConfig& config, Rng& rng)
    : Decoder<T>(config, cell_input_size(config), output_features(config), rng),
      score(make_score<T>(config.score, config.hidden_size, config.annotation_size, attention_size(config), rng)) {}

template <class T>
SourceMemory<T> BahdanauDecoder<T>::memory(const nn::RecurrentOutput<T>& encoded,
                                           const std::vector<std::int64_t>& lengths) {
  SourceMemory<T> memory = Decoder<T>::memory(encoded, lengths);
  // the part of the score that depends on h_i only, precomputed for every step: (B, S, K)
  memory.keys = score->keys(memory.annotations);
  return memory;
}

template <class T>
DecoderStep<T> BahdanauDecoder<T>::step(const Ids& y_prev, const DecoderState<T>& state,
                                        const SourceMemory<T>& memory) {
  const Variable<T>& s_prev = state.h.back();  // s_{j-1}: (B, H), the top layer's
  // e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i): (B, S), with U_a h_i precomputed in memory.keys
  Variable<T> e_ij = score->score(s_prev, memory.keys);
  // α_ij = exp(e_ij) / Σ_k exp(e_kj): (B, S)
  Variable<T> alpha_ij = attention_weights(e_ij, memory.mask);
  // c_j = Σ_i α_ij h_i: (B, A)
  Variable<T> c_j = context(alpha_ij, memory.annotations);
  Variable<T> y = this->embed(s_prev, y_prev);  // E y_{j-1}: (B, E)
  DecoderStep<T> out;
  // s_j = f(s_{j-1}, [E y_{j-1}; c_j])
  out.state = this->advance(concat<T>({y, c_j}, 1), state);
  const Variable<T>& s_j = out.state.h.back();
  // g(y_{j-1}, s_j, c_j) reads [s_j; c_j; E y_{j-1}]: (B, H + A + E)
  out.output = this->config_.output_embedding ? concat<T>({s_j, c_j, y}, 1) : concat<T>({s_j, c_j}, 1);
  out.energies = e_ij;
  out.alpha = alpha_ij;
  out.context = c_j;
  return out;
}

template <class T>
void BahdanauDecoder<T>::visit(nn::ModuleVisitor<T>& v) {
  Decoder<T>::visit(v);
  v.module("score", *score);
}

// ---- Luong -----------------------------------------------------------------------------------------------------

template <class T>
LuongDecoder<T>::LuongDecoder(const DecoderConfig& config, Rng& rng)
    : Decoder<T>(config, cell_input_size(config), output_features(config), rng),
      score(make_score<T>(config.score, config.hidden_size, config.annotation_size, attention_size(config), rng)),
      W_c(nn::uniform_init<T>({config.hidden_size, config.annotation_size + config.hidden_size},
                              1.0 / std::sqrt(static_cast<double>(config.annotation_size + config.hidden_size)), rng)) {
}

template <class T>
SourceMemory<T> LuongDecoder<T>::memory(const nn::RecurrentOutput<T>& encoded,
                                        const std::vector<std::int64_t>& lengths) {
  SourceMemory<T> memory = Decoder<T>::memory(encoded, lengths);
  // the part of the score that depends on h_i only, precomputed for every step: (B, S, K)
  memory.keys = score->keys(memory.annotations);
  return memory;
}

template <class T>
DecoderStep<T> LuongDecoder<T>::step(const Ids& y_prev, const DecoderState<T>& state, const SourceMemory<T>& memory) {
  const Variable<T>& s_prev = state.h.back();
  Variable<T> y = this->embed(s_prev, y_prev);  // E y_{j-1}: (B, E)
  DecoderStep<T> out;
  // s_j = f(s_{j-1}, [E y_{j-1}; h̃_{j-1}])  (input feeding), or f(s_{j-1}, E y_{j-1})
  out.state = this->advance(this->config_.input_feeding ? concat<T>({y, state.feed}, 1) : y, state);
  const Variable<T>& s_j = out.state.h.back();
  // e_ij = score(s_j, h_i): (B, S)
  Variable<T> e_ij = score->score(s_j, memory.keys);
  // α_ij = softmax_i(e_ij): (B, S)
  Variable<T> alpha_ij = attention_weights(e_ij, memory.mask);
  // c_j = Σ_i α_ij h_i: (B, A)
  Variable<T> c_j = context(alpha_ij, memory.annotations);
  // h̃_j = tanh(W_c [c_j; s_j]): (B, H)
  Variable<T> h_tilde = tanh(dense(concat<T>({c_j, s_j}, 1), s_j.tape().param(W_c)));
  if (this->config_.input_feeding) out.state.feed = h_tilde;
  out.output = h_tilde;
  out.energies = e_ij;
  out.alpha = alpha_ij;
  out.context = c_j;
  return out;
}

template <class T>
void LuongDecoder<T>::visit(nn::ModuleVisitor<T>& v) {
  Decoder<T>::visit(v);
  v.module("score", *score);
  v.parameter("W_c", W_c);
}

template <class T>
std::unique_ptr<Decoder<T>> make_decoder(const DecoderConfig& config, Rng& rng) {
  switch (config.kind) {
    case DecoderKind::vanilla:
      return std::make_unique<VanillaDecoder<T>>(config, rng);
    case DecoderKind::bahdanau:
      return std::make_unique<BahdanauDecoder<T>>(config, rng);
    case DecoderKind::luong:
      return std::make_unique<LuongDecoder<T>>(config, rng);
  }
  throw std::invalid_argument("make_decoder: unknown decoder kind");
}

#define ATTEND_INSTANTIATE(T)        \
  template class Decoder<T>;         \
  template class VanillaDecoder<T>;  \
  template class BahdanauDecoder<T>; \
  template class LuongDecoder<T>;    \
  template std::unique_ptr<Decoder<T>> make_decoder<T>(const DecoderConfig&, Rng&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend::models
