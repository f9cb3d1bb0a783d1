// nn::BatchParallel (nn/parallel.hpp): two and three shards give the gradients of the whole batch (the mean loss
// weighted by each shard's share), exactly the same numbers run after run, forward-only, uneven and tiny batches, an
// exception in one shard leaves every gradient as it was, gradients set (not added to) equal zero_grad and step, and
// the squares made in the sum equal gradient_squares (float's sum, another loop, too), and the step's times
// (last_step_times).
// Chapter: docs/performance.md ("Threads").
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "autograd/autograd.hpp"
#include "nn/generator.hpp"
#include "nn/layers.hpp"
#include "nn/parallel.hpp"
#include "nn/recurrent.hpp"
#include "runtime/context.hpp"

namespace {

using namespace attend;

// A small model with a recurrent layer: mean cross-entropy of Linear(GRU(x)) over every step of every sequence.
struct Model {
  Rng rng{7};
  nn::GruCell<double> cell{3, 5, rng};
  nn::Linear<double> out{5, 4, rng};
  Tensor<double> x = Rng(11).uniform_tensor<double>(Shape{7, 6, 3}, -2.0, 2.0);  // (batch 7, time 6, in 3)
  Ids targets = Ids(Shape{7, 6});

  Model() {
    for (std::size_t i = 0; i < targets.size(); ++i) targets.data()[i] = static_cast<std::int64_t>((i * 5 + 1) % 4);
  }
  nn::NamedParameters<double> parameters() {
    nn::NamedParameters<double> p = cell.parameters();
    for (auto& named : out.parameters()) p.push_back(named);
    return p;
  }
  // loss over rows [begin, end) of the batch
  Variable<double> loss(Tape<double>& tape, std::size_t begin, std::size_t end) {
    const std::size_t T = 6, I = 3;
    Tensor<double> part(Shape{end - begin, T, I});
    std::copy(x.data() + begin * T * I, x.data() + end * T * I, part.data());
    Ids part_targets(Shape{end - begin, T});
    std::copy(targets.data() + begin * T, targets.data() + end * T, part_targets.data());
    Variable<double> input = tape.constant(part);
    Variable<double> h = tape.constant(Tensor<double>(Shape{end - begin, 5}));
    std::vector<Variable<double>> states;
    for (std::size_t t = 0; t < T; ++t) {
      h = cell(select(input, 1, t), h);
      states.push_back(h);
    }
    return cross_entropy(out(stack(states, 1)), part_targets);
  }
  std::vector<Tensor<double>> gradients() {
    std::vector<Tensor<double>> g;
    for (auto& [name, p] : parameters()) g.push_back(p->grad);
    return g;
  }
};

double max_difference(const std::vector<Tensor<double>>& a, const std::vector<Tensor<double>>& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    for (std::size_t i = 0; i < a[k].size(); ++i) worst = std::max(worst, std::fabs(a[k].data()[i] - b[k].data()[i]));
  }
  return worst;
}

// Bit for bit: the same additions in the same order, the first starting from g_0 rather than from 0 + g_0.
bool identical(const std::vector<Tensor<double>>& a, const std::vector<Tensor<double>>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k].shape() != b[k].shape() || std::memcmp(a[k].data(), b[k].data(), a[k].size() * sizeof(double)) != 0)
      return false;
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(batch_parallel)

BOOST_AUTO_TEST_CASE(shards_give_the_whole_batch_gradient) {
  Model model;
  // the reference: one tape over the whole batch
  Tape<double> tape;
  Variable<double> whole = model.loss(tape, 0, 7);
  tape.backward(whole);
  const std::vector<Tensor<double>> expected = model.gradients();
  for (std::size_t threads : {1u, 2u, 3u}) {
    for (auto& [name, p] : model.parameters()) p->zero_grad();
    nn::BatchParallel<double> parallel(threads);
    const double loss = parallel.step(7, [&](Tape<double>& t, std::size_t begin, std::size_t end) {
      return nn::ShardLoss<double>{model.loss(t, begin, end), double(end - begin)};
    });
    BOOST_TEST(std::fabs(loss - whole.value().item()) < 1e-12, "threads " << threads);
    BOOST_TEST(max_difference(model.gradients(), expected) < 1e-12, "threads " << threads);
  }
}

