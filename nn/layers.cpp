// Linear, Conv2d, Embedding and Dropout (layers.hpp).
#include "nn/layers.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attend::nn {

template <class T>
Linear<T>::Linear(std::size_t in_features, std::size_t out_features, Rng& rng, bool bias, Init init) : has_bias_(bias) {
  if (in_features == 0 || out_features == 0) {
    throw std::invalid_argument("Linear: in_features " + std::to_string(in_features) + " and out_features " +
                                std::to_string(out_features) + " must be positive");
  }
  // PyTorch: kaiming_uniform(a = √5) on W gives U(-1/√in, 1/√in); the bias uses the same bound
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  const double w_bound = init == Init::xavier_uniform ? xavier_bound(in_features, out_features) : bound;
  W = Parameter<T>(uniform_init<T>({out_features, in_features}, w_bound, rng));
  if (bias)
    b = Parameter<T>(init == Init::xavier_uniform ? Tensor<T>(Shape{out_features})
                                                  : uniform_init<T>({out_features}, bound, rng));
}

template <class T>
Variable<T> Linear<T>::forward(const Variable<T>& x) {
  Tape<T>& tape = tape_of("Linear", {&x});
  return has_bias_ ? dense(x, tape.param(W), tape.param(b)) : dense(x, tape.param(W));
}

template <class T>
void Linear<T>::visit(ModuleVisitor<T>& v) {
  v.parameter("W", W);
  if (has_bias_) v.parameter("b", b);
}

template <class T>
Conv2d<T>::Conv2d(std::size_t in_channels, std::size_t out_channels, std::size_t kernel_size, Rng& rng,
                  Conv2dOptions options, bool bias)
    : options_(options), has_bias_(bias) {
  if (in_channels == 0 || out_channels == 0 || kernel_size == 0 || options.stride == 0) {
    throw std::invalid_argument("Conv2d: in_channels " + std::to_string(in_channels) + ", out_channels " +
                                std::to_string(out_channels) + ", kernel_size " + std::to_string(kernel_size) +
                                " and stride " + std::to_string(options.stride) + " must be positive");
  }
  // PyTorch: kaiming_uniform(a = √5) on W gives U(-1/√fan_in, 1/√fan_in), fan_in = in·k·k; the bias uses the same bound
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_channels * kernel_size * kernel_size));
  W = Parameter<T>(uniform_init<T>({out_channels, in_channels, kernel_size, kernel_size}, bound, rng));
  if (bias) b = Parameter<T>(uniform_init<T>({out_channels}, bound, rng));
}

template <class T>
Variable<T> Conv2d<T>::forward(const Variable<T>& x) {
  Tape<T>& tape = tape_of("Conv2d", {&x});
  return conv2d(x, tape.param(W), has_bias_ ? tape.param(b) : Variable<T>{}, options_);
}

template <class T>
void Conv2d<T>::visit(ModuleVisitor<T>& v) {
  v.parameter("W", W);
  if (has_bias_) v.parameter("b", b);
}

template <class T>
Embedding<T>::Embedding(std::size_t num_embeddings, std::size_t dim, Rng& rng, std::int64_t padding_id)
    : padding_id_(padding_id) {
  if (num_embeddings == 0 || dim == 0) {
    throw std::invalid_argument("Embedding: num_embeddings " + std::to_string(num_embeddings) + " and dim " +
                                std::to_string(dim) + " must be positive");
  }
  if (padding_id >= static_cast<std::int64_t>(num_embeddings)) {
    throw std::invalid_argument("Embedding: padding_id " + std::to_string(padding_id) + " is not a row of a table of " +
                                std::to_string(num_embeddings));
  }
  W = Parameter<T>(rng.normal_tensor<T>({num_embeddings, dim}, 0.0, 1.0));
  if (padding_id >= 0) {
    std::fill(W.value.data() + padding_id * static_cast<std::int64_t>(dim),
              W.value.data() + (padding_id + 1) * static_cast<std::int64_t>(dim), T(0));
  }
}

template <class T>
Variable<T> Embedding<T>::forward(Tape<T>& tape, const Ids& ids) {
  return embedding(tape.param(W), ids, padding_id_);
}

template <class T>
void Embedding<T>::visit(ModuleVisitor<T>& v) {
  v.parameter("W", W);
}

template <class T>
Dropout<T>::Dropout(double p, std::uint64_t seed) : p_(p), rng_(seed) {
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("Dropout: p = " + std::to_string(p) + " is outside [0, 1]");
}

template <class T>
Variable<T> dropout(const Variable<T>& x, double p, bool training, Rng& rng) {
  Tape<T>& tape = tape_of("dropout", {&x});
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument("dropout: probability p = " + std::to_string(p) + " is outside [0, 1]");
  }
  if (!training || p == 0.0) return x;
  // m_i / (1 - p): the kept values are scaled so that the expected output equals x; p = 1 drops everything.
  Tensor<T> scale(x.shape(), uninitialized);
  const T keep_scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
  for (auto& m : scale.flat()) m = rng.uniform() >= p ? keep_scale : T(0);
  return mul(x, tape.constant(std::move(scale)));
}

template <class T>
Variable<T> Dropout<T>::forward(const Variable<T>& x) {
  return dropout(x, p_, this->training(), rng_.on(x.tape()));
}

CrossEntropyLoss::CrossEntropyLoss(std::int64_t ignore_id, double label_smoothing)
    : ignore_id_(ignore_id), label_smoothing_(label_smoothing) {
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw std::invalid_argument("CrossEntropyLoss: label_smoothing " + std::to_string(label_smoothing) +
                                " is outside [0, 1]");
  }
}

template class Linear<float>;
template class Linear<double>;
template class Conv2d<float>;
template class Conv2d<double>;
template class Embedding<float>;
template class Embedding<double>;
template class Dropout<float>;
template class Dropout<double>;
template Variable<float> dropout(const Variable<float>&, double, bool, Rng&);
template Variable<double> dropout(const Variable<double>&, double, bool, Rng&);

}  // namespace attend::nn
