// The Transformer's layers (Vaswani et al. 2017): layer normalisation, multi-head attention, sinusoidal positions, and
// the encoder and decoder layers and stacks of torch.nn.Transformer — post-norm (the paper's) or pre-norm — with its
// module tree and weight layouts, so that a state_dict loads by name (pytorch_transformer_name maps the names).
// Chapter: docs/14-transformer.md (issue 20); API: docs/reference/nn.md ("The Transformer's layers").
//
// Shapes: batch first, as torch.nn.Transformer(batch_first=True): x (B, T, D) with D = d_model; H heads of
// d_k = D / H columns each, side by side in the last axis (the layout scaled_dot_product_attention reads in place).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/generator.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"
#include "ops/fused.hpp"

namespace attend::nn {

// y = γ ⊙ (x − μ) / √(σ² + ε) + β over the last axis, as torch.nn.LayerNorm(D, eps): γ (D,) = weight starts at 1,
// β (D,) = bias at 0.
template <class T>
class LayerNorm : public Module<T> {
 public:
  Parameter<T> gamma;
  Parameter<T> beta;

  explicit LayerNorm(std::size_t size, double eps = 1e-5);
  Variable<T> forward(const Variable<T>& x);
  Variable<T> operator()(const Variable<T>& x) { return forward(x); }
  void visit(ModuleVisitor<T>& v) override;
  double eps() const { return eps_; }

 private:
  double eps_;
};

// What an attention layer may not look at: padded keys (B, T_k), 1 = real (nullptr: none), and future positions.
struct AttentionMask {
  const Mask* key_padding = nullptr;
  bool causal = false;
};

// Multi-head attention, as torch.nn.MultiheadAttention(D, H, dropout, batch_first=True) with kdim = vdim = D:
//   Q = x_q W_qᵀ + b_q,  K = x_kv W_kᵀ + b_k,  V = x_kv W_vᵀ + b_v            (B, T, D) each, H heads side by side
//   head_h = softmax(Q_h K_hᵀ / √d_k) V_h  (masked, dropout on the weights), y = [head_1 … head_H] W_oᵀ + b_o
// W_in (3D, D) = [W_q; W_k; W_v] stacked as PyTorch's in_proj_weight, b_in (3D,) its in_proj_bias, out_proj the
// Linear(D, D) PyTorch calls out_proj. Initialised as PyTorch: W_in Xavier-uniform, b_in and out_proj's bias 0,
// out_proj's weight U(−1/√D, 1/√D).
template <class T>
class MultiHeadAttention : public Module<T> {
 public:
  Parameter<T> W_in;
  Parameter<T> b_in;
  Linear<T> out_proj;

  MultiHeadAttention(std::size_t d_model, std::size_t heads, Rng& rng, double dropout = 0.0);
  // self-attention: queries, keys and values all from x (B, T, D) → (B, T, D)
  Variable<T> forward(const Variable<T>& x, const AttentionMask& mask = {}, Tensor<T>* weights = nullptr);
  // cross-attention: queries from x (B, T_q, D), keys and values from memory (B, T_k, D) → (B, T_q, D)
  Variable<T> forward(const Variable<T>& x, const Variable<T>& memory, const AttentionMask& mask = {},
                      Tensor<T>* weights = nullptr);

  // The pieces, for decoding with a cache: the projections, and attention from projected q, k, v (then out_proj).
  Variable<T> project_q(const Variable<T>& x);  // (B, T, D) → Q
  Variable<T> project_k(const Variable<T>& x);  // → K
  Variable<T> project_v(const Variable<T>& x);  // → V
  // K and V of a memory with one product, as forward(x, memory) computes them: what a decoder caches once.
  std::pair<Variable<T>, Variable<T>> project_kv(const Variable<T>& memory);
  Variable<T> attend(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v, const AttentionMask& mask,
                     Tensor<T>* weights = nullptr);

  void visit(ModuleVisitor<T>& v) override;
  std::size_t d_model() const { return d_model_; }
  std::size_t heads() const { return heads_; }
  double dropout() const { return dropout_; }

