// `attend train --threads N` (apps/train.cpp, nn::BatchParallel): every batch cut into N shards that run at once.
// The shards' losses weighted by their tokens are the whole batch's loss (the captioner's penalty, a mean over images,
// included); the same N gives the same bytes run after run; an interrupted run resumes bit-exactly with the saved N,
// dropout included; a resumed run that changes N says what that means. `attend eval --threads N` decodes N batches at
// a time to the same bytes as one thread. `attend train --timings` gives each phase of the steps.
#include <signal.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>

#include "precision/precision.hpp"
#include "tests/cli/cli_helpers.hpp"
#include "tests/needs_data.hpp"

using namespace cli_test;

namespace {

// The "loss 1.2345" of the progress line of step `step` (--log-every 1).
std::string loss_of_step(const std::string& log, std::size_t step) {
  const std::string mark = "step " + std::to_string(step) + "/";
  for (const std::string& line : lines_of(log)) {
    const std::size_t at = line.find(mark);
    if (at == std::string::npos) continue;
    const std::size_t loss = line.find("loss ", at);
    if (loss != std::string::npos) return line.substr(loss + 5, line.find(' ', loss + 5) - loss - 5);
  }
  return "";
}

std::string digits_training() {
  return "train --task digits --data '" + attend::test::data_file("digits/digits.csv.gz") +
         "' --train-size 64 --valid-size 8 --test-size 8 --hidden 16 --batch 9 --max-steps 1 "
         "--encoder conv --channels 4 --annotation-size 16 --doubly-stochastic 0.5 --log-every 1 --seed 8 ";
}

// The first step's loss is computed before any update: 1, 2 and 3 shards of the same batch agree to the printed
// digits (they differ only in the order of float sums); a penalty weighted by the wrong share would not.
void check_shards_agree(const std::string& training) {
  Scratch scratch;
  std::vector<std::string> losses;
  for (const int threads : {1, 2, 3}) {
    const std::string out = scratch.path("m" + std::to_string(threads) + ".safetensors");
    const Run run = run_attend(training + "--threads " + std::to_string(threads) + " --force --out '" + out + "'");
    BOOST_TEST_REQUIRE(run.status == 0, run.err);
    BOOST_TEST(run.err.find(std::to_string(threads) + (threads == 1 ? " thread\n" : " threads\n")) != std::string::npos,
               run.err);
    losses.push_back(loss_of_step(run.err, 1));
  }
  BOOST_TEST_REQUIRE(!losses[0].empty());
  BOOST_TEST(losses[1] == losses[0], training);
  BOOST_TEST(losses[2] == losses[0], training);
}

// `attend eval --threads N` decodes its batches of 64 sources N at a time, one a thread (apps/model.hpp,
// decode_batches): the outputs and the scores are the same bytes for every N — greedy and beam search, float32, bf16
// and int8 (where the machine has them), each kind of model — as each batch decodes the same whatever thread runs it.
void check_eval_threads_agree(const std::string& training, const std::vector<std::string>& precisions) {
  Scratch scratch;
  const std::string model = scratch.path("m.safetensors");
  const Run trained = run_attend(training + "--out '" + model + "'");
  BOOST_TEST_REQUIRE(trained.status == 0, trained.err);
  for (const std::string& precision : precisions) {
    for (const std::string beam : {"1", "3"}) {
      std::string first_output, first_scores;
      for (const std::string threads : {"1", "2", "3"}) {
        const std::string output = scratch.path(precision + beam + threads + ".txt");
        const Run run = run_attend("eval --model '" + model + "' --precision " + precision + " --beam " + beam +
                                   " --threads " + threads + " --output '" + output + "'");
        BOOST_TEST_REQUIRE(run.status == 0, run.err);
        std::string scores;  // stdout but for its time line
        for (const std::string& line : lines_of(run.out)) {
          if (line.rfind("time:", 0) != 0) scores += line + "\n";
        }
        const std::string text = read_file(output);
        BOOST_TEST_REQUIRE(lines_of(text).size() >= 513u);  // nine batches of 64 at least
        if (threads == "1") {
          first_output = text, first_scores = scores;
          continue;
        }
        BOOST_TEST((text == first_output), precision << ", beam " << beam << ", --threads " << threads);
        BOOST_TEST(scores == first_scores, precision << ", beam " << beam << ", --threads " << threads);
      }
    }
  }
}

// Every precision this process can run (precision/precision.hpp's list).
std::vector<std::string> decoding_precisions() {
  std::vector<std::string> precisions;
  for (const std::string& name : attend::precision_names()) {
    if (attend::find_precision(name)->unavailable().empty()) precisions.push_back(name);
  }
  return precisions;
}

// The numbers of `attend train --timings`' line, by name ("step", "batch", …, "waiting"); empty when there is none.
std::map<std::string, double> timings_of(const std::string& err, std::size_t steps) {
  std::map<std::string, double> found;
  for (const std::string& line : lines_of(err)) {
    const std::string mark = "attend train: timings, ms a step over " + std::to_string(steps) + " steps: ";
    if (line.rfind(mark, 0) != 0) continue;
    std::istringstream in(line.substr(mark.size()));
    std::string word, name;
    // "step 9.870 = batch 0.010 + … + rest 0.020; shards waiting for the slowest 0.120 (thread-ms)"
    while (in >> word) {
      if (word.back() == ';') word.pop_back();
      char* end = nullptr;
      const double value = std::strtod(word.c_str(), &end);
      if (end != word.c_str() && *end == '\0') {
        found[name] = value;
      } else if (word == "step" || word == "batch" || word == "forward" || word == "backward" || word == "gradient" ||
                 word == "processes" || word == "optimizer" || word == "rest" || word == "waiting") {
        name = word;
      }
    }
  }
  return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(threads)

BOOST_AUTO_TEST_CASE(shards_give_the_whole_batch_loss) {
  check_shards_agree(
      "train --task dates --train-size 256 --valid-size 8 --test-size 8 --hidden 16 --embed 8 --batch 37 "
      "--max-steps 1 --log-every 1 --seed 4 ");
}

BOOST_AUTO_TEST_CASE(shards_give_the_captioners_whole_batch_loss, *attend::test::needs_data({"digits/digits.csv.gz"})) {
  check_shards_agree(digits_training());
}

BOOST_AUTO_TEST_CASE(three_threads_repeat_and_resume_to_the_same_bits) {
  // the Transformer with dropout everywhere: the shards draw their random numbers from the step's seed
  Scratch scratch;
  const std::string small =
      "train --arch transformer --task dates --train-size 512 --valid-size 16 --test-size 16 --d-model 16 --heads 2 "
      "--ff 32 --layers 2 --dropout 0.2 --warmup 10 --batch 32 --seed 3 --epochs 2 --log-every 1 ";
  const std::string three = small + "--threads 3 ";
  BOOST_TEST_REQUIRE(run_attend(three + "--out '" + scratch.path("a.safetensors") + "'").status == 0);
  const std::string final_state = tensor_bytes(scratch.path("a.last.safetensors"));
  BOOST_TEST_REQUIRE(run_attend(three + "--out '" + scratch.path("b.safetensors") + "'").status == 0);
  BOOST_TEST((tensor_bytes(scratch.path("b.last.safetensors")) == final_state));
  // one thread: other float sums, other random numbers
  const Run one = run_attend(small + "--threads 1 --out '" + scratch.path("one.safetensors") + "'");
  BOOST_TEST_REQUIRE(one.status == 0, one.err);
  BOOST_TEST((tensor_bytes(scratch.path("one.last.safetensors")) != final_state));

  // stopped at a step limit, and by SIGINT at a random step: resumed (the thread count from the file), the same bits
  BOOST_TEST_REQUIRE(run_attend(three + "--max-steps 7 --out '" + scratch.path("c.safetensors") + "'").status == 0);
  const std::string c_last = scratch.path("c.last.safetensors");
  const Run more = run_attend("train --resume '" + c_last + "' --max-steps 0");
  BOOST_TEST_REQUIRE(more.status == 0, more.err);
  BOOST_TEST(more.err.find("; 3 threads\n") != std::string::npos, more.err);
  BOOST_TEST(more.err.find("not the bits") == std::string::npos, more.err);
  BOOST_TEST((tensor_bytes(c_last) == final_state));

  std::random_device device;
  const std::size_t step = std::uniform_int_distribution<std::size_t>(2, 28)(device);
  const std::string out = scratch.path("d.safetensors"), last = scratch.path("d.last.safetensors");
  const int status = train_and_signal(three + "--out '" + out + "'", scratch.path("d.err"), step, SIGINT);
  BOOST_TEST_INFO("SIGINT after the line of step " << step << "\n" << read_file(scratch.path("d.err")));
  BOOST_TEST_REQUIRE(status == 128 + SIGINT);
  const Run resumed = run_attend("train --resume '" + last + "'");
  BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
  BOOST_TEST((tensor_bytes(last) == final_state));

  // a resumed run on another thread count goes on, and says that the bits are not an uninterrupted run's
  BOOST_TEST_REQUIRE(run_attend(three + "--max-steps 7 --out '" + scratch.path("e.safetensors") + "'").status == 0);
  const Run changed =
      run_attend("train --resume '" + scratch.path("e.last.safetensors") + "' --max-steps 0 --threads 2");
  BOOST_TEST_REQUIRE(changed.status == 0, changed.err);
  BOOST_TEST(changed.err.find("--threads 2 where the saved run had 3") != std::string::npos, changed.err);
  BOOST_TEST(changed.err.find("not the bits an uninterrupted run would have given") != std::string::npos, changed.err);
  BOOST_TEST((tensor_bytes(scratch.path("e.last.safetensors")) != final_state));
  check_usage_error(run_attend("train --threads 0 --task dates --out '" + scratch.path("f.safetensors") + "'"),
                    {"--threads"});
}

// `attend train --timings`: one line at the end with the mean ms a step of each phase, over this run's steps (a
// resumed run counts its own). Every phase took time; the parts do not add up to more than the step (none is counted
// twice); shards on one thread never wait.
BOOST_AUTO_TEST_CASE(timings_give_each_phase_of_the_steps) {
  Scratch scratch;
  const std::string out = scratch.path("t.safetensors");
  const std::string training =
      "train --task dates --train-size 512 --valid-size 8 --test-size 8 --hidden 64 --embed 16 --batch 32 --timings ";
  for (const std::size_t threads : {1, 2}) {
    const Run run =
        run_attend(training + "--max-steps 6 --force --threads " + std::to_string(threads) + " --out '" + out + "'");
    BOOST_TEST_REQUIRE(run.status == 0, run.err);
    const std::map<std::string, double> t = timings_of(run.err, 6);
    BOOST_TEST_REQUIRE(t.size() == 8u, run.err);  // step, batch, forward, backward, gradient, optimizer, rest, waiting
    for (const char* phase : {"step", "forward", "backward", "gradient", "optimizer"}) {
      BOOST_TEST(t.at(phase) > 0.0, phase << " in " << run.err);
    }
    BOOST_TEST(t.at("batch") >= 0.0);
    const double parts = t.at("batch") + t.at("forward") + t.at("backward") + t.at("gradient") + t.at("optimizer");
    BOOST_TEST(std::abs(t.at("step") - parts - t.at("rest")) <= 0.004, run.err);  // the printed rounding
    BOOST_TEST(t.at("rest") >= -0.004, run.err);
    BOOST_TEST((threads == 1 ? t.at("waiting") == 0.0 : t.at("waiting") >= 0.0), run.err);
  }
  const Run resumed =
      run_attend("train --resume '" + scratch.path("t.last.safetensors") + "' --max-steps 10 --timings");
  BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
  BOOST_TEST(timings_of(resumed.err, 4).size() == 8u, resumed.err);
  const Run without = run_attend("train --resume '" + scratch.path("t.last.safetensors") + "' --max-steps 12");
  BOOST_TEST_REQUIRE(without.status == 0, without.err);
  BOOST_TEST(without.err.find("timings") == std::string::npos, without.err);
}

BOOST_AUTO_TEST_CASE(eval_decodes_to_the_same_bytes_on_every_thread_count) {
  const std::string dates =
      "train --task dates --train-size 1024 --valid-size 16 --test-size 600 --epochs 1 --batch 32 "
      "--seed 5 --threads 2 ";
  check_eval_threads_agree(dates + "--hidden 32 --embed 8 ", decoding_precisions());
  check_eval_threads_agree(dates + "--arch transformer --d-model 16 --heads 2 --ff 32 --layers 1 ",
                           decoding_precisions());
}

BOOST_AUTO_TEST_CASE(eval_decodes_captions_to_the_same_bytes_on_every_thread_count,
                     *attend::test::needs_data({"digits/digits.csv.gz"})) {
  check_eval_threads_agree("train --task digits --data '" + attend::test::data_file("digits/digits.csv.gz") +
                               "' --train-size 64 --valid-size 8 --test-size 600 --hidden 16 --batch 16 "
                               "--max-steps 4 --encoder conv --channels 4 --annotation-size 16 --seed 8 ",
                           {"float32"});
}

BOOST_AUTO_TEST_SUITE_END()
