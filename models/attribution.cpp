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
  if (J == 0 || n == 0 || in.x.shape().rank() != 2 || !in.log_probs) {
    throw std::invalid_argument("attribution: inputs of shape " + to_string(in.x.shape()) + " and " +
                                std::to_string(J) +
                                " output tokens; expected (positions, features), at least one "
                                "token and the function of the inputs");
  }
  const std::size_t per_pass = std::max<std::size_t>(1, rows_per_pass / J), S = in.x.shape()[0];
  for (std::size_t first = 0; first < P; first += per_pass) {
    if (in.wanted && !in.wanted()) throw AttributionStopped();
    const std::size_t count = std::min(per_pass, P - first), rows = count * J;
    Tensor<T> copies(Shape{rows, S, n / S}, uninitialized);
    std::vector<std::size_t> at(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      std::copy_n(points.data() + (first + r / J) * n, n, copies.data() + r * n);
      at[r] = r % J;
    }
    TapeWithContext<T> on(context);
    on.tape.set_retain_gradients(false);
    on.tape.set_parameters_frozen(true);  // ∂/∂x only: no weight's gradient computed, the model's left alone
    const Variable<T> x = on.tape.leaf(std::move(copies));
    const Variable<T> log_probs = in.log_probs(on.tape, x, at);
    const Shape& ls = log_probs.shape();
    if (ls.rank() != 2 || ls[0] != rows) {
      throw std::invalid_argument("attribution: log-probabilities of shape " + to_string(ls) + "; expected (" +
                                  std::to_string(rows) + ", vocabulary)");
    }
    const std::size_t V = ls[1];
    Tensor<T> seed(ls);
    std::vector<double> values(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      const auto y = static_cast<std::size_t>(in.outputs[at[r]]);
      if (y >= V)
        throw std::invalid_argument("attribution: output token " + std::to_string(y) + " of a vocabulary of " +
                                    std::to_string(V));
      seed.data()[r * V + y] = T(1);
      values[r] = static_cast<double>(log_probs.value().data()[r * V + y]);
    }
    on.tape.propagate(log_probs, seed);
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

// x: the rows of the embedding table W (V, F) for the source's tokens; the baseline its padding row at every position;
// the first `count` output tokens (log_probs left to the model).
template <class T>
AttributionInputs<T> embedded_inputs(const Tensor<T>& W, const std::vector<std::int64_t>& source,
                                     const std::vector<std::int64_t>& output, std::size_t count) {
  if (source.empty() || count == 0 || count > output.size()) {
    throw std::invalid_argument("attribution_inputs: a source of " + std::to_string(source.size()) + " tokens and " +
                                std::to_string(count) + " of " + std::to_string(output.size()) +
                                " output tokens; expected a source and 1 to all of the output");
  }
  const std::size_t S = source.size(), V = W.shape()[0], F = W.shape()[1];
  AttributionInputs<T> in;
  in.x = Tensor<T>(Shape{S, F});
  in.baseline = Tensor<T>(Shape{S, F});
  for (std::size_t i = 0; i < S; ++i) {
    if (source[i] < 0 || static_cast<std::size_t>(source[i]) >= V) {
      throw std::invalid_argument("attribution_inputs: source token " + std::to_string(source[i]) +
                                  " is outside the vocabulary [0, " + std::to_string(V) + ")");
    }
    std::copy_n(W.data() + static_cast<std::size_t>(source[i]) * F, F, in.x.data() + i * F);
    std::copy_n(W.data() + static_cast<std::size_t>(pad_id) * F, F, in.baseline.data() + i * F);
  }
  in.outputs.assign(output.begin(), output.begin() + static_cast<std::ptrdiff_t>(count));
  return in;
}

// What the teacher-forced steps read: <sos>, then the first count − 1 output tokens (step j reads y_{j-1}).
std::vector<std::int64_t> previous_tokens(const std::vector<std::int64_t>& output, std::size_t count) {
  std::vector<std::int64_t> previous{sos_id};
  previous.insert(previous.end(), output.begin(), output.begin() + static_cast<std::ptrdiff_t>(count - 1));
  return previous;
}

// What the steps up to the last position in `at` read, as every row of an (N, T) batch: the first T = max(at) + 1 of
// `previous` (the decoders are causal: later steps change nothing before them).
Ids repeated_rows(const std::vector<std::int64_t>& previous, const std::vector<std::size_t>& at) {
  if (at.empty()) throw std::invalid_argument("attribution: no rows (no output positions given)");
  const std::size_t N = at.size(), T = *std::max_element(at.begin(), at.end()) + 1;
  if (T > previous.size()) {
    throw std::invalid_argument("attribution: output position " + std::to_string(T - 1) + " of " +
                                std::to_string(previous.size()));
  }
  Ids ids(Shape{N, T});
  for (std::size_t r = 0; r < N; ++r) std::copy_n(previous.begin(), T, ids.data() + r * T);
  return ids;
}

// Row n's features at its own position: features (N, T, F) → (N, F), row n the features[n, at[n]].
template <class T>
Variable<T> own_positions(const Variable<T>& features, const std::vector<std::size_t>& at) {
  const std::size_t T_ = features.shape()[1];
  std::vector<std::int64_t> rows(at.size());
  for (std::size_t r = 0; r < at.size(); ++r) rows[r] = static_cast<std::int64_t>(r * T_ + at[r]);
  return gather_rows(reshape(features, {-1, static_cast<std::int64_t>(features.shape()[2])}), rows);
}

}  // namespace

