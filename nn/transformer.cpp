// The Transformer's layers; equations and layouts in transformer.hpp. Tests: tests/nn/test_transformer.cpp.
#include "nn/transformer.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

namespace attend::nn {

// ---- LayerNorm ---------------------------------------------------------------------------------------------------

template <class T>
LayerNorm<T>::LayerNorm(std::size_t size, double eps) : eps_(eps) {
  if (size == 0) throw std::invalid_argument("LayerNorm: size must be positive");
  if (!(eps > 0.0)) throw std::invalid_argument("LayerNorm: eps " + std::to_string(eps) + " must be > 0");
  Tensor<T> ones(Shape{size});
  ones.flat().fill(T(1));
  gamma = Parameter<T>(std::move(ones));
  beta = Parameter<T>(Tensor<T>(Shape{size}));
}

template <class T>
Variable<T> LayerNorm<T>::forward(const Variable<T>& x) {
  Tape<T>& tape = tape_of("LayerNorm", {&x});
  return layer_norm(x, tape.param(gamma), tape.param(beta), eps_);
}

template <class T>
void LayerNorm<T>::visit(ModuleVisitor<T>& v) {
  v.parameter("gamma", gamma);
  v.parameter("beta", beta);
}

// ---- MultiHeadAttention ------------------------------------------------------------------------------------------

template <class T>
MultiHeadAttention<T>::MultiHeadAttention(std::size_t d_model, std::size_t heads, Rng& rng, double dropout)
    : out_proj(d_model == 0 ? 1 : d_model, d_model == 0 ? 1 : d_model, rng),
      d_model_(d_model),
      heads_(heads),
      dropout_(dropout),
      rng_(rng.next()) {
  if (d_model == 0 || heads == 0 || d_model % heads != 0) {
    throw std::invalid_argument("MultiHeadAttention: d_model " + std::to_string(d_model) + " must be a positive " +
                                "multiple of the number of heads " + std::to_string(heads));
  }
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    throw std::invalid_argument("MultiHeadAttention: dropout " + std::to_string(dropout) + " is outside [0, 1)");
  }
  // PyTorch: xavier_uniform_(in_proj_weight) over (3D, D), in_proj_bias and out_proj.bias zero
  W_in = Parameter<T>(uniform_init<T>({3 * d_model, d_model}, xavier_bound(d_model, 3 * d_model), rng));
  b_in = Parameter<T>(Tensor<T>(Shape{3 * d_model}));
  out_proj.b.assign(Tensor<T>(Shape{d_model}));
}

template <class T>
Variable<T> MultiHeadAttention<T>::project(const Variable<T>& x, std::size_t part) {
  Tape<T>& tape = tape_of("MultiHeadAttention", {&x});
  const std::size_t D = d_model_;
  // W_q, W_k or W_v: rows part·D … (part+1)·D − 1 of W_in (and of b_in)
  return dense(x, slice(tape.param(W_in), 0, part * D, (part + 1) * D),
               slice(tape.param(b_in), 0, part * D, (part + 1) * D));
}

template <class T>
Variable<T> MultiHeadAttention<T>::project_q(const Variable<T>& x) {
  return project(x, 0);
}
template <class T>
Variable<T> MultiHeadAttention<T>::project_k(const Variable<T>& x) {
  return project(x, 1);
}
template <class T>
Variable<T> MultiHeadAttention<T>::project_v(const Variable<T>& x) {
  return project(x, 2);
}

template <class T>
Variable<T> MultiHeadAttention<T>::attend(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v,
                                          const AttentionMask& mask, Tensor<T>* weights) {
  AttentionOptions options;
  options.heads = heads_;
  if (mask.key_padding != nullptr) options.key_padding = *mask.key_padding;
  options.causal = mask.causal;
  options.dropout = dropout_;
  options.training = this->training();
  options.rng = &rng_.on(q.tape());
  return out_proj(scaled_dot_product_attention(q, k, v, options, weights));
}

