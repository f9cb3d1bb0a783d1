// The training command never loses a model (apps/train.cpp): `attend train --out FILE` refuses to replace a file that
// exists (or its training state) unless --force; a resumed run with another --out leaves the best model there even
// when it never beats the best of the run it resumed; and a run resumed from any state file written with --save-every
// ends with the same bits as a run that was never stopped.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "apps/training_state.hpp"
#include "tests/cli/cli_helpers.hpp"

using namespace cli_test;

namespace {

const std::string tiny =
    "train --task dates --train-size 256 --valid-size 16 --test-size 16 --hidden 8 --embed 4 --batch 32 ";

}  // namespace

BOOST_AUTO_TEST_SUITE(outputs)

BOOST_AUTO_TEST_CASE(train_refuses_to_replace_a_model_without_force) {
  Scratch scratch;
  const std::string out = scratch.path("m.safetensors");
  BOOST_TEST_REQUIRE(run_attend(tiny + "--epochs 1 --seed 1 --out '" + out + "'").status == 0);
  const std::string model = read_file(out), state = read_file(scratch.path("m.last.safetensors"));
  // the same --out again: refused, nothing written
  check_usage_error(run_attend(tiny + "--epochs 1 --seed 2 --out '" + out + "'"), {out, "exists", "--force"});
  BOOST_TEST((read_file(out) == model));
  BOOST_TEST((read_file(scratch.path("m.last.safetensors")) == state));
  // the training state alone is protected too
  BOOST_TEST_REQUIRE(std::remove(out.c_str()) == 0);
  check_usage_error(run_attend(tiny + "--epochs 1 --seed 2 --out '" + out + "'"), {"m.last.safetensors", "--force"});
  BOOST_TEST(!exists(out));
  // and the training curve alone too
  BOOST_TEST_REQUIRE(std::remove(scratch.path("m.last.safetensors").c_str()) == 0);
  BOOST_TEST_REQUIRE(exists(scratch.path("m.curve.svg")));
  check_usage_error(run_attend(tiny + "--epochs 1 --seed 2 --out '" + out + "'"), {"m.curve.svg", "--force"});
  BOOST_TEST(!exists(scratch.path("m.last.safetensors")));
  // --force replaces them
  const Run forced = run_attend(tiny + "--epochs 1 --seed 2 --out '" + out + "' --force");
  BOOST_TEST_REQUIRE(forced.status == 0, forced.err);
  BOOST_TEST(exists(scratch.path("m.last.safetensors")));
  BOOST_TEST(exists(out));
  // a resumed run writes over its own files, and refuses another run's
  BOOST_TEST_REQUIRE(
      run_attend(tiny + "--epochs 1 --seed 3 --out '" + scratch.path("other.safetensors") + "'").status == 0);
  const std::string other = read_file(scratch.path("other.safetensors"));
  check_usage_error(run_attend("train --resume '" + scratch.path("m.last.safetensors") + "' --epochs 2 --out '" +
                               scratch.path("other.safetensors") + "'"),
                    {"other.safetensors", "--force"});
  BOOST_TEST((read_file(scratch.path("other.safetensors")) == other));
  const Run own = run_attend("train --resume '" + scratch.path("m.last.safetensors") + "' --epochs 2");
  BOOST_TEST(own.status == 0, own.err);
}

// OUT.curve.svg: the training loss (the mean of each tenth of an epoch; here an epoch has 8 steps, so every step) and
// the validation score after each epoch, against the epoch; rewritten after each epoch.
BOOST_AUTO_TEST_CASE(train_draws_its_curve_beside_the_model) {
  Scratch scratch;
  const std::string out = scratch.path("m.safetensors");
  const auto points = [](const std::string& svg, const std::string& series) {
    std::vector<std::string> xs;
    const std::string mark = "<title>" + series + ": x = ";
    for (std::size_t at = svg.find(mark); at != std::string::npos; at = svg.find(mark, at + 1)) {
      xs.push_back(svg.substr(at + mark.size(), svg.find(',', at) - at - mark.size()));
    }
    return xs;
  };
  BOOST_TEST_REQUIRE(run_attend(tiny + "--epochs 1 --seed 1 --out '" + out + "'").status == 0);
  const std::string one = read_file(scratch.path("m.curve.svg"));
  BOOST_TEST(points(one, "training loss").size() == 8u);
  BOOST_TEST(points(one, "validation exact_match") == std::vector<std::string>{"1"});
  const Run more = run_attend("train --resume '" + scratch.path("m.last.safetensors") + "' --epochs 3");
  BOOST_TEST_REQUIRE(more.status == 0, more.err);
  const std::string three = read_file(scratch.path("m.curve.svg"));
  const std::vector<std::string> loss = points(three, "training loss");
  BOOST_TEST_REQUIRE(loss.size() == 24u);
  BOOST_TEST(loss.front() == "0.125");
  BOOST_TEST(loss.back() == "3");
  BOOST_TEST((points(three, "validation exact_match") == std::vector<std::string>{"1", "2", "3"}));
  BOOST_TEST(three.find("m.safetensors: training loss") != std::string::npos);
}