template <class T>
AttributionInputs<T> attribution_inputs(Seq2seq<T>& model, const std::vector<std::int64_t>& source,
                                        const std::vector<std::int64_t>& output, std::size_t count) {
  AttributionInputs<T> in = embedded_inputs(model.encoder.embedding.W.value, source, output, count);
  const std::vector<std::int64_t> previous = previous_tokens(output, count);
  const auto S = static_cast<std::int64_t>(source.size());
  in.log_probs = [&model, previous, S](Tape<T>&, const Variable<T>& X, const std::vector<std::size_t>& at) {
    const Encoded<T> encoded = model.encode_embedded(X, std::vector<std::int64_t>(X.shape()[0], S));
    const Variable<T> features = teacher_forced_features(*model.decoder, encoded, repeated_rows(previous, at));
    return log_softmax(model.decoder->logits(own_positions(features, at)), -1);
  };
  return in;
}

template <class T>
AttributionInputs<T> attribution_inputs(TransformerModel<T>& model, const std::vector<std::int64_t>& source,
                                        const std::vector<std::int64_t>& output, std::size_t count) {
  AttributionInputs<T> in = embedded_inputs(model.src_emb.W.value, source, output, count);
  const std::vector<std::int64_t> previous = previous_tokens(output, count);
  in.log_probs = [&model, previous](Tape<T>& tape, const Variable<T>& X, const std::vector<std::size_t>& at) {
    const TransformerEncoded<T> encoded = model.encode_embedded(X);
    const Variable<T> y = model.embed(tape, repeated_rows(previous, at), false);
    const Variable<T> features = model.transformer.decoder.forward(y, encoded.memory, &encoded.mask);
    return log_softmax(model.logits(own_positions(features, at)), -1);
  };
  return in;
}