 private:
  Variable<T> project(const Variable<T>& x, std::size_t part);  // rows part·D … (part+1)·D − 1 of W_in, b_in
  std::size_t d_model_, heads_;
  double dropout_;
  RandomStream rng_;  // the attention weights' dropout
};

// The attention weights of a Transformer's forward pass, per layer, each (B, H, T_q, T_k) — what
// torch.nn.MultiheadAttention returns with need_weights=True, average_attn_weights=False: rows over the keys, summing
// to 1 over the real ones (padded keys 0). The layers and stacks below take a place for each kind of weights they
// have (a Tensor per layer, a vector per stack) and fill the ones they are given; given none (nullptr), they copy no
// weights at all (the fused attention does not write them).
template <class T>
struct AttentionWeights {
  std::vector<Tensor<T>> encoder;  // encoder self-attention (B, H, S, S), one per encoder layer
  std::vector<Tensor<T>> decoder;  // decoder self-attention (B, H, T, T), causal: 0 above the diagonal
  std::vector<Tensor<T>> cross;    // the decoder's attention over the encoder's output (B, H, T, S)
};

// PE[p, 2i] = sin(p / 10000^(2i/D)), PE[p, 2i+1] = cos(p / 10000^(2i/D)): (length, D), added to the embeddings.
template <class T>
Tensor<T> sinusoidal_positions(std::size_t length, std::size_t d_model);

struct TransformerLayerConfig {
  std::size_t d_model = 512;
  std::size_t heads = 8;
  std::size_t ff = 2048;    // dim_feedforward
  double dropout = 0.1;     // after attention, inside and after the feed-forward, and on the attention weights
  bool norm_first = false;  // false: post-norm, x = norm(x + f(x)) (the paper); true: pre-norm, x = x + f(norm(x))
  double eps = 1e-5;        // of every LayerNorm
};

// torch.nn.TransformerEncoderLayer(batch_first=True, activation=relu):
//   post-norm: x = norm1(x + dropout1(self_attn(x)));  x = norm2(x + dropout2(ff(x)))
//   pre-norm:  x = x + dropout1(self_attn(norm1(x)));  x = x + dropout2(ff(norm2(x)))
//   ff(x) = linear2(dropout(relu(linear1(x))))
template <class T>
class TransformerEncoderLayer : public Module<T> {
 public:
  MultiHeadAttention<T> self_attn;
  Linear<T> linear1;  // (F, D)
  Linear<T> linear2;  // (D, F)
  LayerNorm<T> norm1;
  LayerNorm<T> norm2;
  Dropout<T> dropout, dropout1, dropout2;

  TransformerEncoderLayer(const TransformerLayerConfig& config, Rng& rng);
  // x (B, S, D), key_padding (B, S) or nullptr → (B, S, D); self_weights (B, H, S, S) if given
  Variable<T> forward(const Variable<T>& x, const Mask* key_padding = nullptr, Tensor<T>* self_weights = nullptr) {
    return forward(x, AttentionMask{key_padding, false}, self_weights);
  }
  // The same with self-attention's mask given whole: {.causal = true} lets position i attend to positions ≤ i only
  // (torch's is_causal=True), as a decoder-only language model needs (examples/language_model.cpp).
  Variable<T> forward(const Variable<T>& x, const AttentionMask& mask, Tensor<T>* self_weights = nullptr);
  void visit(ModuleVisitor<T>& v) override;
  bool norm_first() const { return norm_first_; }

 private:
  Variable<T> feed_forward(const Variable<T>& x);
  bool norm_first_;
};

// What one decoder layer keeps between the steps of incremental decoding: the keys and values of the positions decoded
// so far (B, t, D) and of the memory (B, S, D), computed once. Empty until the first step / cache_memory().
template <class T>
struct DecoderLayerCache {
  Variable<T> self_k, self_v;
  Variable<T> cross_k, cross_v;
};

// torch.nn.TransformerDecoderLayer(batch_first=True, activation=relu), with a causal mask on self-attention:
//   post-norm: y = norm1(y + dropout1(self_attn(y)));  y = norm2(y + dropout2(multihead_attn(y, memory)));
//              y = norm3(y + dropout3(ff(y)))
//   pre-norm:  y = y + dropout1(self_attn(norm1(y)));  y = y + dropout2(multihead_attn(norm2(y), memory));
//              y = y + dropout3(ff(norm3(y)))
template <class T>
class TransformerDecoderLayer : public Module<T> {
 public:
  MultiHeadAttention<T> self_attn;
  MultiHeadAttention<T> multihead_attn;  // cross-attention over the encoder's output
  Linear<T> linear1;
  Linear<T> linear2;
  LayerNorm<T> norm1;
  LayerNorm<T> norm2;
  LayerNorm<T> norm3;
  Dropout<T> dropout, dropout1, dropout2, dropout3;

  TransformerDecoderLayer(const TransformerLayerConfig& config, Rng& rng);
  // y (B, T, D), memory (B, S, D), memory_padding (B, S) or nullptr → (B, T, D); if given, self_weights (B, H, T, T)
  // and cross_weights (B, H, T, S)
  Variable<T> forward(const Variable<T>& y, const Variable<T>& memory, const Mask* memory_padding = nullptr,
                      Tensor<T>* self_weights = nullptr, Tensor<T>* cross_weights = nullptr);
  // Incremental decoding: the memory's keys and values into `cache`, once; then step() takes the next position y_t
  // (B, 1, D), appends its key and value to the cache and returns the layer's output there (B, 1, D) — what forward()
  // gives at that position for the whole prefix (the same equations; the causal mask is the cache's length). Its
  // weights, if asked for, are that position's rows: self (B, H, 1, t + 1), cross (B, H, 1, S).
  void cache_memory(const Variable<T>& memory, DecoderLayerCache<T>& cache);
  Variable<T> step(const Variable<T>& y_t, DecoderLayerCache<T>& cache, const Mask* memory_padding = nullptr,
                   Tensor<T>* self_weights = nullptr, Tensor<T>* cross_weights = nullptr);
  void visit(ModuleVisitor<T>& v) override;
  bool norm_first() const { return norm_first_; }

