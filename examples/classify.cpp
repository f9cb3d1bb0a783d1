// A sequence classifier from attend's nn layers, trained with Adam, one nn::Trainer step a batch: an embedding, a GRU
// and a linear layer read a sequence of 12 symbols from {a, b, c} and name the one that occurs most often. Links
// attend-nn (which brings attend-autograd). How to build it: README.md, "Using the libraries from another project".
// Exits with status 1 if it did not learn.
#include <array>
#include <cstdio>
#include <vector>

#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "nn/recurrent.hpp"
#include "nn/trainer.hpp"
#include "ops/select.hpp"

using namespace attend;

constexpr std::size_t batch = 64, length = 12, symbols = 3, hidden = 32;

struct Classifier : nn::Module<float> {
  nn::Embedding<float> embedding;
  nn::RecurrentStack<float> gru;
  nn::Linear<float> output;

  explicit Classifier(Rng& rng)
      : embedding(symbols, 8, rng),
        gru({.cell = nn::CellKind::gru, .input_size = 8, .hidden_size = hidden}, rng),
        output(hidden, symbols, rng) {}
  void visit(nn::ModuleVisitor<float>& v) override {
    v.module("embedding", embedding);
    v.module("gru", gru);
    v.module("output", output);
  }
  // ids (batch, length) → logits (batch, symbols), from the GRU's last state
  Variable<float> forward(Tape<float>& tape, const Ids& ids) {
    return output(gru.forward(embedding(tape, ids)).h_final[0]);
  }
};

// Random sequences without a tie for the most frequent symbol, and that symbol.
std::pair<Ids, Ids> make_batch(Rng& rng) {
  std::vector<std::int64_t> ids, targets;
  while (targets.size() < batch) {
    std::vector<std::int64_t> sequence(length);
    std::array<int, symbols> counts{};
    for (auto& s : sequence) ++counts[std::size_t(s = std::int64_t(rng.below(symbols)))];
    std::size_t most = 0;
    for (std::size_t s = 1; s < symbols; ++s) most = counts[s] > counts[most] ? s : most;
    int ties = 0;
    for (int c : counts) ties += c == counts[most];
    if (ties > 1) continue;
    ids.insert(ids.end(), sequence.begin(), sequence.end());
    targets.push_back(std::int64_t(most));
  }
  return {Ids(Shape{batch, length}, ids), Ids(Shape{batch}, targets)};
}

int main() {
  Rng rng(1);
  Classifier model(rng);
  nn::AdamOptions options;
  options.lr = 0.01;
  nn::Adam<float> adam(model.parameters(), options);
  nn::OneTape<float> one_tape;                 // the whole batch on one tape
  nn::Trainer<float> trainer(adam, one_tape);  // the step: clear, zero_grad, loss, backward, Adam
  const nn::CrossEntropyLoss loss_of;
  std::size_t right = 0;
  for (int step = 1; step <= 400; ++step) {
    const std::pair<Ids, Ids> made = make_batch(rng);
    const Ids& ids = made.first;  // (a lambda below reads them: no structured binding)
    const Ids& targets = made.second;
    Variable<float> logits;
    const nn::StepReport<float> report = trainer.step(batch, [&](Tape<float>& tape, std::size_t, std::size_t) {
      logits = model.forward(tape, ids);
      return nn::ShardLoss<float>{loss_of(logits, targets)};
    });
    const Ids named = argmax(logits);  // each row's most likely symbol before the step (ops/select.hpp)
    right = 0;
    for (std::size_t b = 0; b < batch; ++b) right += named.at({b}) == targets.at({b});
    if (step == 1 || step % 100 == 0) {
      std::printf("step %d: loss %.3f, named the most frequent symbol in %zu of %zu\n", step, double(report.loss),
                  right, batch);
    }
  }
  return right >= batch * 8 / 10 ? 0 : 1;
}
