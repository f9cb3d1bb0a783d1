// Chapter 1 — reverse-mode automatic differentiation from scratch (docs/01-autograd.md).
//
// One tiny neuron and its squared error,  z = w·x + b,  y = tanh(z),  L = (y - t)²,  is computed on a tape; the tape
// is printed node by node; then the derivatives are worked out by hand with the chain rule, read off the tape after
// backward, and estimated by finite differences, side by side. Last, w and b become parameters and take three training
// steps: gradient descent written out (1.8), then Adam (1.9). The program checks itself: it exits with status 1 if the
// three routes disagree or a step does not do what its equation says. Everything is deterministic, so its output is
// exactly what the chapter shows.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "autograd/autograd.hpp"
#include "nn/optim.hpp"
#include "plot/print.hpp"
#include "tutorials/common.hpp"

using attend::Tape;
using attend::Tensor;
using attend::Variable;

namespace {

// L(w, x, b) computed with plain doubles, no tape: used for the finite differences.
double loss_of(double w, double x, double b, double t) {
  const double y = std::tanh(w * x + b);
  return (y - t) * (y - t);
}

// The neuron's inputs and the values computed from them, on the tape.
struct Neuron {
  Variable<double> w, x, b, z, y, L;
};

// (1.1)-(1.3) recorded on the tape.
Neuron forward(Tape<double>& tape, double w_value, double x_value, double b_value, double t) {
  // [docs:forward]
  // the inputs are leaves: values whose gradients we want to read after backward
  Variable<double> w = tape.leaf(Tensor<double>::scalar(w_value));
  Variable<double> x = tape.leaf(Tensor<double>::scalar(x_value));
  Variable<double> b = tape.leaf(Tensor<double>::scalar(b_value));
  // (1.1)  z = w·x + b
  Variable<double> z = w * x + b;
  // (1.2)  y = tanh(z)
  Variable<double> y = tanh(z);
  // (1.3)  L = (y - t)²
  Variable<double> L = pow(y - t, 2.0);
  // [docs:end]

  return {w, x, b, z, y, L};
}

void backward(Tape<double>& tape, const Variable<double>& L) {
  // [docs:backward]
  // one reverse sweep: dL/dL = 1, then every node from the last to the first passes its gradient to its inputs
  tape.backward(L);
  // [docs:end]
}

// dL/dw, dL/dx and dL/db, by one route or another.
struct Derivatives {
  double w, x, b;
};

// (1.4)-(1.6): the chain rule by hand, from y's value.
Derivatives by_hand(const Variable<double>& y, double w_value, double x_value, double t) {
  // [docs:by-hand]
  const double y_v = y.value().item();
  // (1.4)  dL/dy = 2 (y - t)
  const double dL_dy = 2 * (y_v - t);
  // (1.5)  dL/dz = dL/dy · (1 - y²)          since d tanh(z)/dz = 1 - tanh²(z)
  const double dL_dz = dL_dy * (1 - y_v * y_v);
  // (1.6)  dL/dw = dL/dz · x,   dL/dx = dL/dz · w,   dL/db = dL/dz
  const double dL_dw = dL_dz * x_value;
  const double dL_dx = dL_dz * w_value;
  const double dL_db = dL_dz;
  // [docs:end]
  return {dL_dw, dL_dx, dL_db};
}

// (1.7): central differences of the loss computed without a tape.
Derivatives finite_differences(double w_value, double x_value, double b_value, double t) {
  // [docs:finite-differences]
  // (1.7)  dL/dw ≈ (L(w + ε) - L(w - ε)) / 2ε, and likewise for x and b
  const double eps = 1e-6;
  const double fd_w =
      (loss_of(w_value + eps, x_value, b_value, t) - loss_of(w_value - eps, x_value, b_value, t)) / (2 * eps);
  const double fd_x =
      (loss_of(w_value, x_value + eps, b_value, t) - loss_of(w_value, x_value - eps, b_value, t)) / (2 * eps);
  const double fd_b =
      (loss_of(w_value, x_value, b_value + eps, t) - loss_of(w_value, x_value, b_value - eps, t)) / (2 * eps);
  // [docs:end]
  return {fd_w, fd_x, fd_b};
}

// The three routes side by side; true when the tape and the finite differences agree with the hand derivation.
bool compare(const Neuron& neuron, const Derivatives& hand, const Derivatives& fd) {
  std::printf("\n%-8s %14s %14s %14s\n", "", "by hand", "tape", "finite diff.");
  struct Row {
    const char* name;
    double hand;
    Variable<double> v;
    double fd;
  };
  const Row rows[] = {
      {"dL/dw", hand.w, neuron.w, fd.w}, {"dL/dx", hand.x, neuron.x, fd.x}, {"dL/db", hand.b, neuron.b, fd.b}};
  double worst_tape = 0, worst_fd = 0;
  for (const Row& r : rows) {
    const double tape_grad = r.v.grad().item();
    std::printf("%-8s %14.8f %14.8f %14.8f\n", r.name, r.hand, tape_grad, r.fd);
    worst_tape = std::max(worst_tape, std::abs(tape_grad - r.hand));
    worst_fd = std::max(worst_fd, std::abs(r.fd - r.hand));
  }
  // the tape and the hand derivation apply the same chain rule: they agree to rounding; finite differences to ~1e-9
  const bool tape_agrees = worst_tape < 1e-12, fd_agrees = worst_fd < 1e-8;
  std::printf("\nworst |tape - by hand| = %s, worst |finite diff. - by hand| = %s\n",
              tape_agrees ? "< 1e-12" : "TOO LARGE", fd_agrees ? "< 1e-8" : "TOO LARGE");
  return tape_agrees && fd_agrees;
}

// A value used twice: true when the tape's du/dx is 2x + 1.
bool reuse(Tape<double>& tape, double x_value) {
  // [docs:reuse]
  // A value used twice receives both contributions: u = x·x + x, so du/dx = 2x + 1.
  tape.clear();  // every handle made so far is now stale; a new step starts
  Variable<double> x2 = tape.leaf(Tensor<double>::scalar(x_value));
  Variable<double> u = x2 * x2 + x2;
  tape.backward(u);
  std::printf("\nu = x*x + x at x = %.1f: du/dx from the tape = %.6f, 2x + 1 = %.6f\n", x_value, x2.grad().item(),
              2 * x_value + 1);
  // [docs:end]
  const bool reuse_agrees = std::abs(x2.grad().item() - (2 * x_value + 1)) < 1e-12;

  return reuse_agrees;
}

// The library's gradient checker on a layer of four neurons: true when it passes.
bool gradcheck_layer() {
  // [docs:gradcheck]
  // The library's gradient checker does the finite-difference comparison for any function of tensors.
  auto neuron = [](Tape<double>&, const std::vector<Variable<double>>& in) {
    return tanh(matmul(in[0], in[1]) + in[2]);  // (2,3)·(3,4) + (4,): a layer of four neurons
  };
  attend::Rng rng(1);
  const attend::GradcheckResult check =
      attend::gradcheck(neuron, {rng.uniform_tensor<double>({2, 3}, -1, 1), rng.uniform_tensor<double>({3, 4}, -1, 1),
                                 rng.uniform_tensor<double>({4}, -1, 1)});
  std::printf("gradcheck of tanh(x W + b): %s, %zu elements compared\n", check.passed ? "passed" : "FAILED",
              check.checked);
  // [docs:end]
  if (!check.passed) std::printf("%s\n", check.message.c_str());

  return check.passed;
}

// The training steps below done with plain doubles: the gradient by (1.4)-(1.6), the update by (1.8) (gradient
// descent) or (1.9) (Adam, with PyTorch's defaults β1 = 0.9, β2 = 0.999, ε = 1e-8). `falls`: the loss fell each step.
struct Path {
  double w, b;
  bool falls;
};
Path steps_by_hand(double w, double b, double x, double t, double lr, bool adam) {
  double m_w = 0, m_b = 0, v_w = 0, v_b = 0, last = loss_of(w, x, b, t);
  bool falls = true;
  for (int step = 1; step <= 3; ++step) {
    // (1.4)-(1.6)  ∂L/∂z = 2 (y − t)(1 − y²),   ∂L/∂w = ∂L/∂z · x,   ∂L/∂b = ∂L/∂z
    const double y = std::tanh(w * x + b), dL_dz = 2 * (y - t) * (1 - y * y);
    const double g_w = dL_dz * x, g_b = dL_dz;
    if (!adam) {
      // (1.8)  w ← w − η ∂L/∂w,   b ← b − η ∂L/∂b
      w -= lr * g_w, b -= lr * g_b;
    } else {
      // (1.9)  m ← β1 m + (1 − β1) g,   v ← β2 v + (1 − β2) g²,   w ← w − η (m / (1 − β1^k)) / (√(v / (1 − β2^k)) + ε)
      m_w = 0.9 * m_w + 0.1 * g_w, m_b = 0.9 * m_b + 0.1 * g_b;
      v_w = 0.999 * v_w + 0.001 * g_w * g_w, v_b = 0.999 * v_b + 0.001 * g_b * g_b;
      const double c1 = 1 - std::pow(0.9, step), c2 = 1 - std::pow(0.999, step);
      w -= lr * (m_w / c1) / (std::sqrt(v_w / c2) + 1e-8);
      b -= lr * (m_b / c1) / (std::sqrt(v_b / c2) + 1e-8);
    }
    const double now = loss_of(w, x, b, t);
    falls = falls && now < last;
    last = now;
  }
  return {w, b, falls};
}

// Three training steps of the neuron on (x, t) from (w, b): gradient descent written out, then nn::Adam. True when
// both end where steps_by_hand ends (to 1e-12) and the loss fell at every step.
bool training_steps(double w_value, double x_value, double b_value, double t) {
  std::printf("\n");
  // [docs:training-step]
  // w and b as parameters: values that live outside any tape, with a gradient p.grad that backward adds into
  attend::Parameter<double> w(Tensor<double>::scalar(w_value)), b(Tensor<double>::scalar(b_value));
  const double lr = 0.1;  // η
  Tape<double> tape;
  for (int step = 1; step <= 3; ++step) {
    tape.clear();   // a new tape for every step
    w.zero_grad();  // backward adds into p.grad: start each step from 0
    b.zero_grad();
    const Variable<double> x = tape.constant(Tensor<double>::scalar(x_value));
    const Variable<double> L = pow(tanh(tape.param(w) * x + tape.param(b)) - t, 2.0);  // (1.1)-(1.3)
    tape.backward(L);  // ∂L/∂w into w.grad, ∂L/∂b into b.grad
    std::printf("gradient descent, step %d: L = %.6f, dL/dw = %.6f, w: %.6f -> ", step, L.value().item(), w.grad.item(),
                w.value.item());
    // (1.8)  w ← w − η ∂L/∂w,   b ← b − η ∂L/∂b
    w.value.flat() -= lr * w.grad.flat();
    b.value.flat() -= lr * b.grad.flat();
    std::printf("%.6f\n", w.value.item());
  }
  // [docs:end]
  // [docs:adam]
  attend::Parameter<double> w_adam(Tensor<double>::scalar(w_value)), b_adam(Tensor<double>::scalar(b_value));
  attend::nn::Adam<double> adam({{"w", &w_adam}, {"b", &b_adam}}, {lr});  // the parameters it updates, and η
  for (int step = 1; step <= 3; ++step) {
    tape.clear();
    adam.zero_grad();  // every parameter it was given
    const Variable<double> x = tape.constant(Tensor<double>::scalar(x_value));
    const Variable<double> L = pow(tanh(tape.param(w_adam) * x + tape.param(b_adam)) - t, 2.0);
    tape.backward(L);
    std::printf("Adam, step %d: L = %.6f, dL/dw = %.6f, w: %.6f -> ", step, L.value().item(), w_adam.grad.item(),
                w_adam.value.item());
    adam.step();  // (1.9) for every parameter it was given
    std::printf("%.6f\n", w_adam.value.item());
  }
  // [docs:end]
  const Path descent = steps_by_hand(w_value, b_value, x_value, t, lr, false);
  const Path by_adam = steps_by_hand(w_value, b_value, x_value, t, lr, true);
  const double worst = std::max({std::abs(w.value.item() - descent.w), std::abs(b.value.item() - descent.b),
                                 std::abs(w_adam.value.item() - by_adam.w), std::abs(b_adam.value.item() - by_adam.b)});
  const bool agrees = worst < 1e-12 && descent.falls && by_adam.falls;
  std::printf("after 3 steps, worst |library - (1.8), (1.9) by hand| = %s; the loss fell at every step: %s\n",
              worst < 1e-12 ? "< 1e-12" : "TOO LARGE", descent.falls && by_adam.falls ? "yes" : "NO");
  return agrees;
}

}  // namespace