 private:
  Variable<T> feed_forward(const Variable<T>& x);
  // The layer's residuals, norms and feed-forward around its two attentions, given as functions of their inputs.
  template <class SelfAttention, class CrossAttention>
  Variable<T> sublayers(const Variable<T>& y, SelfAttention&& self, CrossAttention&& cross);
  bool norm_first_;
};

// torch.nn.TransformerEncoder: `layers` in turn, then the final LayerNorm `norm` (nn.Transformer adds it in both norm
// modes).
template <class T>
class TransformerEncoder : public Module<T> {
 public:
  std::vector<TransformerEncoderLayer<T>> layers;
  LayerNorm<T> norm;

  TransformerEncoder(const TransformerLayerConfig& config, std::size_t num_layers, Rng& rng);
  // self_weights, if given, receives each layer's self-attention weights (B, H, S, S)
  Variable<T> forward(const Variable<T>& x, const Mask* key_padding = nullptr,
                      std::vector<Tensor<T>>* self_weights = nullptr) {
    return forward(x, AttentionMask{key_padding, false}, self_weights);
  }
  // The same with every layer's self-attention mask given whole ({.causal = true}: a decoder-only stack).
  Variable<T> forward(const Variable<T>& x, const AttentionMask& mask, std::vector<Tensor<T>>* self_weights = nullptr);
  void visit(ModuleVisitor<T>& v) override;
};

// torch.nn.TransformerDecoder: `layers` in turn, then `norm`. self_weights and cross_weights, if given, receive each
// layer's self-attention weights (B, H, T, T) and cross-attention weights (B, H, T, S).
template <class T>
class TransformerDecoder : public Module<T> {
 public:
  std::vector<TransformerDecoderLayer<T>> layers;
  LayerNorm<T> norm;

  TransformerDecoder(const TransformerLayerConfig& config, std::size_t num_layers, Rng& rng);
  Variable<T> forward(const Variable<T>& y, const Variable<T>& memory, const Mask* memory_padding = nullptr,
                      std::vector<Tensor<T>>* self_weights = nullptr, std::vector<Tensor<T>>* cross_weights = nullptr);
  // Incremental decoding (TransformerDecoderLayer::step): one cache per layer, made by start_cache(memory); the
  // weights are the new position's rows.
  std::vector<DecoderLayerCache<T>> start_cache(const Variable<T>& memory);
  Variable<T> step(const Variable<T>& y_t, std::vector<DecoderLayerCache<T>>& caches,
                   const Mask* memory_padding = nullptr, std::vector<Tensor<T>>* self_weights = nullptr,
                   std::vector<Tensor<T>>* cross_weights = nullptr);
  void visit(ModuleVisitor<T>& v) override;
};

// torch.nn.Transformer(batch_first=True): `encoder` and `decoder` stacks, the decoder's self-attention causal, the
// source padding mask on the encoder's self-attention and on every cross-attention. Its inputs are already embedded
// (and positioned): src (B, S, D), tgt (B, T, D) → (B, T, D). Initialised as PyTorch's nn.Transformer: every weight
// matrix (rank 2) Xavier-uniform.
template <class T>
class Transformer : public Module<T> {
 public:
  TransformerEncoder<T> encoder;
  TransformerDecoder<T> decoder;

  Transformer(const TransformerLayerConfig& config, std::size_t encoder_layers, std::size_t decoder_layers, Rng& rng);
  // src_padding (B, S), 1 = real position, or nullptr; weights, if given, receives every attention's weights
  Variable<T> forward(const Variable<T>& src, const Variable<T>& tgt, const Mask* src_padding = nullptr,
                      AttentionWeights<T>* weights = nullptr);
  void visit(ModuleVisitor<T>& v) override;
};

// A parameter name of torch.nn.Transformer's state_dict (or of any module built from its layers) as attend names it:
// in_proj_weight → W_in, in_proj_bias → b_in, <norm…>.weight → <norm…>.gamma, <norm…>.bias → beta, any other
// .weight → .W, .bias → .b; the path before the last part is kept ("encoder.layers.0.linear1.weight" →
// "encoder.layers.0.linear1.W").
std::string pytorch_transformer_name(const std::string& name);

}  // namespace attend::nn