template <class T>
Variable<T> MultiHeadAttention<T>::forward(const Variable<T>& x, const AttentionMask& mask, Tensor<T>* weights) {
  Tape<T>& tape = tape_of("MultiHeadAttention", {&x});
  if (x.shape().rank() != 3 || x.shape()[2] != d_model_) {
    throw std::invalid_argument("MultiHeadAttention: x " + to_string(x.shape()) + " is not (B, T, " +
                                std::to_string(d_model_) + ")");
  }
  // [Q K V] = x W_inᵀ + b_in: one product for the three projections, then each is a third of the columns
  const std::size_t D = d_model_;
  const Variable<T> qkv = dense(x, tape.param(W_in), tape.param(b_in));
  return attend(slice(qkv, -1, 0, D), slice(qkv, -1, D, 2 * D), slice(qkv, -1, 2 * D, 3 * D), mask, weights);
}

template <class T>
Variable<T> MultiHeadAttention<T>::forward(const Variable<T>& x, const Variable<T>& memory, const AttentionMask& mask,
                                           Tensor<T>* weights) {
  tape_of("MultiHeadAttention", {&x, &memory});  // both on one tape
  const Shape& sx = x.shape();
  const Shape& sm = memory.shape();
  if (sx.rank() != 3 || sx[2] != d_model_ || sm.rank() != 3 || sm[0] != sx[0] || sm[2] != d_model_) {
    throw std::invalid_argument("MultiHeadAttention: x " + to_string(sx) + " and memory " + to_string(sm) +
                                " are not (B, T_q, " + std::to_string(d_model_) + ") and (B, T_k, " +
                                std::to_string(d_model_) + ")");
  }
  const auto [k, v] = project_kv(memory);
  return attend(project_q(x), k, v, mask, weights);
}

template <class T>
std::pair<Variable<T>, Variable<T>> MultiHeadAttention<T>::project_kv(const Variable<T>& memory) {
  Tape<T>& tape = tape_of("MultiHeadAttention", {&memory});
  // [K V] = memory [W_k; W_v]ᵀ + [b_k; b_v] in one product
  const std::size_t D = d_model_;
  const Variable<T> kv = dense(memory, slice(tape.param(W_in), 0, D, 3 * D), slice(tape.param(b_in), 0, D, 3 * D));
  return {slice(kv, -1, 0, D), slice(kv, -1, D, 2 * D)};
}

template <class T>
void MultiHeadAttention<T>::visit(ModuleVisitor<T>& v) {
  v.parameter("W_in", W_in);
  v.parameter("b_in", b_in);
  v.module("out_proj", out_proj);
  v.generator("rng", rng_.state());
}

// ---- positions ---------------------------------------------------------------------------------------------------

template <class T>
Tensor<T> sinusoidal_positions(std::size_t length, std::size_t d_model) {
  Tensor<T> pe(Shape{length, d_model});
  for (std::size_t p = 0; p < length; ++p) {
    for (std::size_t i = 0; 2 * i < d_model; ++i) {
      // the angle in float as PyTorch's reference computes it would differ in the last bit; double then rounded
      const double angle = static_cast<double>(p) / std::pow(10000.0, static_cast<double>(2 * i) / d_model);
      pe.at({p, 2 * i}) = static_cast<T>(std::sin(angle));
      if (2 * i + 1 < d_model) pe.at({p, 2 * i + 1}) = static_cast<T>(std::cos(angle));
    }
  }
  return pe;
}

// ---- encoder and decoder layers ----------------------------------------------------------------------------------

namespace {

void check_config(const TransformerLayerConfig& c, const char* who) {
  if (c.ff == 0) throw std::invalid_argument(std::string(who) + ": ff (dim_feedforward) must be positive");
  if (!(c.dropout >= 0.0 && c.dropout < 1.0)) {
    throw std::invalid_argument(std::string(who) + ": dropout " + std::to_string(c.dropout) + " is outside [0, 1)");
  }
}

}  // namespace

