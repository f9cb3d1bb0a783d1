// Gradient attribution (attribution.hpp): the gradients of each output token's log-probability with respect to the
// inputs, for many copies of the input in one pass, and the two methods built on them.
#include "models/attribution.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "autograd/ops.hpp"
#include "models/batch.hpp"

namespace attend::models {

namespace {

// Rows of one forward and backward pass (copies of the input, each seeded at one token): the memory of a pass is
// about this many teacher-forced decodings.
constexpr std::size_t rows_per_pass = 64;

// For every point p of `points` (P, S, F) and output token j: ∂ log p(y_j | y_<j, points[p])/∂points[p], (J, S, F),
// and log p(y_j | y_<j, points[p]), (J), handed to visit(p, gradients, log_probs) point by point. Row p·J + j of a
// pass is a copy of points[p] seeded at (j, y_j) alone; the rows are independent, so its gradient is that token's.
template <class T>
void visit_gradients(const AttributionInputs<T>& in, const Tensor<T>& points, const Context& context,
                     const std::function<void(std::size_t, const T*, const double*)>& visit) {
  const std::size_t P = points.shape()[0], J = in.outputs.size(), n = in.x.size();
  const std::size_t per_pass = std::max<std::size_t>(1, rows_per_pass / std::max<std::size_t>(J, 1));
  std::vector<std::size_t> shape{0};
  for (std::size_t d = 0; d < in.x.shape().rank(); ++d) shape.push_back(in.x.shape()[d]);
  for (std::size_t first = 0; first < P; first += per_pass) {
    const std::size_t count = std::min(per_pass, P - first), rows = count * J;
    shape[0] = rows;
    Tensor<T> copies(Shape(shape), uninitialized);
    for (std::size_t r = 0; r < rows; ++r) std::copy_n(points.data() + (first + r / J) * n, n, copies.data() + r * n);
    TapeWithContext<T> on(context);
    on.tape.set_retain_gradients(false);
    const Variable<T> x = on.tape.leaf(std::move(copies));
    const Variable<T> log_probs = in.log_probs(on.tape, x);
    const Shape& ls = log_probs.shape();
    if (ls.rank() != 3 || ls[0] != rows || ls[1] < J) {
      throw std::invalid_argument("attribution: log-probabilities of shape " + to_string(ls) + "; expected (" +
                                  std::to_string(rows) + ", at least " + std::to_string(J) + ", vocabulary)");
    }
    const std::size_t steps = ls[1], V = ls[2];
    Tensor<T> seed(ls);
    std::vector<double> values(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t j = r % J;
      const auto y = static_cast<std::size_t>(in.outputs[j]);
      if (y >= V)
        throw std::invalid_argument("attribution: output token " + std::to_string(y) + " of a vocabulary of " +
                                    std::to_string(V));
      const std::size_t at = (r * steps + j) * V + y;
      seed.data()[at] = T(1);
      values[r] = static_cast<double>(log_probs.value().data()[at]);
    }
    on.tape.propagate(log_probs, seed);  // the parameters' gradients stay on the tape: the model is not touched
    const Tensor<T> gradients = x.grad();
    for (std::size_t c = 0; c < count; ++c) visit(first + c, gradients.data() + c * J * n, values.data() + c * J);
  }
}

// Each row of values (J, S) as |a| / Σ|a|.
template <class T>
Tensor<T> normalised_rows(const Tensor<T>& values) {
  const std::size_t J = values.shape()[0], S = values.shape()[1];
  Tensor<T> rows(values.shape());
  for (std::size_t j = 0; j < J; ++j) {
    double total = 0;
    for (std::size_t i = 0; i < S; ++i) total += std::abs(static_cast<double>(values.data()[j * S + i]));
    if (total == 0) continue;
    for (std::size_t i = 0; i < S; ++i) {
      rows.data()[j * S + i] = static_cast<T>(std::abs(static_cast<double>(values.data()[j * S + i])) / total);
    }
  }
  return rows;
}

// The mean rank (1-based) of each of n values, ties sharing theirs.
std::vector<double> ranks(const float* a, std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return a[x] < a[y]; });
  std::vector<double> rank(n);
  for (std::size_t k = 0; k < n;) {
    std::size_t end = k + 1;
    while (end < n && a[order[end]] == a[order[k]]) ++end;
    for (std::size_t t = k; t < end; ++t) rank[order[t]] = 0.5 * static_cast<double>(k + 1 + end);
    k = end;
  }
  return rank;
}

}  // namespace

