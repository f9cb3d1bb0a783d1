// A pointer network in one file, built on the installed attend libraries: a GRU reads a sequence of vectors, and
// Bahdanau's additive score, queried with the last state, points at the step whose first value is largest. Trained
// with cross-entropy and Adam. How to build it: README.md, "Using the libraries from another project".
#include <cstdio>
#include <vector>

#include "models/attention.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "nn/recurrent.hpp"
#include "nn/trainer.hpp"
#include "ops/select.hpp"

using namespace attend;

constexpr std::size_t batch = 32, steps = 6, features = 3, hidden = 16;

struct Pointer : nn::Module<float> {
  nn::GruCell<float> cell;
  models::AdditiveScore<float> score;

  explicit Pointer(Rng& rng) : cell(features, hidden, rng), score(hidden, hidden, hidden, rng) {}
  void visit(nn::ModuleVisitor<float>& v) override {
    v.module("cell", cell);
    v.module("score", score);
  }
  // x (batch, steps, features) → scores e (batch, steps): the logits of "the largest is at step i"
  Variable<float> forward(Tape<float>& tape, const Tensor<float>& x) {
    const Variable<float> xs = tape.constant(x);
    Variable<float> h = tape.constant(Tensor<float>(Shape{batch, hidden}));
    std::vector<Variable<float>> states;
    for (std::size_t t = 0; t < steps; ++t) states.push_back(h = cell(select(xs, 1, t), h));
    return score.score(h, stack(states, 1));  // e_i = v_aᵀ tanh(W_a h_T + U_a h_i)
  }
};

// A batch of random sequences and, for each, the step whose first feature is largest.
std::pair<Tensor<float>, Ids> make_batch(Rng& rng) {
  const Tensor<float> x = rng.normal_tensor<float>(Shape{batch, steps, features}, 0.0, 1.0);
  std::vector<std::int64_t> targets(batch, 0);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t t = 1; t < steps; ++t) {
      if (x.at({b, t, 0}) > x.at({b, std::size_t(targets[b]), 0})) targets[b] = std::int64_t(t);
    }
  }
  return {x, Ids(Shape{batch}, targets)};
}

int main() {
  Rng rng(1);
  Pointer model(rng);
  nn::AdamOptions options;
  options.lr = 0.01;
  nn::Adam<float> adam(model.parameters(), options);
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape);  // clear, zero_grad, loss, backward, Adam
  const nn::CrossEntropyLoss loss_of;
  for (int step = 1; step <= 300; ++step) {
    const std::pair<Tensor<float>, Ids> made = make_batch(rng);
    const Tensor<float>& x = made.first;  // (a lambda below reads them: no structured binding)
    const Ids& targets = made.second;
    Variable<float> e;
    const float loss = trainer
                           .step(batch,
                                 [&](Tape<float>& tape, std::size_t, std::size_t) {
                                   e = model.forward(tape, x);
                                   return nn::ShardLoss<float>{loss_of(e, targets)};
                                 })
                           .loss;
    if (step == 1 || step % 100 == 0) {
      const Ids pointed = argmax(e);  // each row's highest-scoring position (ops/select.hpp)
      std::size_t right = 0;
      for (std::size_t b = 0; b < batch; ++b) right += pointed.at({b}) == targets.at({b});
      std::printf("step %d: loss %.3f, pointed right %zu of %zu\n", step, double(loss), right, batch);
    }
  }
}