template <class T>
TransformerEncoderLayer<T>::TransformerEncoderLayer(const TransformerLayerConfig& c, Rng& rng)
    : self_attn((check_config(c, "TransformerEncoderLayer"), c.d_model), c.heads, rng, c.dropout),
      linear1(c.d_model, c.ff, rng),
      linear2(c.ff, c.d_model, rng),
      norm1(c.d_model, c.eps),
      norm2(c.d_model, c.eps),
      dropout(c.dropout, rng.next()),
      dropout1(c.dropout, rng.next()),
      dropout2(c.dropout, rng.next()),
      norm_first_(c.norm_first) {}

template <class T>
Variable<T> TransformerEncoderLayer<T>::feed_forward(const Variable<T>& x) {
  return linear2(dropout(relu(linear1(x))));
}

template <class T>
Variable<T> TransformerEncoderLayer<T>::forward(const Variable<T>& x, const AttentionMask& mask,
                                                Tensor<T>* self_weights) {
  if (norm_first_) {
    const Variable<T> h = x + dropout1(self_attn.forward(norm1(x), mask, self_weights));
    return h + dropout2(feed_forward(norm2(h)));
  }
  const Variable<T> h = norm1(x + dropout1(self_attn.forward(x, mask, self_weights)));
  return norm2(h + dropout2(feed_forward(h)));
}

template <class T>
void TransformerEncoderLayer<T>::visit(ModuleVisitor<T>& v) {
  v.module("self_attn", self_attn);
  v.module("linear1", linear1);
  v.module("linear2", linear2);
  v.module("norm1", norm1);
  v.module("norm2", norm2);
  v.module("dropout", dropout);
  v.module("dropout1", dropout1);
  v.module("dropout2", dropout2);
}

template <class T>
TransformerDecoderLayer<T>::TransformerDecoderLayer(const TransformerLayerConfig& c, Rng& rng)
    : self_attn((check_config(c, "TransformerDecoderLayer"), c.d_model), c.heads, rng, c.dropout),
      multihead_attn(c.d_model, c.heads, rng, c.dropout),
      linear1(c.d_model, c.ff, rng),
      linear2(c.ff, c.d_model, rng),
      norm1(c.d_model, c.eps),
      norm2(c.d_model, c.eps),
      norm3(c.d_model, c.eps),
      dropout(c.dropout, rng.next()),
      dropout1(c.dropout, rng.next()),
      dropout2(c.dropout, rng.next()),
      dropout3(c.dropout, rng.next()),
      norm_first_(c.norm_first) {}

template <class T>
Variable<T> TransformerDecoderLayer<T>::feed_forward(const Variable<T>& x) {
  return linear2(dropout(relu(linear1(x))));
}

template <class T>
template <class SelfAttention, class CrossAttention>
Variable<T> TransformerDecoderLayer<T>::sublayers(const Variable<T>& y, SelfAttention&& self, CrossAttention&& cross) {
  if (norm_first_) {
    const Variable<T> a = y + dropout1(self(norm1(y)));
    const Variable<T> b = a + dropout2(cross(norm2(a)));
    return b + dropout3(feed_forward(norm3(b)));
  }
  const Variable<T> a = norm1(y + dropout1(self(y)));
  const Variable<T> b = norm2(a + dropout2(cross(a)));
  return norm3(b + dropout3(feed_forward(b)));
}

template <class T>
Variable<T> TransformerDecoderLayer<T>::forward(const Variable<T>& y, const Variable<T>& memory,
                                                const Mask* memory_padding, Tensor<T>* self_weights,
                                                Tensor<T>* cross_weights) {
  return sublayers(
      y,
      [&](const Variable<T>& x) {
        return self_attn.forward(x, AttentionMask{nullptr, true}, self_weights);
      },
      [&](const Variable<T>& x) {
        return multihead_attn.forward(x, memory, AttentionMask{memory_padding, false}, cross_weights);
      });
}

template <class T>
void TransformerDecoderLayer<T>::cache_memory(const Variable<T>& memory, DecoderLayerCache<T>& cache) {
  std::tie(cache.cross_k, cache.cross_v) = multihead_attn.project_kv(memory);
}

