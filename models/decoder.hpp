// The three decoders of the encoder–decoder models, one decoding step at a time:
//   vanilla  (Cho et al. 2014; Sutskever et al. 2014): one fixed context c for every step — the bottleneck;
//   Bahdanau (Bahdanau et al. 2015): scores on the previous state s_{j-1}, then the step reads the context c_j;
//   Luong    (Luong et al. 2015): the step first, then scores on s_j and the attentional state h̃_j.
// Each step takes the previous target tokens y_{j-1} (a batch of ids), the previous state and the source memory, and
// returns the features the output layer reads, the attention weights α_j (so callers can inspect and draw them) and
// the new state. Training runs the steps with teacher forcing (models/seq2seq.hpp); inference feeds back predictions
// (models/search.hpp). Chapters: docs/03-encoder-decoder.md, docs/08-attention-decoder.md, docs/09-luong.md.
//
// Shapes: batch B, source length S, annotation size A (= D·H_enc, D = 2 for a bidirectional encoder), decoder size H,
// embedding size E, target vocabulary V. The decoder has as many layers as the encoder; layer l starts from the
// encoder's final state of layer l: s_0^l = h_Tx^l when A = H, or, bridged when the encoder is bidirectional,
// s_0^l = tanh(W_b^l [h→_Tx^l; h←_1^l] + b_b^l) (an LSTM's memory cell likewise with its own bridge, without tanh).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/attention.hpp"
#include "nn/layers.hpp"
#include "nn/recurrent.hpp"

namespace attend::models {

enum class DecoderKind { vanilla, bahdanau, luong };

struct DecoderConfig {
  DecoderKind kind = DecoderKind::bahdanau;
  ScoreKind score = ScoreKind::additive;  // Bahdanau: additive; Luong: dot, general or concat; vanilla: unused
  nn::CellKind cell = nn::CellKind::gru;
  std::size_t vocab_size = 0;     // V
  std::size_t embedding_dim = 0;  // E
  std::size_t hidden_size = 0;    // H
  std::size_t num_layers = 1;
  std::size_t annotation_size = 0;     // A, the encoder's output size D·H_enc
  std::size_t encoder_directions = 1;  // D
  std::size_t attention_size = 0;      // of the additive and concat scores; 0 means H
  bool input_feeding = true;           // Luong: feed h̃_{j-1} into the step
  bool output_embedding = true;        // Bahdanau/vanilla: g reads E y_{j-1} besides s_j and c_j
  std::int64_t padding_id = 0;         // target padding id: its embedding row stays 0
};

// The decoder's state between steps.
template <class T>
struct DecoderState {
  std::vector<Variable<T>> h;  // s_j of each layer, (B, H); h.back() is the top layer's
  std::vector<Variable<T>> c;  // an LSTM's memory cell of each layer, (B, H); empty for the other cells
  Variable<T> feed;            // Luong with input feeding: h̃_{j-1}, (B, H); empty otherwise
};

// What the decoder reads of the encoded source, computed once per batch.
template <class T>
struct SourceMemory {
  Variable<T> annotations;  // h_i: (B, S, A)
  Keys<T> keys;             // the score's precomputed part (B, S, K); empty for vanilla
  Variable<T> context;      // vanilla only: the fixed context c = [h→_Tx; h←_1] of the top layer, (B, A)
  Mask mask;                // (B, S): 1 at real source positions
};

// One decoding step's result.
template <class T>
struct DecoderStep {
  Variable<T> output;  // what the output layer reads, (B, F): [s_j; c_j; E y_{j-1}] (Bahdanau, vanilla) or h̃_j (Luong)
  Variable<T> energies;  // e_j: (B, S), the scores α_j is the softmax of (padding's unused); empty for vanilla
  Variable<T> alpha;     // α_j: (B, S), zero at padding; empty for vanilla
  Variable<T> context;   // c_j = Σ_i α_ij h_i: (B, A); empty for vanilla
  DecoderState<T> state;
};

// What the three decoders share: the target embedding E, the stacked cells f, the bridges, and the output layer that
// turns step features into logits, p(y_j | ...) = softmax(W_o output_j + b_o).
// Parameters: "embedding.W", "cells.<l>.<W_ih|W_hh|b_ih|b_hh>", "bridge.<l>.<W|b>" and "bridge_c.<l>.<W|b>" (when
// bridged), "output.<W|b>", and the decoder's own ("score.…", "W_c").
template <class T>
class Decoder : public nn::Module<T> {
 public:
  nn::Embedding<T> embedding;
  std::vector<nn::AnyCell<T>> cells;
  std::vector<nn::Linear<T>> bridge;    // one per layer when bidirectional, else empty
  std::vector<nn::Linear<T>> bridge_c;  // LSTM memory-cell bridges, likewise
  nn::Linear<T> output;                 // W_o: (V, F)

