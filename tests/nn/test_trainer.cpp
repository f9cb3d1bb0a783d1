// nn::Trainer (nn/trainer.hpp): its step on one tape is the loop written out — clear, zero_grad, loss, backward,
// clip_grad_norm, step, schedule — to the bit, with clipping that bites, without clipping, and with a schedule; on
// ThreadShards it is BatchParallel used by hand (seeded shards too); a loss that is not finite changes nothing; and a
// bad max_grad_norm is refused. Chapter: docs/03-encoder-decoder.md ("The step").
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "autograd/autograd.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"

namespace {

using namespace attend;

// Mean cross-entropy of Linear(tanh(Linear(x))) over a batch of 9 rows, with dropout between the layers (in training
// mode, so that a step draws random numbers).
struct Model : nn::Module<float> {
  Rng rng{3};
  nn::Linear<float> hidden{4, 6, rng};
  nn::Dropout<float> dropout{0.25, 5};
  nn::Linear<float> out{6, 3, rng};
  Tensor<float> x = Rng(11).uniform_tensor<float>(Shape{9, 4}, -2.0F, 2.0F);
  Ids targets = Ids(Shape{9});
  float scale = 1;  // of the input: NaN makes the loss NaN

  Model() {
    for (std::size_t i = 0; i < targets.size(); ++i) targets.data()[i] = static_cast<std::int64_t>((i * 2 + 1) % 3);
  }
  void visit(nn::ModuleVisitor<float>& v) override {
    v.module("hidden", hidden);
    v.module("dropout", dropout);
    v.module("out", out);
  }
  // the loss of rows [begin, end), weighted by its row count
  nn::ShardLoss<float> loss(Tape<float>& tape, std::size_t begin, std::size_t end) {
    Tensor<float> part(Shape{end - begin, 4});
    for (std::size_t i = 0; i < part.size(); ++i) part.data()[i] = scale * x.data()[begin * 4 + i];
    Ids part_targets(Shape{end - begin});
    std::copy(targets.data() + begin, targets.data() + end, part_targets.data());
    const Variable<float> h = dropout(tanh(hidden(tape.constant(part))));
    return {cross_entropy(out(h), part_targets), static_cast<double>(end - begin)};
  }
  std::vector<float> values() {
    std::vector<float> all;
    for (const auto& [name, p] : parameters())
      all.insert(all.end(), p->value.data(), p->value.data() + p->value.size());
    return all;
  }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Five steps of the loop written out (chapter 1's step with clip_grad_norm and a schedule), on one tape.
std::vector<float> by_hand(double max_grad_norm, std::vector<float>& losses) {
  Model model;
  nn::Adam<float> adam(model.parameters(), {0.05});
  nn::MultiStepLR schedule(adam, {2}, 0.1);
  Tape<float> tape;
  for (int s = 0; s < 5; ++s) {
    tape.clear();
    adam.zero_grad();
    const Variable<float> L = model.loss(tape, 0, 9).loss;
    tape.backward(L);
    if (max_grad_norm > 0) nn::clip_grad_norm(model.parameters(), max_grad_norm);
    adam.step();
    schedule.step();
    losses.push_back(L.value().item());
  }
  return model.values();
}

// The same five steps through a Trainer with `strategy`.
std::vector<float> by_trainer(nn::GradientStrategy<float>& strategy, double max_grad_norm, std::vector<float>& losses,
                              std::vector<float>& norms) {
  Model model;
  nn::Adam<float> adam(model.parameters(), {0.05});
  nn::MultiStepLR schedule(adam, {2}, 0.1);
  nn::Trainer<float> trainer(adam, strategy, max_grad_norm);
  trainer.add_schedule(schedule);
  for (int s = 0; s < 5; ++s) {
    const nn::StepReport<float> report = trainer.step(
        9, [&](Tape<float>& tape, std::size_t begin, std::size_t end) { return model.loss(tape, begin, end); });
    BOOST_TEST(report.updated);
    losses.push_back(report.loss);
    norms.push_back(report.norm);
  }
  BOOST_TEST(adam.lr == 0.05 * 0.1);  // the schedule stepped after every update
  return model.values();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(trainer)

BOOST_AUTO_TEST_CASE(one_tape_step_is_the_loop_written_out_to_the_bit) {
  // 0.2 clips every step here (the norms are larger), 100 never does, 0 does not clip at all
  for (const double max_grad_norm : {0.2, 100.0, 0.0}) {
    std::vector<float> hand_losses, losses, norms;
    const std::vector<float> expected = by_hand(max_grad_norm, hand_losses);
    nn::OneTape<float> one_tape;
    const std::vector<float> got = by_trainer(one_tape, max_grad_norm, losses, norms);
    BOOST_TEST(same_bits(got, expected), "max_grad_norm " << max_grad_norm);
    BOOST_TEST(losses == hand_losses);
    if (max_grad_norm == 0.2) {
      for (const float norm : norms) BOOST_TEST(norm > 0.2F);  // clipping bit
    }
    if (max_grad_norm == 0.0) {
      for (const float norm : norms) BOOST_TEST(norm == 0.0F);
    }
  }
}

BOOST_AUTO_TEST_CASE(thread_shards_are_batch_parallel_used_by_hand) {
  for (const std::size_t threads : {1, 2}) {
    // on one thread the modules' own streams, on two the shards' generators (never one stream from two threads)
    const bool seeded = threads > 1;
    {
      Model model;
      nn::Adam<float> adam(model.parameters(), {0.05});
      nn::BatchParallel<float> parallel(threads);
      const std::uint64_t seed = 17;
      for (int s = 0; s < 4; ++s) {
        if (seeded) parallel.seed_shards(nn::step_seed(seed, s));
        parallel.step(
            9, [&](Tape<float>& tape, std::size_t b, std::size_t e) { return model.loss(tape, b, e); }, {},
            &adam.parameters());
        nn::clip_grad_norm(adam.parameters(), 0.2, parallel.executor());
        adam.step(parallel.executor());
      }
      nn::ThreadShards<float> shards(threads, seed);
      Model same;
      nn::Adam<float> adam2(same.parameters(), {0.05});
      nn::Trainer<float> trainer(adam2, shards, 0.2);
      for (int s = 0; s < 4; ++s) {
        trainer.step(9, [&](Tape<float>& tape, std::size_t b, std::size_t e) { return same.loss(tape, b, e); });
      }
      BOOST_TEST(same_bits(same.values(), model.values()), threads << " threads, seeded " << seeded);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_loss_that_is_not_finite_changes_nothing) {
  Model model;
  nn::Adam<float> adam(model.parameters(), {0.05});
  nn::MultiStepLR schedule(adam, {0}, 0.1);  // would set lr to 0.005 at its first step
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape, 1.0);
  trainer.add_schedule(schedule);
  const auto loss = [&](Tape<float>& tape, std::size_t b, std::size_t e) { return model.loss(tape, b, e); };
  trainer.step(9, loss);
  const std::vector<float> before = model.values();
  model.scale = std::numeric_limits<float>::quiet_NaN();
  const nn::StepReport<float> report = trainer.step(9, loss);
  BOOST_TEST(!report.updated);
  BOOST_TEST(std::isnan(report.loss));
  BOOST_TEST(same_bits(model.values(), before));
  BOOST_TEST(adam.step_count() == 1);
  BOOST_TEST(schedule.state().epoch == 1);
}

BOOST_AUTO_TEST_CASE(a_bad_max_grad_norm_is_refused) {
  Model model;
  nn::Adam<float> adam(model.parameters(), {0.05});
  nn::OneTape<float> one_tape;
  BOOST_CHECK_THROW(nn::Trainer<float>(adam, one_tape, -1.0), std::invalid_argument);
  BOOST_CHECK_THROW(nn::Trainer<float>(adam, one_tape, std::nan("")), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
