// The basic layers: Linear, Conv2d, Embedding, Dropout, and the two losses. Weight layouts are PyTorch's, so a
// state_dict's tensors load into these parameters unchanged. Chapter: docs/02-encoder.md; API: docs/reference/nn.md.
#pragma once

#include <cstdint>

#include "nn/generator.hpp"
#include "nn/module.hpp"
#include "ops/fused.hpp"
#include "ops/images.hpp"
#include "precision/products.hpp"

namespace attend::nn {

// y = x Wᵀ + b
// x: (batch, in) or (batch, time, in) → y: (batch, out) or (batch, time, out)
// W: (out, in) and b: (out,) as torch.nn.Linear (weight, bias); initialised U(-1/√in, 1/√in) like PyTorch, or Xavier.
template <class T>
class Linear : public Module<T> {
 public:
  Parameter<T> W;
  Parameter<T> b;  // empty when the layer has no bias

  Linear(std::size_t in_features, std::size_t out_features, Rng& rng, bool bias = true,
         Init init = Init::pytorch_default);
  Variable<T> forward(const Variable<T>& x);
  Variable<T> operator()(const Variable<T>& x) { return forward(x); }
  void visit(ModuleVisitor<T>& v) override;
  std::size_t in_features() const { return W.value.shape()[1]; }
  std::size_t out_features() const { return W.value.shape()[0]; }
  bool has_bias() const { return has_bias_; }

 private:
  bool has_bias_;
};

// y = conv2d(x, W, b): y[n,o,i,j] = b[o] + Σ_{c,u,v} W[o,c,u,v] x̃[n,c,i·s+u,j·s+v], x̃ = x zero-padded by p
// x: (batch, in_channels, H, W) → y: (batch, out_channels, H', W'), H' = ⌊(H + 2p − k)/s⌋ + 1, likewise W'.
// W: (out, in, k, k) and b: (out,) as torch.nn.Conv2d (weight, bias); both U(-1/√fan_in, 1/√fan_in), fan_in = in·k·k,
// the bound PyTorch's default initialisation gives.
template <class T>
class Conv2d : public Module<T> {
 public:
  Parameter<T> W;
  Parameter<T> b;  // empty when the layer has no bias

  Conv2d(std::size_t in_channels, std::size_t out_channels, std::size_t kernel_size, Rng& rng,
         Conv2dOptions options = {}, bool bias = true);
  Variable<T> forward(const Variable<T>& x);
  Variable<T> operator()(const Variable<T>& x) { return forward(x); }
  void visit(ModuleVisitor<T>& v) override;
  std::size_t in_channels() const { return W.value.shape()[1]; }
  std::size_t out_channels() const { return W.value.shape()[0]; }
  std::size_t kernel_size() const { return W.value.shape()[2]; }
  const Conv2dOptions& options() const { return options_; }
  bool has_bias() const { return has_bias_; }

 private:
  Conv2dOptions options_;
  bool has_bias_;
};

// y[..., :] = W[ids[...], :]
// ids: any shape of rank ≤ 3 → y: (ids..., dim). W: (num_embeddings, dim) as torch.nn.Embedding.weight, N(0, 1).
// The row of padding_id (if ≥ 0) starts at zero and never receives a gradient, as in PyTorch.
template <class T>
class Embedding : public Module<T> {
 public:
  Parameter<T> W;

  Embedding(std::size_t num_embeddings, std::size_t dim, Rng& rng, std::int64_t padding_id = -1);
  Variable<T> forward(Tape<T>& tape, const Ids& ids);
  Variable<T> operator()(Tape<T>& tape, const Ids& ids) { return forward(tape, ids); }
  void visit(ModuleVisitor<T>& v) override;
  std::int64_t padding_id() const { return padding_id_; }

 private:
  std::int64_t padding_id_;
};

// y = x ⊙ m / (1 - p), m_i ~ Bernoulli(1 - p) drawn from rng; y = x (the same node) when not training or p = 0. Not
// an op of its own: the product of x with a constant mask (mul), so dx += dy ⊙ m / (1 - p) is mul's derivative.
template <class T>
Variable<T> dropout(const Variable<T>& x, double p, bool training, Rng& rng);

// y = x ⊙ m / (1 - p) with m ~ Bernoulli(1 - p) in training mode; y = x in evaluation mode.
// Owns its generator, seeded at construction, so a run is repeatable.
template <class T>
class Dropout : public Module<T> {
 public:
  explicit Dropout(double p, std::uint64_t seed = 0);
  Variable<T> forward(const Variable<T>& x);
  Variable<T> operator()(const Variable<T>& x) { return forward(x); }
  void visit(ModuleVisitor<T>& v) override { v.generator("rng", rng_.state()); }
  double p() const { return p_; }

 private:
  double p_;
  RandomStream rng_;
};

// Mean cross-entropy over the targets that are not ignore_id (the padding id), from logits (..., C) and ids (...);
// optional label smoothing ε (target distribution (1 - ε) onehot + ε/C), as torch.nn.CrossEntropyLoss(ignore_index,
// label_smoothing). Constructed with its options, which it checks (ε in [0, 1]) and keeps:
//   nn::CrossEntropyLoss loss(/*ignore_id=*/pad_id, /*label_smoothing=*/0.1);  Variable<float> y = loss(logits, ids);
class CrossEntropyLoss {
 public:
  explicit CrossEntropyLoss(std::int64_t ignore_id = -100, double label_smoothing = 0.0);
  template <class T>
  Variable<T> operator()(const Variable<T>& logits, const Ids& targets) const {
    return cross_entropy(logits, targets, ignore_id_, label_smoothing_);
  }
  std::int64_t ignore_id() const { return ignore_id_; }
  double label_smoothing() const { return label_smoothing_; }

 private:
  std::int64_t ignore_id_;
  double label_smoothing_;
};

// Mean negative log-likelihood from log-probabilities (..., C), as torch.nn.NLLLoss.
class NLLLoss {
 public:
  explicit NLLLoss(std::int64_t ignore_id = -100) : ignore_id_(ignore_id) {}
  template <class T>
  Variable<T> operator()(const Variable<T>& log_probs, const Ids& targets) const {
    return nll_loss(log_probs, targets, ignore_id_);
  }
  std::int64_t ignore_id() const { return ignore_id_; }

 private:
  std::int64_t ignore_id_;
};

}  // namespace attend::nn