  ~Decoder() override = default;
  // h_i, keys and mask from the encoder's outputs (B, S, A) and the source lengths.
  virtual SourceMemory<T> memory(const nn::RecurrentOutput<T>& encoded, const std::vector<std::int64_t>& lengths);
  // s_0 (and c_0) of every layer from the encoder's final states.
  DecoderState<T> initial_state(const nn::RecurrentOutput<T>& encoded);
  // One step: y_prev (B,) are the tokens y_{j-1} (the start token at j = 1).
  virtual DecoderStep<T> step(const Ids& y_prev, const DecoderState<T>& state, const SourceMemory<T>& memory) = 0;
  // logits = W_o output + b_o: (B, F) → (B, V), or all steps at once, (B, T, F) → (B, T, V).
  Variable<T> logits(const Variable<T>& features) { return output(features); }
  void visit(nn::ModuleVisitor<T>& v) override;
  const DecoderConfig& config() const { return config_; }

 protected:
  Decoder(const DecoderConfig& config, std::size_t cell_input_size, std::size_t output_features, Rng& rng);
  // Runs the stacked cells on x: layer 1 reads x, layer l reads layer l-1's new state. Returns the new h (and c).
  DecoderState<T> advance(const Variable<T>& x, const DecoderState<T>& state);
  Variable<T> embed(const Variable<T>& like, const Ids& y_prev);  // E y_{j-1}: (B, E), on like's tape
  DecoderConfig config_;
};

// Cho et al. / Sutskever et al.: the whole source is one fixed vector c (the bottleneck).
//   s_j = f(s_{j-1}, [E y_{j-1}; c])
//   p(y_j | y_<j, c) = g(y_{j-1}, s_j, c) = softmax(W_o [s_j; c; E y_{j-1}] + b_o)
template <class T>
class VanillaDecoder : public Decoder<T> {
 public:
  VanillaDecoder(const DecoderConfig& config, Rng& rng);
  SourceMemory<T> memory(const nn::RecurrentOutput<T>& encoded, const std::vector<std::int64_t>& lengths) override;
  DecoderStep<T> step(const Ids& y_prev, const DecoderState<T>& state, const SourceMemory<T>& memory) override;
};

// Bahdanau et al. (2015):
//   e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i)
//   α_ij = exp(e_ij) / Σ_k exp(e_kj)
//   c_j = Σ_i α_ij h_i
//   s_j = f(s_{j-1}, [E y_{j-1}; c_j])
//   p(y_j | y_<j, x) = g(y_{j-1}, s_j, c_j) = softmax(W_o [s_j; c_j; E y_{j-1}] + b_o)
// The score may be any of the four (additive is the paper's); it is always computed from s_{j-1} before the step.
template <class T>
class BahdanauDecoder : public Decoder<T> {
 public:
  std::unique_ptr<Score<T>> score;

  BahdanauDecoder(const DecoderConfig& config, Rng& rng);
  // h_i, the mask, and the score's keys (U_a h_i, W_a h_i, …) computed once for all steps.
  SourceMemory<T> memory(const nn::RecurrentOutput<T>& encoded, const std::vector<std::int64_t>& lengths) override;
  DecoderStep<T> step(const Ids& y_prev, const DecoderState<T>& state, const SourceMemory<T>& memory) override;
  void visit(nn::ModuleVisitor<T>& v) override;
};

// Luong et al. (2015), global attention:
//   s_j = f(s_{j-1}, [E y_{j-1}; h̃_{j-1}])     (input feeding; without it, f(s_{j-1}, E y_{j-1}))
//   e_ij = score(s_j, h_i)                     dot, general or concat (additive also works)
//   α_ij = softmax_i(e_ij),  c_j = Σ_i α_ij h_i
//   h̃_j = tanh(W_c [c_j; s_j])                 W_c: (H, A + H), no bias, as in the paper
//   p(y_j | y_<j, x) = softmax(W_o h̃_j + b_o)
// h̃_0 = 0.
template <class T>
class LuongDecoder : public Decoder<T> {
 public:
  std::unique_ptr<Score<T>> score;
  Parameter<T> W_c;

  LuongDecoder(const DecoderConfig& config, Rng& rng);
  // h_i, the mask, and the score's keys (U_a h_i, W_a h_i, …) computed once for all steps.
  SourceMemory<T> memory(const nn::RecurrentOutput<T>& encoded, const std::vector<std::int64_t>& lengths) override;
  DecoderStep<T> step(const Ids& y_prev, const DecoderState<T>& state, const SourceMemory<T>& memory) override;
  void visit(nn::ModuleVisitor<T>& v) override;
};

template <class T>
std::unique_ptr<Decoder<T>> make_decoder(const DecoderConfig& config, Rng& rng);

}  // namespace attend::models