// last_step_times(): zeros before the first step; then each phase's wall time, and the time the faster shards waited
// for the slowest, here shard 1, which sleeps 60 ms in forward and 150 in backward (an identity op on its loss that
// sleeps there): shard 0 then waits about as long in each (about 210 ms in all; 150 with forward's left out, 60 with
// backward's, 120 with backward's shard times not taken, so that a bound of 180 leaves 30 ms for the scheduler on a
// loaded machine); on one thread, nothing waits.
BOOST_AUTO_TEST_CASE(step_times_give_each_phase_and_the_waiting) {
  Model model;
  for (std::size_t threads : {1u, 2u}) {
    nn::BatchParallel<double> parallel(threads);
    const nn::StepTimes& times = parallel.last_step_times();
    BOOST_TEST((times.forward == 0 && times.backward == 0 && times.sums == 0 && times.waiting == 0));
    parallel.step(7, [&](Tape<double>& t, std::size_t begin, std::size_t end) {
      Variable<double> loss = model.loss(t, begin, end);
      if (begin == 0) return nn::ShardLoss<double>{loss, double(end - begin)};
      std::this_thread::sleep_for(std::chrono::milliseconds(60));
      Variable<double> slow = t.record("slow", loss.value(), {loss}, [](BackwardContext<double>& c) {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        c.dx(0).flat() += c.dy().flat();
      });
      return nn::ShardLoss<double>{slow, double(end - begin)};
    });
    BOOST_TEST(times.backward > 0.0, "threads " << threads);
    BOOST_TEST(times.sums > 0.0, "threads " << threads);
    if (threads == 1) {
      BOOST_TEST(times.waiting == 0.0);
      continue;
    }
    BOOST_TEST(times.forward >= 0.06);
    BOOST_TEST(times.backward >= 0.15);
    BOOST_TEST(times.waiting >= 0.18, times.waiting);  // 60 + 150 ms, less what shard 0 itself took
    BOOST_TEST(times.waiting <= times.forward + times.backward, times.waiting);
  }
}

BOOST_AUTO_TEST_CASE(the_same_thread_count_gives_identical_numbers) {
  Model model;
  std::vector<std::vector<Tensor<double>>> runs;
  for (int run = 0; run < 3; ++run) {
    for (auto& [name, p] : model.parameters()) p->zero_grad();
    nn::BatchParallel<double> parallel(2);
    parallel.step(7, [&](Tape<double>& t, std::size_t begin, std::size_t end) {
      return nn::ShardLoss<double>{model.loss(t, begin, end), double(end - begin)};
    });
    runs.push_back(model.gradients());
  }
  BOOST_TEST(max_difference(runs[0], runs[1]) == 0.0);
  BOOST_TEST(max_difference(runs[0], runs[2]) == 0.0);
}

BOOST_AUTO_TEST_CASE(assigned_gradients_equal_zero_grad_then_step) {
  Model model;
  Parameter<double> unused(Tensor<double>(Shape{2, 2}, 1.0));  // in the list, reached by no shard
  const auto shard_loss = [&](Tape<double>& t, std::size_t begin, std::size_t end) {
    return nn::ShardLoss<double>{model.loss(t, begin, end), double(end - begin)};
  };
  for (std::size_t threads : {1u, 2u, 3u}) {
    nn::BatchParallel<double> parallel(threads);
    for (auto& [name, p] : model.parameters()) p->zero_grad();
    parallel.step(7, shard_loss);
    const std::vector<Tensor<double>> added = model.gradients();
    nn::NamedParameters<double> list = model.parameters();
    list.emplace_back("unused", &unused);
    for (auto& [name, p] : list) p->grad = Tensor<double>(p->value.shape(), 5.0);  // a previous step's, say
    parallel.step(7, shard_loss, {}, &list);
    BOOST_TEST(identical(model.gradients(), added), "threads " << threads);
    BOOST_TEST((unused.grad.flat() == Tensor<double>(Shape{2, 2}).flat()), "threads " << threads);
  }
}