template <class T>
AttributionInputs<T> attribution_inputs(Seq2seq<T>& model, const std::vector<std::int64_t>& source,
                                        const std::vector<std::int64_t>& output, std::size_t count) {
  if (source.empty() || count == 0 || count > output.size()) {
    throw std::invalid_argument("attribution_inputs: a source of " + std::to_string(source.size()) + " tokens and " +
                                std::to_string(count) + " of " + std::to_string(output.size()) +
                                " output tokens; expected a source and 1 to all of the output");
  }
  const Tensor<T>& W = model.encoder.embedding.W.value;
  const std::size_t S = source.size(), V = W.shape()[0], E = W.shape()[1];
  AttributionInputs<T> in;
  in.x = Tensor<T>(Shape{S, E});
  in.baseline = Tensor<T>(Shape{S, E});
  for (std::size_t i = 0; i < S; ++i) {
    if (source[i] < 0 || static_cast<std::size_t>(source[i]) >= V) {
      throw std::invalid_argument("attribution_inputs: source token " + std::to_string(source[i]) +
                                  " is outside the vocabulary [0, " + std::to_string(V) + ")");
    }
    std::copy_n(W.data() + static_cast<std::size_t>(source[i]) * E, E, in.x.data() + i * E);
    std::copy_n(W.data() + static_cast<std::size_t>(pad_id) * E, E, in.baseline.data() + i * E);
  }
  in.outputs.assign(output.begin(), output.begin() + static_cast<std::ptrdiff_t>(count));
  std::vector<std::int64_t> previous{sos_id};  // step j reads y_{j-1}
  previous.insert(previous.end(), output.begin(), output.begin() + static_cast<std::ptrdiff_t>(count - 1));
  in.log_probs = [&model, previous, S](Tape<T>&, const Variable<T>& X) {
    const std::size_t N = X.shape()[0], J = previous.size();
    Ids target_in(Shape{N, J});
    for (std::size_t r = 0; r < N; ++r) std::copy(previous.begin(), previous.end(), target_in.data() + r * J);
    const Encoded<T> encoded = model.encode_embedded(X, std::vector<std::int64_t>(N, static_cast<std::int64_t>(S)));
    return log_softmax(teacher_forced(*model.decoder, encoded, target_in).logits, -1);
  };
  return in;
}

template <class T>
OutputGradients<T> output_gradients(const AttributionInputs<T>& in, const Context& context) {
  const std::size_t J = in.outputs.size(), n = in.x.size();
  std::vector<std::size_t> shape{J};
  for (std::size_t d = 0; d < in.x.shape().rank(); ++d) shape.push_back(in.x.shape()[d]);
  OutputGradients<T> result{Tensor<T>(Shape(shape)), std::vector<double>(J)};
  const Tensor<T> point(Shape{1, n}, in.x.data(), n);
  visit_gradients<T>(in, point, context, [&](std::size_t, const T* gradients, const double* log_probs) {
    std::copy_n(gradients, J * n, result.gradients.data());
    std::copy_n(log_probs, J, result.log_probs.begin());
  });
  return result;
}

const char* to_string(AttributionMethod method) {
  return method == AttributionMethod::gradient_times_input ? "gradient_times_input" : "integrated_gradients";
}

template <class T>
Attribution<T> gradient_times_input(const AttributionInputs<T>& in, const Context& context) {
  const OutputGradients<T> g = output_gradients(in, context);
  const std::size_t J = in.outputs.size(), S = in.x.shape()[0], F = in.x.size() / S;
  Attribution<T> result;
  result.method = AttributionMethod::gradient_times_input;
  result.values = Tensor<T>(Shape{J, S});
  for (std::size_t j = 0; j < J; ++j) {
    for (std::size_t i = 0; i < S; ++i) {
      double total = 0;
      for (std::size_t f = 0; f < F; ++f) {
        const double product = static_cast<double>(g.gradients.data()[(j * S + i) * F + f]) * in.x.data()[i * F + f];
        total += product * product;
      }
      result.values.data()[j * S + i] = static_cast<T>(std::sqrt(total));
    }
  }
  result.rows = normalised_rows(result.values);
  return result;
}

