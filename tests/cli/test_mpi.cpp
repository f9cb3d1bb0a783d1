// `mpirun -np 2 attend train` (apps/ranks.hpp), built when the build has Open MPI: two processes of one thread each
// give the bytes of one process with two threads (dropout included); a run stopped by SIGTERM to its processes (what
// mpirun sends them on Ctrl-C, and a cluster's scheduler at a job's end) saves its state and resumes on two processes
// bit-exactly; a rank's error ends every rank with the error's line; --timings prints rank 0's line, with the
// processes' part.
#include <signal.h>

#include <cstdlib>
#include <random>

#include "tests/cli/cli_helpers.hpp"
#include "tests/needs_data.hpp"

using namespace cli_test;

namespace {

// mpirun as root needs the first two; --oversubscribe lets two processes share one core (a CI machine may have one);
// plm=isolated launches on this machine only, with no ssh needed (a minimal install has none).
const std::string mpirun =
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm=isolated mpirun -np 2 --oversubscribe ";

// `mpirun -np 2 attend <args>`.
Run run_mpi(const std::string& args) { return run_attend(args, "", ATTEND_EXE, mpirun); }

const std::string transformer =
    "train --arch transformer --task dates --valid-size 16 --test-size 16 --d-model 16 --heads 2 --ff 32 --layers 2 "
    "--dropout 0.2 --warmup 10 --batch 32 --seed 3 --epochs 2 --log-every 1 ";

}  // namespace

BOOST_AUTO_TEST_SUITE(mpi)

BOOST_AUTO_TEST_CASE(two_ranks_give_the_bytes_of_two_threads) {
  Scratch scratch;
  const Run threads =
      run_attend(transformer + "--train-size 2048 --threads 2 --out '" + scratch.path("t.safetensors") + "'");
  BOOST_TEST_REQUIRE(threads.status == 0, threads.err);
  const Run ranks =
      run_mpi(transformer + "--train-size 2048 --threads 1 --timings --out '" + scratch.path("r.safetensors") + "'");
  BOOST_TEST_REQUIRE(ranks.status == 0, ranks.err);
  BOOST_TEST(ranks.err.find("1 thread on each of 2 processes") != std::string::npos, ranks.err);
  // --timings: one line (rank 0's; another rank's could land anywhere in a line), with the time spent combining the
  // processes' weights and gradients
  std::size_t timings = 0;
  for (const std::string& line : lines_of(ranks.err)) {
    const std::size_t found = line.find("attend train: timings");
    if (found == std::string::npos) continue;
    ++timings;
    const std::size_t at = line.find(" + processes ", found);
    BOOST_TEST_REQUIRE(at != std::string::npos, line);
    BOOST_TEST(std::strtod(line.c_str() + at + 13, nullptr) > 0.0, line);
  }
  BOOST_TEST(timings == 1u, ranks.err);
  // rank 0 alone prints: one summary line, one result line
  BOOST_TEST(lines_of(ranks.out).size() == 1u, ranks.out);
  BOOST_TEST(ranks.out == threads.out);
  BOOST_TEST((tensor_bytes(scratch.path("r.last.safetensors")) == tensor_bytes(scratch.path("t.last.safetensors"))));
  BOOST_TEST((tensor_bytes(scratch.path("r.safetensors")) == tensor_bytes(scratch.path("t.safetensors"))));
}