template <class T>
Variable<T> TransformerDecoderLayer<T>::step(const Variable<T>& y_t, DecoderLayerCache<T>& cache,
                                             const Mask* memory_padding, Tensor<T>* self_weights,
                                             Tensor<T>* cross_weights) {
  if (y_t.shape().rank() != 3 || y_t.shape()[1] != 1 || cache.cross_k.empty()) {
    throw std::invalid_argument("TransformerDecoderLayer::step: y_t " + to_string(y_t.shape()) +
                                (cache.cross_k.empty() ? " with no memory in the cache (call cache_memory first)"
                                                       : " is not one position (B, 1, D)"));
  }
  const auto self = [&](const Variable<T>& x) {
    // the new position's key and value join the cache; it attends to every position so far (itself included),
    // which is the causal mask's row for it
    const Variable<T> k = self_attn.project_k(x);
    const Variable<T> v = self_attn.project_v(x);
    cache.self_k = cache.self_k.empty() ? k : concat(std::vector<Variable<T>>{cache.self_k, k}, 1);
    cache.self_v = cache.self_v.empty() ? v : concat(std::vector<Variable<T>>{cache.self_v, v}, 1);
    return self_attn.attend(self_attn.project_q(x), cache.self_k, cache.self_v, AttentionMask{}, self_weights);
  };
  const auto cross = [&](const Variable<T>& x) {
    return multihead_attn.attend(multihead_attn.project_q(x), cache.cross_k, cache.cross_v,
                                 AttentionMask{memory_padding, false}, cross_weights);
  };
  return sublayers(y_t, self, cross);
}

template <class T>
void TransformerDecoderLayer<T>::visit(ModuleVisitor<T>& v) {
  v.module("self_attn", self_attn);
  v.module("multihead_attn", multihead_attn);
  v.module("linear1", linear1);
  v.module("linear2", linear2);
  v.module("norm1", norm1);
  v.module("norm2", norm2);
  v.module("norm3", norm3);
  v.module("dropout", dropout);
  v.module("dropout1", dropout1);
  v.module("dropout2", dropout2);
  v.module("dropout3", dropout3);
}

// ---- stacks ------------------------------------------------------------------------------------------------------

namespace {

// Layer l's place in a stack's weights (nullptr: none asked for); at layer 0 the vector is made one per layer.
template <class T>
Tensor<T>* layer_place(std::vector<Tensor<T>>* weights, std::size_t l, std::size_t layers) {
  if (weights == nullptr) return nullptr;
  if (l == 0) weights->assign(layers, Tensor<T>());
  return &(*weights)[l];
}

}  // namespace

template <class T>
TransformerEncoder<T>::TransformerEncoder(const TransformerLayerConfig& c, std::size_t num_layers, Rng& rng)
    : norm(c.d_model, c.eps) {
  if (num_layers == 0) throw std::invalid_argument("TransformerEncoder: num_layers must be positive");
  for (std::size_t l = 0; l < num_layers; ++l) layers.emplace_back(c, rng);
}

template <class T>
Variable<T> TransformerEncoder<T>::forward(const Variable<T>& x, const AttentionMask& mask,
                                           std::vector<Tensor<T>>* self_weights) {
  Variable<T> h = x;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    h = layers[l].forward(h, mask, layer_place(self_weights, l, layers.size()));
  }
  return norm(h);
}

template <class T>
void TransformerEncoder<T>::visit(ModuleVisitor<T>& v) {
  for (std::size_t l = 0; l < layers.size(); ++l) v.module("layers." + std::to_string(l), layers[l]);
  v.module("norm", norm);
}

template <class T>
TransformerDecoder<T>::TransformerDecoder(const TransformerLayerConfig& c, std::size_t num_layers, Rng& rng)
    : norm(c.d_model, c.eps) {
  if (num_layers == 0) throw std::invalid_argument("TransformerDecoder: num_layers must be positive");
  for (std::size_t l = 0; l < num_layers; ++l) layers.emplace_back(c, rng);
}

template <class T>
Variable<T> TransformerDecoder<T>::forward(const Variable<T>& y, const Variable<T>& memory, const Mask* memory_padding,
                                           std::vector<Tensor<T>>* self_weights,
                                           std::vector<Tensor<T>>* cross_weights) {
  Variable<T> h = y;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    h = layers[l].forward(h, memory, memory_padding, layer_place(self_weights, l, layers.size()),
                          layer_place(cross_weights, l, layers.size()));
  }
  return norm(h);
}