// The gradient's squares made while the shards' gradients are summed (for clipping without a pass of its own) equal
// gradient_squares of the list, bit for bit: a parameter of several chunks (90,000 elements), the list in another
// order than the shards reach the parameters, one parameter reached by none; without the list, std::invalid_argument.
BOOST_AUTO_TEST_CASE(squares_made_in_the_sum_equal_gradient_squares) {
  Model model;
  Rng rng(5);
  nn::Linear<double> wide{3, 30000, rng};  // W: 90,000 elements, two chunks of clip_grad_norm's
  Parameter<double> unused(Tensor<double>(Shape{2, 2}, 1.0));
  const auto shard_loss = [&](Tape<double>& t, std::size_t begin, std::size_t end) {
    Ids targets(Shape{end - begin});
    for (std::size_t r = begin; r < end; ++r) targets.data()[r - begin] = static_cast<std::int64_t>(r * 4099 % 30000);
    const Variable<double> x = t.constant(Rng(begin + 1).uniform_tensor<double>(Shape{end - begin, 3}, -1.0, 1.0));
    // wide's squares about 10¹² times the GRU's: added in another order, the sum would round differently
    const Variable<double> loss = model.loss(t, begin, end) + cross_entropy(wide(x), targets) * 1e6;
    return nn::ShardLoss<double>{loss, double(end - begin)};
  };
  nn::NamedParameters<double> list = wide.parameters();
  list.emplace_back("unused", &unused);
  for (auto& named : model.parameters()) list.push_back(named);  // the shards reach the GRU first
  for (std::size_t threads : {1u, 2u, 3u}) {
    nn::BatchParallel<double> parallel(threads);
    double squares = -1;
    parallel.step(7, shard_loss, {}, &list, &squares);
    BOOST_TEST(squares == nn::gradient_squares(list), "threads " << threads);
    BOOST_TEST(squares > 0.0);
  }
  nn::BatchParallel<double> parallel(2);
  double squares = -1;
  try {
    parallel.step(7, shard_loss, {}, nullptr, &squares);
    BOOST_ERROR("no exception");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("the gradients' squares need the list") != std::string::npos, e.what());
  }
  BOOST_TEST(squares == -1.0);
}

