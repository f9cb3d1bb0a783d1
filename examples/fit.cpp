// A small model on the autograd alone: a network with one hidden layer, y = W₂ tanh(W₁ x + b₁) + b₂, learns
// y = sin(3x) on [-1, 1] by plain gradient descent written out by hand (θ ← θ − η ∂L/∂θ), with the tape giving
// ∂L/∂θ. Links only attend-autograd. How to build it: README.md, "Using the libraries from another project". Exits with
// status 1 if it did not learn.
#include <cmath>
#include <cstdio>
#include <vector>

#include "autograd/autograd.hpp"

using namespace attend;

int main() {
  constexpr std::size_t points = 64, hidden = 16;
  std::vector<float> xs(points), ys(points);
  for (std::size_t i = 0; i < points; ++i) {
    xs[i] = -1.0f + 2.0f * float(i) / float(points - 1);
    ys[i] = std::sin(3.0f * xs[i]);
  }
  const Tensor<float> x(Shape{points, 1}, xs), y(Shape{points, 1}, ys);

  Rng rng(0);
  Parameter<float> W1(rng.uniform_tensor<float>({hidden, 1}, -1.0, 1.0)), b1(Tensor<float>(Shape{hidden}));
  Parameter<float> W2(rng.uniform_tensor<float>({1, hidden}, -0.25, 0.25)), b2(Tensor<float>(Shape{1}));
  const std::vector<Parameter<float>*> params{&W1, &b1, &W2, &b2};

  Tape<float> tape;
  float first = 0, last = 0;
  for (int step = 1; step <= 2000; ++step) {
    const Variable<float> h = tanh(linear(tape.constant(x), tape.param(W1), tape.param(b1)));  // (points, hidden)
    const Variable<float> prediction = linear(h, tape.param(W2), tape.param(b2));              // (points, 1)
    const Variable<float> loss = mean(pow(sub(prediction, tape.constant(y)), 2));              // mean squared error
    tape.backward(loss);
    for (Parameter<float>* p : params) {
      for (std::size_t i = 0; i < p->value.size(); ++i) p->value.data()[i] -= 0.2f * p->grad.data()[i];
      p->zero_grad();
    }
    last = loss.value().item();
    if (step == 1) first = last;
    if (step == 1 || step % 500 == 0) std::printf("step %d: mean squared error %.5f\n", step, double(last));
    tape.clear();
  }
  return last < first / 20 ? 0 : 1;
}