int main(int argc, char** argv) {
  // one picture (the tape as a graph, --figures); no size to choose: --small is accepted only
  const attend::tutorial::Options options = attend::tutorial::parse_options(argc, argv);
  std::printf("Chapter 1: reverse-mode autodiff on L = (tanh(w*x + b) - t)^2\n\n");
  const double w_value = 0.8, x_value = -1.5, b_value = 0.3, t = 0.5;

  // ---- Forward: recording the tape ----------------------------------------------------------------------------------
  Tape<double> tape;
  const Neuron neuron = forward(tape, w_value, x_value, b_value, t);
  std::printf("forward: z = %.6f, y = %.6f, L = %.6f\n\n", neuron.z.value().item(), neuron.y.value().item(),
              neuron.L.value().item());
  std::printf("the tape, in the order the nodes were recorded:\n");
  print(tape, std::cout);

  // ---- Backward, by hand, and by finite differences -----------------------------------------------------------------
  backward(tape, neuron.L);
  const Derivatives hand = by_hand(neuron.y, w_value, x_value, t);
  const Derivatives fd = finite_differences(w_value, x_value, b_value, t);
  std::printf("\nthe tape after backward (grad= is dL/d(node)):\n");
  print(tape, std::cout);
  // the same tape as a graph in Graphviz's DOT language; scripts/make_figures draws it with `dot -Tsvg`
  std::ostringstream dot;
  write_dot(tape, dot, 4, {{neuron.w, "w"}, {neuron.x, "x"}, {neuron.b, "b"}});
  attend::tutorial::write_figure(options, "01-graph.dot", dot.str());
  const bool routes_agree = compare(neuron, hand, fd);

  // ---- A value used twice; the gradient checker ---------------------------------------------------------------------
  const bool reuse_agrees = reuse(tape, x_value);
  const bool gradcheck_passed = gradcheck_layer();

  // ---- Training steps: w and b as parameters ------------------------------------------------------------------------
  const bool steps_agree = training_steps(w_value, x_value, b_value, t);
  return routes_agree && reuse_agrees && gradcheck_passed && steps_agree ? attend::tutorial::exit_status() : 1;
}
