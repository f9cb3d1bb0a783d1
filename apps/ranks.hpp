// The processes of one `attend train` run on several machines (Open MPI: `mpirun -np K attend train …`): how many
// there are, which one this is, and the few collective steps training needs. Every rank builds the same data and the
// same model and takes its rows of every batch; the gradients are then combined in rank order — gathered, then added
// one rank after the other from zero, never by an all-reduce, whose summation order is not fixed — so that K ranks of
// one thread each give the bytes of one process with K threads. Rank 0 alone prints and writes files.
// Built without MPI (meson option mpi=disabled, or no Open MPI found), or started without mpirun, there is one rank and
// every step here is the identity.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/module.hpp"
#include "nn/parallel.hpp"
#include "nn/trainer.hpp"

namespace attend::app {

class Ranks {
 public:
  // The ranks of this run: MPI is initialised on first use when the program was started by mpirun (it finalises at
  // exit); otherwise one rank.
  static Ranks& world();
  std::size_t size() const { return size_; }
  std::size_t rank() const { return rank_; }
  bool lead() const { return rank_ == 0; }
  // "rank 1 of 2: " for messages of ranks other than 0; "" for rank 0.
  std::string prefix() const;

  // Σ_r x_r, added in rank order (exact for whole numbers, the same bits on every rank).
  double sum(double x) const;
  float sum(float x) const;
  // The largest of the ranks' values (stop flags).
  int max(int x) const;
  // Every parameter's gradient becomes 0 + g_0 + g_1 + … + g_{K-1}, each rank's gradient added in rank order: the same
  // bits on every rank, and those of one process adding K shards in shard order.
  void sum_gradients(const nn::NamedParameters<float>& parameters) const;
  // Ends every rank at once with this exit status (after this rank printed why): the others must not wait for it.
  [[noreturn]] void abort(int status) const;

  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

 private:
  Ranks();
  ~Ranks();
  std::size_t size_ = 1, rank_ = 0;
  // this program called MPI_Init (and so calls MPI_Finalize); unused in a build without Open MPI
  [[maybe_unused]] bool initialised_ = false;
  mutable std::vector<float> gather_mine_, gather_all_;  // sum_gradients' buffers, reused every step
};

// Whether this build has Open MPI (the meson option mpi).
bool built_with_mpi();

// How `attend train` makes a step's loss and gradient (nn::Trainer's strategy): this process's rows of the batch (all
// of them in one process: rows × rank / ranks up to rows × (rank + 1) / ranks) cut into its threads' shards
// (nn::BatchParallel), each weighted by ShardLoss::weight; with several processes, the total weight and the gradients
// combined over all of them (Ranks::sum, sum_gradients: in rank order). K processes of one thread each give the bytes
// of one process of K threads. With more than one shard in all, shard k of step s draws its random numbers from
// generators seeded from nn::step_seed(seed, s) and its index over all processes; with one, from the modules' own.
class ProcessShards final : public nn::GradientStrategy<float> {
 public:
  // Where the last step's work went, in seconds of the wall clock: the shards' phases (nn::StepTimes, the wait for
  // the other processes' weights taken out of forward) and the time spent combining over processes.
  struct Times {
    nn::StepTimes shards;
    double processes = 0;
  };

  // Every shard multiplies with `products` (nullptr: float32), which must outlive the strategy.
  ProcessShards(const Ranks& ranks, std::size_t threads, std::uint64_t seed, bool detect_anomaly,
                const Products* products);
  float loss_and_gradient(std::int64_t step, std::size_t rows, const nn::RowsLoss<float>& loss,
                          const nn::NamedParameters<float>& parameters, double* squares) override;
  nn::Executor executor() override { return parallel_.executor(); }
  const Products* products() const override { return products_; }

  const Times& last_times() const { return times_; }
  // When the last step's loss and gradient were complete.
  std::chrono::steady_clock::time_point finished() const { return finished_; }

 private:
  const Ranks& ranks_;
  std::size_t threads_;
  std::uint64_t seed_;
  nn::BatchParallel<float> parallel_;
  const Products* products_;
  Times times_;
  std::chrono::steady_clock::time_point finished_;
};

}  // namespace attend::app
