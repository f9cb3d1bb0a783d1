// Ranks (ranks.hpp): Open MPI when the build has it (ATTEND_MPI) and mpirun started the program, one rank otherwise.
#include "apps/ranks.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/clock.hpp"

#ifdef ATTEND_MPI
// the C interface only: the deprecated C++ bindings' header does not compile cleanly with -Wextra
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace attend::app {

namespace {

#ifdef ATTEND_MPI
using MpiType = MPI_Datatype;
MpiType mpi_type(double) { return MPI_DOUBLE; }
MpiType mpi_type(float) { return MPI_FLOAT; }
#else
using MpiType = int;
MpiType mpi_type(double) { return 0; }
MpiType mpi_type(float) { return 0; }
#endif

#ifdef ATTEND_MPI
// mpirun (Open MPI's launcher) or another PMIx launcher started this process.
bool started_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}
#endif

}  // namespace

bool built_with_mpi() {
#ifdef ATTEND_MPI
  return true;
#else
  return false;
#endif
}

Ranks& Ranks::world() {
  static Ranks ranks;
  return ranks;
}

Ranks::Ranks() {
#ifdef ATTEND_MPI
  if (!started_by_mpirun()) return;
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);  // only the main thread talks to MPI
    initialised_ = true;
  }
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  size_ = static_cast<std::size_t>(size);
  rank_ = static_cast<std::size_t>(rank);
#endif
}

Ranks::~Ranks() {
#ifdef ATTEND_MPI
  if (initialised_) MPI_Finalize();
#endif
}

std::string Ranks::prefix() const {
  return rank_ == 0 ? "" : "rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": ";
}

namespace {

// Σ_r x_r in rank order, on every rank: gathered, then added from zero one rank after the other.
template <class T>
T sum_in_rank_order(T x, std::size_t size, [[maybe_unused]] MpiType type) {
  if (size == 1) return x;
  std::vector<T> all(size);
#ifdef ATTEND_MPI
  MPI_Allgather(&x, 1, type, all.data(), 1, type, MPI_COMM_WORLD);
#endif
  T total = 0;
  for (const T v : all) total += v;
  return total;
}

}  // namespace

double Ranks::sum(double x) const { return sum_in_rank_order(x, size_, mpi_type(x)); }

float Ranks::sum(float x) const { return sum_in_rank_order(x, size_, mpi_type(x)); }

int Ranks::max(int x) const {
  if (size_ == 1) return x;
  int result = x;
#ifdef ATTEND_MPI
  MPI_Allreduce(&x, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
  return result;
}

void Ranks::sum_gradients(const nn::NamedParameters<float>& parameters) const {
  if (size_ == 1) return;
  std::size_t count = 0;
  for (const auto& named : parameters) count += named.second->value.size();
  // the buffers are kept from step to step: the same 2 × K × (parameters) floats every step
  std::vector<float>& mine = gather_mine_;
  std::vector<float>& all = gather_all_;
  mine.resize(count);
  all.resize(count * size_);
  std::size_t at = 0;
  for (const auto& [name, p] : parameters) {
    if (p->grad.shape() != p->value.shape()) p->grad = Tensor<float>(p->value.shape());
    std::copy(p->grad.data(), p->grad.data() + p->grad.size(), mine.data() + at);
    at += p->grad.size();
  }
#ifdef ATTEND_MPI
  // one message per rank of up to 2^31 - 1 floats: more parameters than that need a chunked gather
  if (count > 2147483647u) {
    throw std::runtime_error("sum_gradients: more than 2^31 - 1 parameters");
  }
  MPI_Allgather(mine.data(), static_cast<int>(count), MPI_FLOAT, all.data(), static_cast<int>(count), MPI_FLOAT,
                MPI_COMM_WORLD);
#endif
  at = 0;
  for (const auto& [name, p] : parameters) {
    float* g = p->grad.data();
    const std::size_t n = p->grad.size();
    std::fill(g, g + n, 0.0f);
    for (std::size_t r = 0; r < size_; ++r) {
      const float* add = all.data() + r * count + at;
      for (std::size_t i = 0; i < n; ++i) g[i] += add[i];
    }
    at += n;
  }
}

void Ranks::abort(int status) const {
#ifdef ATTEND_MPI
  if (size_ > 1) {
    // Most errors are met by every rank at once (the same flags, the same files). Two MPI_Abort calls at the same time
    // made Open MPI 4.1's mpirun crash in its error reporting now and then (a segmentation fault instead of the exit
    // status, about one run in six on a loaded machine): the other ranks give rank 0's abort a second to end them
    // first, and abort themselves only when rank 0 did not.
    if (rank_ != 0) std::this_thread::sleep_for(std::chrono::seconds(1));
    MPI_Abort(MPI_COMM_WORLD, status);
  }
#endif
  std::exit(status);
}

ProcessShards::ProcessShards(const Ranks& ranks, std::size_t threads, std::uint64_t seed, bool detect_anomaly,
                             const Products* products)
    : ranks_(ranks), threads_(threads), seed_(seed), parallel_(threads, products), products_(products) {
  // --detect-anomaly on every shard's tape (BatchParallel's tapes already free each node's gradient once used)
  for (std::size_t k = 0; k < threads; ++k) parallel_.tape(k).set_anomaly_detection(detect_anomaly);
}

float ProcessShards::loss_and_gradient(std::int64_t step, std::size_t rows, const nn::RowsLoss<float>& loss,
                                       const nn::NamedParameters<float>& parameters, double* squares) {
  times_ = {};
  if (squares != nullptr) *squares = 0.0;
  const std::size_t begin = rows * ranks_.rank() / ranks_.size();
  const std::size_t end = rows * (ranks_.rank() + 1) / ranks_.size();
  if (ranks_.size() * threads_ > 1) parallel_.seed_shards(nn::step_seed(seed_, step), ranks_.rank() * threads_);
  float value = 0;
  if (begin < end) {
    const auto mine = [&](Tape<float>& tape, std::size_t first, std::size_t last) {
      return loss(tape, begin + first, begin + last);
    };
    std::function<double(double)> total_of;
    double combining = 0;  // of forward's time, the wait for the other processes' weights
    if (ranks_.size() > 1) {
      total_of = [&](double weight) {
        const Clock::time_point start = Clock::now();
        const double all = ranks_.sum(weight);
        combining = seconds_since(start);
        return all;
      };
    }
    // sets the gradient of every parameter (zero_grad and then adding would take two more passes)
    value = parallel_.step(end - begin, mine, total_of, &parameters, ranks_.size() == 1 ? squares : nullptr);
    times_.shards = parallel_.last_step_times();
    times_.shards.forward -= combining;
    times_.processes += combining;
  } else {
    const Clock::time_point start = Clock::now();
    nn::zero_grad(parameters, parallel_.executor());
    ranks_.sum(0.0);  // a batch with fewer rows than processes: this one has none, but takes part
    times_.processes += seconds_since(start);
  }
  if (ranks_.size() > 1) {
    const Clock::time_point start = Clock::now();
    ranks_.sum_gradients(parameters);
    if (squares != nullptr) *squares = nn::gradient_squares(parameters, parallel_.executor());
    value = ranks_.sum(value);
    times_.processes += seconds_since(start);
  }
  finished_ = Clock::now();
  return value;
}

}  // namespace attend::app