template <class T>
std::vector<DecoderLayerCache<T>> TransformerDecoder<T>::start_cache(const Variable<T>& memory) {
  std::vector<DecoderLayerCache<T>> caches(layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l) layers[l].cache_memory(memory, caches[l]);
  return caches;
}

template <class T>
Variable<T> TransformerDecoder<T>::step(const Variable<T>& y_t, std::vector<DecoderLayerCache<T>>& caches,
                                        const Mask* memory_padding, std::vector<Tensor<T>>* self_weights,
                                        std::vector<Tensor<T>>* cross_weights) {
  if (caches.size() != layers.size()) {
    throw std::invalid_argument("TransformerDecoder::step: " + std::to_string(caches.size()) + " caches for " +
                                std::to_string(layers.size()) + " layers (use start_cache)");
  }
  Variable<T> h = y_t;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    h = layers[l].step(h, caches[l], memory_padding, layer_place(self_weights, l, layers.size()),
                       layer_place(cross_weights, l, layers.size()));
  }
  return norm(h);
}

template <class T>
void TransformerDecoder<T>::visit(ModuleVisitor<T>& v) {
  for (std::size_t l = 0; l < layers.size(); ++l) v.module("layers." + std::to_string(l), layers[l]);
  v.module("norm", norm);
}

template <class T>
Transformer<T>::Transformer(const TransformerLayerConfig& c, std::size_t encoder_layers, std::size_t decoder_layers,
                            Rng& rng)
    : encoder(c, encoder_layers, rng), decoder(c, decoder_layers, rng) {
  // nn.Transformer._reset_parameters: xavier_uniform_ on every parameter of rank > 1, in the state_dict's order
  for (auto& [name, p] : this->parameters()) {
    const Shape s = p->value.shape();
    if (s.rank() == 2) p->assign(uniform_init<T>(s, xavier_bound(s[1], s[0]), rng));
  }
}

template <class T>
Variable<T> Transformer<T>::forward(const Variable<T>& src, const Variable<T>& tgt, const Mask* src_padding,
                                    AttentionWeights<T>* weights) {
  if (weights == nullptr) return decoder.forward(tgt, encoder.forward(src, src_padding), src_padding);
  return decoder.forward(tgt, encoder.forward(src, src_padding, &weights->encoder), src_padding, &weights->decoder,
                         &weights->cross);
}

template <class T>
void Transformer<T>::visit(ModuleVisitor<T>& v) {
  v.module("encoder", encoder);
  v.module("decoder", decoder);
}

// ---- names -------------------------------------------------------------------------------------------------------

std::string pytorch_transformer_name(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  const std::string path = dot == std::string::npos ? "" : name.substr(0, dot + 1);
  const std::string last = dot == std::string::npos ? name : name.substr(dot + 1);
  if (last == "in_proj_weight") return path + "W_in";
  if (last == "in_proj_bias") return path + "b_in";
  if (last != "weight" && last != "bias") return name;
  // the module that owns it: the part before `last`
  const std::size_t before = path.empty() ? std::string::npos : path.rfind('.', path.size() - 2);
  const std::string owner = path.empty() ? "" : path.substr(before == std::string::npos ? 0 : before + 1);
  const bool norm = owner.compare(0, 4, "norm") == 0;
  if (last == "weight") return path + (norm ? "gamma" : "W");
  return path + (norm ? "beta" : "b");
}

#define ATTEND_INSTANTIATE(T)                                        \
  template class LayerNorm<T>;                                       \
  template class MultiHeadAttention<T>;                              \
  template Tensor<T> sinusoidal_positions(std::size_t, std::size_t); \
  template class TransformerEncoderLayer<T>;                         \
  template class TransformerDecoderLayer<T>;                         \
  template class TransformerEncoder<T>;                              \
  template class TransformerDecoder<T>;                              \
  template class Transformer<T>;
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend::nn
