// Exercise 13.1 — a solution (the task: exercises/13/1.hpp).
//
// Why it works: a product with W_p and a weighted sum may be done in either order, Σ_i α_ti (W_p x_i) = W_p Σ_i α_ti
// x_i, so with a_i linear in the pixels the context c_t is W_p of one patch x̄_t, the weighted mean of the patches the
// step looks at. Whatever the decoder learns about that digit it must read from A linear functions of blurred pixels;
// the nonlinearity comes only after, in its recurrent step. With the hidden layer, relu(W_h x_i + b_h) is computed
// before the average, and the decoder averages descriptions of the patches instead of their pixels.
// A linear read-out of a digit is not what fails: on single digits, each aligned with the 8×8 window, z = W x + b gets
// about 96% of the 200 test digits right (it confuses shapes that share strokes: 9 and 8, 3 and 8, 1 and 9). What
// fails is averaging first: x̄_t mixes the patches around the digit, shifted by a stride and by the digit's own offset,
// and a linear function of that blur must name the digit. In the check's small captioners the hidden layer gains
// about 10 points of exact match; in the full one (`attend train --task digits --patch-hidden 0`, docs/results.md)
// linear annotations get 0.8975 against 0.9835.
#include "exercises/13/1.hpp"

#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "ops/fused.hpp"

namespace yours {

using namespace attend;

std::vector<double> context_from_mean_patch(const models::Captioner<double>& model, const Tensor<double>& patches,
                                            const std::vector<double>& alpha) {
  const auto& encoder = dynamic_cast<const models::PatchEncoder<double>&>(*model.encoder);
  const std::size_t L = patches.shape()[1], P = patches.shape()[2], A = encoder.W_p.out_features();
  // x̄_t = Σ_i α_ti x_i, and Σ_i α_ti (1 when α_t comes from the softmax (13.4))
  std::vector<double> mean_patch(P, 0.0);
  double total = 0;
  for (std::size_t i = 0; i < L; ++i) {
    total += alpha[i];
    for (std::size_t p = 0; p < P; ++p) mean_patch[p] += alpha[i] * patches.data()[i * P + p];
  }
  const Tensor<double>&W_p = encoder.W_p.W.value, &b_p = encoder.W_p.b.value, &positions = encoder.P.value;
  std::vector<double> c(A);
  for (std::size_t k = 0; k < A; ++k) {
    // c_tk = Σ_p W_p[k, p] x̄_tp + (Σ_i α_ti) b_pk + Σ_i α_ti P_ik
    double sum = total * b_p.data()[k];
    for (std::size_t p = 0; p < P; ++p) sum += W_p.data()[k * P + p] * mean_patch[p];
    for (std::size_t i = 0; i < L; ++i) sum += alpha[i] * positions.data()[i * A + k];
    c[k] = sum;
  }
  return c;
}

namespace {

// The digits' pixels / 16, one row per digit: (N, 64).
Tensor<double> pixels_of(const data::DigitImages& digits) {
  const std::size_t side = data::digit_side * data::digit_side;
  Tensor<double> x(Shape{digits.size(), side});
  for (std::size_t n = 0; n < digits.size(); ++n) {
    for (std::size_t k = 0; k < side; ++k) x.data()[n * side + k] = digits.pixels[n][k] / 16.0;
  }
  return x;
}

}  // namespace

std::vector<int> linear_classifier(const data::DigitImages& train, const data::DigitImages& test) {
  Rng rng(1);
  nn::Linear<double> linear(data::digit_side * data::digit_side, 10, rng);  // W (10, 64), b (10,)
  nn::Adam<double> adam(linear.parameters(), {/*lr=*/0.01});
  const Tensor<double> x = pixels_of(train), x_test = pixels_of(test);
  Ids labels(Shape{train.size()});
  for (std::size_t n = 0; n < train.size(); ++n) labels.data()[n] = train.labels[n];
  for (int step = 0; step < 300; ++step) {
    Tape<double> tape;
    adam.zero_grad();
    tape.backward(cross_entropy(linear(tape.constant(x)), labels));  // z = W x + b
    adam.step();
  }
  Tape<double> tape;
  const Tensor<double> z = linear(tape.constant(x_test)).value();
  std::vector<int> predicted(test.size());
  for (std::size_t n = 0; n < test.size(); ++n) {
    int best = 0;
    for (int c = 1; c < 10; ++c) best = z.data()[n * 10 + c] > z.data()[n * 10 + best] ? c : best;
    predicted[n] = best;
  }
  return predicted;
}

}  // namespace yours