template <class T>
AttributionInputs<T> attribution_inputs(Captioner<T>& model, const Tensor<T>& image,
                                        const std::vector<std::int64_t>& output, std::size_t count) {
  const CaptionerConfig& config = model.config();
  const std::size_t H = config.image_height, W = config.image_width;
  if (image.shape() != Shape{H, W} || count == 0 || count > output.size()) {
    throw std::invalid_argument("attribution_inputs: an image " + to_string(image.shape()) + " and " +
                                std::to_string(count) + " of " + std::to_string(output.size()) +
                                " output tokens; expected " + to_string(Shape{H, W}) + " and 1 to all of the output");
  }
  AttributionInputs<T> in;
  in.x = image.reshaped(Shape{H * W, 1});
  in.baseline = Tensor<T>(Shape{H * W, 1});  // zeros: a blank image
  in.outputs.assign(output.begin(), output.begin() + static_cast<std::ptrdiff_t>(count));
  const std::vector<std::int64_t> previous = previous_tokens(output, count);
  in.log_probs = [&model, previous, H, W](Tape<T>& tape, const Variable<T>& X, const std::vector<std::size_t>& at) {
    const auto N = static_cast<std::int64_t>(X.shape()[0]);
    const Encoded<T> encoded =
        model.encode(tape, reshape(X, {N, static_cast<std::int64_t>(H), static_cast<std::int64_t>(W)}));
    const Variable<T> features = teacher_forced_features(*model.decoder, encoded, repeated_rows(previous, at));
    return log_softmax(model.decoder->logits(own_positions(features, at)), -1);
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

std::vector<std::int64_t> scored_tokens(const Hypothesis& output) {
  std::vector<std::int64_t> tokens = output.tokens;
  if (output.finished) tokens.push_back(eos_id);
  return tokens;
}

const char* to_string(AttributionMethod method) {
  switch (method) {
    case AttributionMethod::gradient_times_input:
      return "gradient_times_input";
    case AttributionMethod::integrated_gradients:
      return "integrated_gradients";
    case AttributionMethod::attention_rollout:
      break;
  }
  return "attention_rollout";
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
  if (in.baseline.shape() != in.x.shape()) {
    throw std::invalid_argument("integrated_gradients: a baseline of shape " + to_string(in.baseline.shape()) +
                                " for inputs of shape " + to_string(in.x.shape()));
  }
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

template <class T, class Model, class Input>
std::vector<Attribution<T>> gradient_attributions(Model& model, const Input& input, const Hypothesis& output,
                                                  std::size_t steps, const Context& context,
                                                  const std::function<bool()>& wanted) {
  const std::vector<std::int64_t> tokens = scored_tokens(output);
  if (tokens.empty()) return {};
  model.eval();
  AttributionInputs<T> in = attribution_inputs(model, input, tokens, tokens.size());
  in.wanted = wanted;
  return {gradient_times_input(in, context), integrated_gradients(in, steps, context)};
}

template <class T>
Attribution<T> attention_rollout(const nn::AttentionWeights<T>& weights, std::size_t J) {
  if (weights.encoder.empty() || weights.cross.empty()) {
    throw std::invalid_argument("attention_rollout: no encoder or no cross-attention weights");
  }
  const Shape& cs = weights.cross.back().shape();  // (1, H, T, S)
  const std::size_t S = cs.rank() == 4 ? cs[3] : 0;
  if (cs.rank() != 4 || cs[0] != 1 || cs[2] < J) {
    throw std::invalid_argument("attention_rollout: cross-attention of shape " + to_string(cs) + " for " +
                                std::to_string(J) + " output tokens; expected (1, heads, at least " +
                                std::to_string(J) + ", source)");
  }
  // (1, H, n, m) averaged over the heads: (n, m), as doubles
  const auto heads_mean = [](const Tensor<T>& a) {
    const std::size_t H = a.shape()[1], block = a.shape()[2] * a.shape()[3];
    std::vector<double> mean(block, 0.0);
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t e = 0; e < block; ++e) mean[e] += static_cast<double>(a.data()[h * block + e]) / H;
    return mean;
  };
  std::vector<double> rolled(S * S, 0.0);  // R, from the identity
  for (std::size_t i = 0; i < S; ++i) rolled[i * S + i] = 1;
  for (const Tensor<T>& layer : weights.encoder) {
    const Shape& ls = layer.shape();
    if (ls.rank() != 4 || ls[0] != 1 || ls[2] != S || ls[3] != S) {
      throw std::invalid_argument("attention_rollout: encoder self-attention of shape " + to_string(ls) +
                                  "; expected (1, heads, " + std::to_string(S) + ", " + std::to_string(S) + ")");
    }
    std::vector<double> a = heads_mean(layer), next(S * S, 0.0);
    for (std::size_t i = 0; i < S; ++i) a[i * S + i] += 1;  // ½(A + I), the ½ applied below
    for (std::size_t i = 0; i < S; ++i)
      for (std::size_t k = 0; k < S; ++k)
        for (std::size_t m = 0; m < S; ++m) next[i * S + m] += 0.5 * a[i * S + k] * rolled[k * S + m];
    rolled = std::move(next);
  }
  const std::vector<double> cross = heads_mean(weights.cross.back());
  Attribution<T> result;
  result.method = AttributionMethod::attention_rollout;
  result.values = Tensor<T>(Shape{J, S});
  for (std::size_t j = 0; j < J; ++j)
    for (std::size_t i = 0; i < S; ++i)
      for (std::size_t m = 0; m < S; ++m) {
        result.values.data()[j * S + m] += static_cast<T>(cross[j * S + i] * rolled[i * S + m]);
      }
  result.rows = result.values;
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
template AttributionInputs<float> attribution_inputs(TransformerModel<float>&, const std::vector<std::int64_t>&,
                                                     const std::vector<std::int64_t>&, std::size_t);
template AttributionInputs<double> attribution_inputs(TransformerModel<double>&, const std::vector<std::int64_t>&,
                                                      const std::vector<std::int64_t>&, std::size_t);
template std::vector<Attribution<float>> gradient_attributions(Seq2seq<float>&, const std::vector<std::int64_t>&,
                                                               const Hypothesis&, std::size_t, const Context&,
                                                               const std::function<bool()>&);
template std::vector<Attribution<double>> gradient_attributions(Seq2seq<double>&, const std::vector<std::int64_t>&,
                                                                const Hypothesis&, std::size_t, const Context&,
                                                                const std::function<bool()>&);
template std::vector<Attribution<float>> gradient_attributions(TransformerModel<float>&,
                                                               const std::vector<std::int64_t>&, const Hypothesis&,
                                                               std::size_t, const Context&,
                                                               const std::function<bool()>&);
template std::vector<Attribution<double>> gradient_attributions(TransformerModel<double>&,
                                                                const std::vector<std::int64_t>&, const Hypothesis&,
                                                                std::size_t, const Context&,
                                                                const std::function<bool()>&);
template AttributionInputs<float> attribution_inputs(Captioner<float>&, const Tensor<float>&,
                                                     const std::vector<std::int64_t>&, std::size_t);
template AttributionInputs<double> attribution_inputs(Captioner<double>&, const Tensor<double>&,
                                                      const std::vector<std::int64_t>&, std::size_t);
template std::vector<Attribution<float>> gradient_attributions(Captioner<float>&, const Tensor<float>&,
                                                               const Hypothesis&, std::size_t, const Context&,
                                                               const std::function<bool()>&);
template std::vector<Attribution<double>> gradient_attributions(Captioner<double>&, const Tensor<double>&,
                                                                const Hypothesis&, std::size_t, const Context&,
                                                                const std::function<bool()>&);
template Attribution<float> attention_rollout(const nn::AttentionWeights<float>&, std::size_t);
template Attribution<double> attention_rollout(const nn::AttentionWeights<double>&, std::size_t);
template OutputGradients<float> output_gradients(const AttributionInputs<float>&, const Context&);
template OutputGradients<double> output_gradients(const AttributionInputs<double>&, const Context&);
template Attribution<float> gradient_times_input(const AttributionInputs<float>&, const Context&);
template Attribution<double> gradient_times_input(const AttributionInputs<double>&, const Context&);
template Attribution<float> integrated_gradients(const AttributionInputs<float>&, std::size_t, const Context&);
template Attribution<double> integrated_gradients(const AttributionInputs<double>&, std::size_t, const Context&);

}  // namespace attend::models