// The validation panel's axis spans at least a tenth of the score's scale (0 to 1, or 0 to 100 for BLEU) and stays
// within it: scores that move in the fourth digit are not drawn as a cliff.
BOOST_AUTO_TEST_CASE(the_curve_draws_a_score_on_at_least_a_tenth_of_its_scale) {
  // the numbers of the second chart's y tick labels (the first chart is the loss)
  const auto score_ticks = [](const std::string& svg) {
    std::size_t at = svg.find("<g class=\"y-ticks\"", svg.find("<g class=\"y-ticks\"") + 1);
    BOOST_TEST_REQUIRE(at != std::string::npos);
    std::vector<double> ticks;
    const std::size_t end = svg.find("</g>", at);
    for (at = svg.find("<text", at); at < end; at = svg.find("<text", at + 1)) {
      const std::size_t begin = svg.find('>', at) + 1;
      ticks.push_back(std::stod(svg.substr(begin, svg.find('<', begin) - begin)));
    }
    BOOST_TEST_REQUIRE(ticks.size() >= 2u);
    return ticks;
  };
  attend::app::TrainingCurve curve;
  curve.loss = {{4, 0.9}, {8, 0.5}, {12, 0.4}, {16, 0.35}};
  curve.validation = {{8, 0.985}, {16, 0.986}};
  curve.metric = "exact_match";
  const std::vector<double> fraction = score_ticks(attend::app::curve_svg(curve, 8, "m"));
  BOOST_TEST(fraction.back() - fraction.front() >= 0.1 - 1e-9);
  BOOST_TEST(fraction.front() >= 0);
  BOOST_TEST(fraction.back() == 1.0, boost::test_tools::tolerance(1e-9));
  curve.validation = {{8, 23.4}, {16, 23.5}};
  curve.metric = "bleu";
  const std::vector<double> percent = score_ticks(attend::app::curve_svg(curve, 8, "m"));
  BOOST_TEST(percent.back() - percent.front() >= 10 - 1e-9);
  BOOST_TEST(percent.front() <= 23.4);
  BOOST_TEST(percent.back() >= 23.5);
}

BOOST_AUTO_TEST_CASE(a_resumed_run_leaves_the_best_model_at_its_out) {
  Scratch scratch;
  const std::string a = scratch.path("a.safetensors"), b = scratch.path("b.safetensors");
  BOOST_TEST_REQUIRE(run_attend(tiny + "--epochs 1 --seed 4 --out '" + a + "'").status == 0);
  const Run resumed =
      run_attend("train --resume '" + scratch.path("a.last.safetensors") + "' --epochs 3 --out '" + b + "'");
  BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
  BOOST_TEST_REQUIRE(exists(b));
  // b is a's best unless the resumed run beat it (and then said so)
  if (resumed.err.find("saved " + b) == std::string::npos) BOOST_TEST((tensor_bytes(b) == tensor_bytes(a)));
  const Run eval = run_attend("eval --model '" + b + "'");
  BOOST_TEST(eval.status == 0, eval.err);
  // the best of the earlier run gone: b still ends with a model, and the log says which
  const std::string c = scratch.path("c.safetensors");
  BOOST_TEST_REQUIRE(std::remove(a.c_str()) == 0);
  const Run lost =
      run_attend("train --resume '" + scratch.path("a.last.safetensors") + "' --epochs 2 --out '" + c + "'");
  BOOST_TEST_REQUIRE(lost.status == 0, lost.err);
  BOOST_TEST(exists(c));
  BOOST_TEST(run_attend("eval --model '" + c + "'").status == 0);
}

BOOST_AUTO_TEST_CASE(a_run_resumed_from_a_save_every_state_ends_with_the_same_bits) {
  Scratch scratch;
  const std::string settings = tiny + "--epochs 2 --seed 5 --save-every 3 --log-every 1 ";
  BOOST_TEST_REQUIRE(run_attend(settings + "--out '" + scratch.path("whole.safetensors") + "'").status == 0);
  // a second run, whose training state is copied while it runs, just after a --save-every save
  const std::string last = scratch.path("b.last.safetensors"), copy = scratch.path("copy.safetensors");
  const std::string err = scratch.path("b.err");
  const pid_t pid = fork();
  BOOST_TEST_REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string command = std::string("exec env OPENBLAS_NUM_THREADS=1 '") + ATTEND_EXE + "' " + settings +
                                "--out '" + scratch.path("b.safetensors") + "' > /dev/null 2> '" + err + "'";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool copied = false;
  for (int polls = 0; polls < 600000 && !copied; ++polls) {
    // step 4's line comes after step 3's save (and before the epoch's end, at step 8)
    if (read_file(err).find("step 4/") != std::string::npos && exists(last)) {
      const std::string bytes = read_file(last);
      { std::ofstream(copy, std::ios::binary) << bytes; }
      copied = true;
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  int raw = 0;
  waitpid(pid, &raw, 0);
  BOOST_TEST_REQUIRE(copied);
  const Run resumed = run_attend("train --resume '" + copy + "' --out '" + scratch.path("c.safetensors") + "'");
  BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
  BOOST_TEST(
      (tensor_bytes(scratch.path("c.last.safetensors")) == tensor_bytes(scratch.path("whole.last.safetensors"))));
}

BOOST_AUTO_TEST_SUITE_END()