template <class T>
Attribution<T> integrated_gradients(const AttributionInputs<T>& in, std::size_t steps, const Context& context) {
  if (steps == 0) throw std::invalid_argument("integrated_gradients: 0 steps; expected at least 1");
  const std::size_t J = in.outputs.size(), n = in.x.size(), S = in.x.shape()[0], F = n / S;
  // the m midpoints x' + (k − ½)/m · (x − x'), then x' and x themselves (their log-probabilities give the change)
  Tensor<T> points(Shape{steps + 2, n});
  for (std::size_t k = 0; k < steps + 2; ++k) {
    const double alpha =
        k < steps ? (static_cast<double>(k) + 0.5) / static_cast<double>(steps) : static_cast<double>(k - steps);
    for (std::size_t e = 0; e < n; ++e) {
      const double base = in.baseline.data()[e];
      points.data()[k * n + e] = static_cast<T>(base + alpha * (static_cast<double>(in.x.data()[e]) - base));
    }
  }
  std::vector<double> mean(J * n, 0.0), at_baseline(J), at_x(J);
  visit_gradients<T>(in, points, context, [&](std::size_t k, const T* gradients, const double* log_probs) {
    if (k < steps) {
      for (std::size_t e = 0; e < J * n; ++e) mean[e] += static_cast<double>(gradients[e]) / static_cast<double>(steps);
    } else {
      std::copy_n(log_probs, J, (k == steps ? at_baseline : at_x).begin());
    }
  });
  Attribution<T> result;
  result.method = AttributionMethod::integrated_gradients;
  result.steps = steps;
  result.values = Tensor<T>(Shape{J, S});
  for (std::size_t j = 0; j < J; ++j) {
    for (std::size_t i = 0; i < S; ++i) {
      double total = 0;
      for (std::size_t f = 0; f < F; ++f) {
        const std::size_t e = i * F + f;
        total += (static_cast<double>(in.x.data()[e]) - in.baseline.data()[e]) * mean[j * n + e];
      }
      result.values.data()[j * S + i] = static_cast<T>(total);
    }
    result.change.push_back(at_x[j] - at_baseline[j]);
  }
  result.rows = normalised_rows(result.values);
  return result;
}

double rank_correlation(const float* a, const float* b, std::size_t n) {
  if (n < 2) return 0;
  const std::vector<double> ra = ranks(a, n), rb = ranks(b, n);
  const double mean = 0.5 * static_cast<double>(n + 1);
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ab += (ra[i] - mean) * (rb[i] - mean);
    aa += (ra[i] - mean) * (ra[i] - mean);
    bb += (rb[i] - mean) * (rb[i] - mean);
  }
  return aa == 0 || bb == 0 ? 0 : ab / std::sqrt(aa * bb);
}

template AttributionInputs<float> attribution_inputs(Seq2seq<float>&, const std::vector<std::int64_t>&,
                                                     const std::vector<std::int64_t>&, std::size_t);
template AttributionInputs<double> attribution_inputs(Seq2seq<double>&, const std::vector<std::int64_t>&,
                                                      const std::vector<std::int64_t>&, std::size_t);
template OutputGradients<float> output_gradients(const AttributionInputs<float>&, const Context&);
template OutputGradients<double> output_gradients(const AttributionInputs<double>&, const Context&);
template Attribution<float> gradient_times_input(const AttributionInputs<float>&, const Context&);
template Attribution<double> gradient_times_input(const AttributionInputs<double>&, const Context&);
template Attribution<float> integrated_gradients(const AttributionInputs<float>&, std::size_t, const Context&);
template Attribution<double> integrated_gradients(const AttributionInputs<double>&, std::size_t, const Context&);

}  // namespace attend::models