// The captioner too, whose penalty is a mean over images.
BOOST_AUTO_TEST_CASE(two_ranks_give_the_captioners_bytes_of_two_threads,
                     *attend::test::needs_data({"digits/digits.csv.gz"})) {
  Scratch scratch;
  const std::string digits = "train --task digits --data '" + attend::test::data_file("digits/digits.csv.gz") +
                             "' --train-size 64 --valid-size 8 --test-size 8 --hidden 16 "
                             "--batch 9 --max-steps 3 --encoder conv --channels 4 --annotation-size 16 "
                             "--doubly-stochastic 0.5 --seed 8 ";
  BOOST_TEST_REQUIRE(run_attend(digits + "--threads 2 --out '" + scratch.path("d1.safetensors") + "'").status == 0);
  BOOST_TEST_REQUIRE(run_mpi(digits + "--threads 1 --out '" + scratch.path("d2.safetensors") + "'").status == 0);
  BOOST_TEST((tensor_bytes(scratch.path("d1.last.safetensors")) == tensor_bytes(scratch.path("d2.last.safetensors"))));
}

BOOST_AUTO_TEST_CASE(an_interrupted_two_rank_run_resumes_to_the_same_bits) {
  Scratch scratch;
  const std::string longer = transformer + "--threads 1 --train-size 8192 ";
  const Run whole = run_mpi(longer + "--out '" + scratch.path("a.safetensors") + "'");
  BOOST_TEST_REQUIRE(whole.status == 0, whole.err);
  const std::string final_state = tensor_bytes(scratch.path("a.last.safetensors"));
  // a step limit
  BOOST_TEST_REQUIRE(run_mpi(longer + "--max-steps 9 --out '" + scratch.path("b.safetensors") + "'").status == 0);
  const Run more = run_mpi("train --resume '" + scratch.path("b.last.safetensors") + "' --max-steps 0");
  BOOST_TEST_REQUIRE(more.status == 0, more.err);
  BOOST_TEST(more.err.find("not the bits") == std::string::npos, more.err);
  BOOST_TEST((tensor_bytes(scratch.path("b.last.safetensors")) == final_state));
  // SIGTERM to both ranks at a random step (as a cluster's scheduler stops a job): they finish the step, rank 0 saves
  std::random_device device;
  const std::size_t step = std::uniform_int_distribution<std::size_t>(5, 400)(device);
  const std::string out = scratch.path("c.safetensors"), last = scratch.path("c.last.safetensors");
  const std::string err = scratch.path("c.err");
  train_and_signal(longer + "--out '" + out + "'", err, step, SIGTERM, mpirun);
  const std::string log = read_file(err);
  BOOST_TEST_INFO("SIGTERM after the line of step " << step << "\n" << log);
  BOOST_TEST_REQUIRE(log.find("stopped by SIGTERM") != std::string::npos);
  BOOST_TEST(log.find("mpirun -np 2 attend train --resume") != std::string::npos);
  BOOST_TEST_REQUIRE(exists(last));
  BOOST_TEST(tensor_bytes(last) != final_state);
  const Run resumed = run_mpi("train --resume '" + last + "'");
  BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
  BOOST_TEST((tensor_bytes(last) == final_state));
  // resumed in one process: it goes on, and says the bits are not those of the two-process run
  BOOST_TEST_REQUIRE(run_mpi(longer + "--max-steps 9 --out '" + scratch.path("e.safetensors") + "'").status == 0);
  const Run single = run_attend("train --resume '" + scratch.path("e.last.safetensors") + "' --max-steps 12");
  BOOST_TEST_REQUIRE(single.status == 0, single.err);
  BOOST_TEST(single.err.find("1 process where the saved run had 2") != std::string::npos, single.err);
}

BOOST_AUTO_TEST_CASE(an_error_ends_every_rank) {
  Scratch scratch;
  { std::ofstream(scratch.path("taken.safetensors")) << "a model"; }
  const Run run = run_mpi(transformer + "--train-size 2048 --out '" + scratch.path("taken.safetensors") + "'");
  BOOST_TEST(run.status == 2, run.err);
  BOOST_TEST(run.err.find("attend: error: --out") != std::string::npos, run.err);
  BOOST_TEST(run.err.find("--force") != std::string::npos, run.err);
  BOOST_TEST(read_file(scratch.path("taken.safetensors")) == "a model");
}

BOOST_AUTO_TEST_SUITE_END()