// float's sum is another loop (kernels::sum_parts): the same gradients as zero_grad then step, and the same squares as
// gradient_squares, for parameters of one chunk and (the wide weight) of several; with 4.5 million gradients in all
// (18 MB, above kernels::streaming_bytes) it writes past the cache, with 180 thousand it does not.
BOOST_AUTO_TEST_CASE(float_sums_equal_zero_grad_then_step_and_their_squares) {
  for (const std::size_t in : {5u, 150u}) {
    Rng rng(3);
    nn::Linear<float> wide{in, 30000, rng}, narrow{in, 7, rng};
    const auto shard_loss = [&](Tape<float>& t, std::size_t begin, std::size_t end) {
      Ids wide_targets(Shape{end - begin}), narrow_targets(Shape{end - begin});
      for (std::size_t r = begin; r < end; ++r) {
        wide_targets.data()[r - begin] = static_cast<std::int64_t>(r * 4099 % 30000);
        narrow_targets.data()[r - begin] = static_cast<std::int64_t>(r % 7);
      }
      const Variable<float> x = t.constant(Rng(begin + 1).uniform_tensor<float>(Shape{end - begin, in}, -1.0, 1.0));
      const Variable<float> loss = cross_entropy(wide(x), wide_targets) + cross_entropy(narrow(x), narrow_targets);
      return nn::ShardLoss<float>{loss, float(end - begin)};
    };
    nn::NamedParameters<float> list = narrow.parameters();
    for (auto& named : wide.parameters()) list.push_back(named);
    for (std::size_t threads : {1u, 2u, 3u}) {
      nn::BatchParallel<float> parallel(threads);
      for (auto& [name, p] : list) p->zero_grad();
      parallel.step(9, shard_loss);
      std::vector<Tensor<float>> added;
      for (auto& [name, p] : list) added.push_back(p->grad);
      for (auto& [name, p] : list) p->grad = Tensor<float>(p->value.shape(), 5.0f);  // a previous step's, say
      double squares = -1;
      parallel.step(9, shard_loss, {}, &list, &squares);
      for (std::size_t i = 0; i < list.size(); ++i) {
        BOOST_TEST((list[i].second->grad.flat() == added[i].flat()),
                   list[i].first << ", in " << in << ", threads " << threads);
      }
      BOOST_TEST(squares == nn::gradient_squares(list), "in " << in << ", threads " << threads);
      BOOST_TEST(squares > 0.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_reached_parameter_missing_from_the_list_changes_no_gradient) {
  Model model;
  nn::NamedParameters<double> list = model.parameters();
  list.pop_back();  // out's bias, which every shard reaches
  for (auto& [name, p] : model.parameters()) p->grad = Tensor<double>(p->value.shape(), 5.0);
  nn::BatchParallel<double> parallel(2);
  try {
    parallel.step(
        7,
        [&](Tape<double>& t, std::size_t begin, std::size_t end) {
          return nn::ShardLoss<double>{model.loss(t, begin, end), double(end - begin)};
        },
        {}, &list);
    BOOST_ERROR("no exception");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("parameter of shape (4,) that is not in the list") != std::string::npos,
               e.what());
  }
  for (auto& [name, p] : model.parameters())
    BOOST_TEST((p->grad.flat() == Tensor<double>(p->value.shape(), 5.0).flat()));
}

BOOST_AUTO_TEST_CASE(fewer_rows_than_threads_and_forward_only) {
  Model model;
  nn::BatchParallel<double> parallel(4);
  const double loss = parallel.forward(2, [&](Tape<double>& t, std::size_t begin, std::size_t end) {
    BOOST_TEST(!t.grad_enabled());
    return nn::ShardLoss<double>{model.loss(t, begin, end), double(end - begin)};
  });
  Tape<double> tape;
  BOOST_TEST(std::fabs(loss - model.loss(tape, 0, 2).value().item()) < 1e-12);
  for (auto& [name, p] : model.parameters()) BOOST_TEST((p->grad.flat() == Tensor<double>(p->value.shape()).flat()));
  BOOST_CHECK_THROW(parallel.step(0,
                                  [&](Tape<double>& t, std::size_t b, std::size_t e) {
                                    return nn::ShardLoss<double>{model.loss(t, b, e), 1.0};
                                  }),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(an_exception_in_one_shard_changes_no_gradient) {
  Model model;
  for (auto& [name, p] : model.parameters()) p->zero_grad();
  nn::BatchParallel<double> parallel(2);
  BOOST_CHECK_THROW(parallel.step(7,
                                  [&](Tape<double>& t, std::size_t begin, std::size_t end) {
                                    if (begin > 0) throw std::runtime_error("shard failed");
                                    return nn::ShardLoss<double>{model.loss(t, begin, end), double(end - begin)};
                                  }),
                    std::runtime_error);
  for (auto& [name, p] : model.parameters()) BOOST_TEST((p->grad.flat() == Tensor<double>(p->value.shape()).flat()));
  // and the pool still works afterwards
  parallel.step(7, [&](Tape<double>& t, std::size_t begin, std::size_t end) {
    return nn::ShardLoss<double>{model.loss(t, begin, end), double(end - begin)};
  });
  BOOST_TEST((model.cell.W_hh.grad.flat() != Tensor<double>(model.cell.W_hh.value.shape()).flat()));
}

BOOST_AUTO_TEST_CASE(seeded_shards_draw_their_own_random_numbers) {
  // dropout in training mode on several threads: after seed_shards(s), a module's draws on shard k's tape come from a
  // generator made from s and k (the tape's context, nn::RandomStream::on) — the same numbers run after run and
  // whichever thread runs first, a new seed new numbers, the module's own stream untouched, and the seed used for one
  // step only
  Model model;
  nn::RandomStream module_stream(3);
  const Rng::State module_state = module_stream.state().state();
  const auto dropped_loss = [&](Tape<double>& t, std::size_t begin, std::size_t end) {
    Variable<double> l = model.loss(t, begin, end);
    Variable<double> h =
        nn::dropout(t.constant(Tensor<double>(Shape{end - begin, 16}, 1.0)), 0.5, true, module_stream.on(t));
    return nn::ShardLoss<double>{add(l, mean(h)), double(end - begin)};
  };
  std::vector<double> losses;
  for (const std::uint64_t seed : {11u, 11u, 12u}) {
    nn::BatchParallel<double> parallel(3);
    parallel.seed_shards(seed);
    losses.push_back(parallel.step(7, dropped_loss));
  }
  BOOST_TEST(losses[0] == losses[1]);
  BOOST_TEST(losses[0] != losses[2]);
  BOOST_TEST((module_stream.state().state() == module_state));
  // the seed was for one step: the next draws from the module's stream again
  nn::BatchParallel<double> parallel(2);
  parallel.seed_shards(11);
  parallel.step(7, dropped_loss);
  parallel.step(7, dropped_loss);
  BOOST_TEST((module_stream.state().state() != module_state));
}

BOOST_AUTO_TEST_CASE(a_tapes_generator_replaces_the_modules_own_on_that_tape_only) {
  // a Context with a generator on a tape (what BatchParallel sets for each shard): a module's random op on that tape
  // draws from it — the same mask as dropout given that generator — and leaves the module's stream untouched; on
  // another tape, and once the context has no generator, the module draws from its own again
  const Tensor<double> ones(Shape{6, 7}, 1.0);
  nn::Dropout<double> layer(0.5, 7);
  const Rng::State own_before = layer.generators()[0].second->state();
  Tape<double> tape, other;
  Rng shard(42), same(42);
  Tape<double> plain;
  const Tensor<double> expected = nn::dropout(plain.constant(ones), 0.5, true, same).value();
  Context context{&shard};
  tape.set_context(&context);
  BOOST_TEST((layer(tape.constant(ones)).value().flat() == expected.flat()));
  BOOST_TEST((shard.state() == same.state()));  // as many numbers drawn
  BOOST_TEST((layer.generators()[0].second->state() == own_before));
  layer(other.constant(ones));  // another tape: the module's own stream
  BOOST_TEST((layer.generators()[0].second->state() != own_before));
  const Rng::State own_after = layer.generators()[0].second->state();
  const Rng::State shard_after = shard.state();
  context.generator = nullptr;
  layer(tape.constant(ones));
  BOOST_TEST((shard.state() == shard_after));
  BOOST_TEST((layer.generators()[0].second->state() != own_after));
}

// A module of a test's own that draws random numbers, written with no thread or process code: it asks its stream for
// the generator of the tape it records on, as nn::Dropout does.
struct Noisy : nn::Module<double> {
  Rng init{9};
  nn::Linear<double> linear{5, 4, init};
  nn::RandomStream noise{21};
  // linear(x) plus noise drawn for every element, in training mode
  Variable<double> forward(const Variable<double>& x) {
    const Variable<double> y = linear(x);
    Rng& rng = noise.on(x.tape());
    Tensor<double> n(y.value().shape());
    for (double& e : n.flat()) e = rng.uniform(-0.1, 0.1);
    return add(y, x.tape().constant(n));
  }
  void visit(nn::ModuleVisitor<double>& v) override {
    v.module("linear", linear);
    v.generator("noise", noise.state());
  }
};

BOOST_AUTO_TEST_CASE(a_module_that_draws_gives_the_same_bytes_on_two_threads_and_on_two_ranks) {
  // two threads: one BatchParallel with 2 shards; two ranks: what app::ProcessShards does with one thread a process —
  // each rank's BatchParallel(1) seeded with its first shard (the rank), the gradients added in rank order
  const Tensor<double> x = Rng(4).uniform_tensor<double>(Shape{6, 5}, -1.0, 1.0);
  const auto loss_of = [&](Noisy& model) {
    return [&](Tape<double>& t, std::size_t begin, std::size_t end) {
      Tensor<double> part(Shape{end - begin, 5});
      std::copy(x.data() + begin * 5, x.data() + end * 5, part.data());
      const Variable<double> y = model.forward(t.constant(part));
      return nn::ShardLoss<double>{mean(y * y), double(end - begin)};
    };
  };
  Noisy threaded;
  nn::BatchParallel<double> two(2);
  two.seed_shards(77);
  const double loss_threads = two.step(6, loss_of(threaded), {}, nullptr);
  Noisy ranked;
  std::vector<Tensor<double>> sums;
  double loss_ranks = 0;
  for (std::size_t rank = 0; rank < 2; ++rank) {
    nn::BatchParallel<double> one(1);
    one.seed_shards(77, rank);
    Noisy& model = ranked;
    for (auto& [name, p] : model.parameters()) p->zero_grad();
    const auto rows = [&](Tape<double>& t, std::size_t begin, std::size_t end) {
      return loss_of(model)(t, 3 * rank + begin, 3 * rank + end);
    };
    // the total weight over both ranks (6 rows) seeds backward, as Ranks::sum gives it
    loss_ranks += one.step(3, rows, [](double) { return 6.0; });
    std::size_t k = 0;
    for (auto& [name, p] : model.parameters()) {
      if (rank == 0) sums.emplace_back(p->grad.shape());  // 0 + g_0 + g_1, as Ranks::sum_gradients adds
      for (std::size_t i = 0; i < p->grad.size(); ++i) sums[k].data()[i] += p->grad.data()[i];
      ++k;
    }
  }
  BOOST_TEST(loss_ranks == loss_threads);
  std::size_t k = 0;
  for (auto& [name, p] : threaded.parameters()) {
    BOOST_TEST(std::memcmp(p->grad.data(), sums[k].data(), p->grad.size() * sizeof(double)) == 0, name);
    ++k;
  }
  // and the module's own stream was never used: its numbers are the shards'
  BOOST_TEST((threaded.noise.state().state() == Rng(21).state()));
}

BOOST_AUTO_TEST_CASE(for_ranges_covers_every_index_once) {
  nn::BatchParallel<double> parallel(3);
  for (const std::size_t count : {0u, 1u, 2u, 3u, 10u, 100001u}) {
    std::vector<int> seen(count, 0);
    parallel.for_ranges(count, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) ++seen[i];  // ranges are disjoint: no two threads write one element
    });
    BOOST_TEST(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(count));
  }
  BOOST_CHECK_THROW(parallel.for_ranges(10,
                                        [](std::size_t begin, std::size_t) {
                                          if (begin > 0) throw std::runtime_error("range failed");
                                        }),
                    std::runtime_error);
  // the gradient sum shared out over the threads adds in shard order, as the shards' backward passes one after the
  // other on plain tapes would (rows [0, 3) then [3, 7), each seeded with its share of the weight)
  Model model;
  for (auto& [name, p] : model.parameters()) p->zero_grad();
  nn::BatchParallel<double> two(2);
  const auto f = [&](Tape<double>& t, std::size_t begin, std::size_t end) {
    return nn::ShardLoss<double>{model.loss(t, begin, end), double(end - begin)};
  };
  two.step(7, f);
  const std::vector<Tensor<double>> shared = model.gradients();
  for (auto& [name, p] : model.parameters()) p->zero_grad();
  for (const auto& [begin, end] : {std::pair<std::size_t, std::size_t>{0, 3}, {3, 7}}) {
    Tape<double> tape;
    const Variable<double> loss = model.loss(tape, begin, end);
    tape.backward(loss, Tensor<double>(Shape{}, static_cast<double>(end - begin) / 7.0));
  }
  BOOST_TEST(max_difference(model.gradients(), shared) == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
