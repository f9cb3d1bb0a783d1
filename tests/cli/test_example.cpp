// The worked example of docs/reference/adding-a-task.md, built: the program with the task of tests/example/reverse.cpp
// lists it, trains a model of it, evaluates it and runs it, through the same commands as every other task. And the
// programs of examples/ (README.md, "Using the libraries from another project") learn what they say they learn,
// reproducibly.
#include "tests/cli/cli_helpers.hpp"

using namespace cli_test;

namespace {

Run run_example(const std::string& args) { return run_attend(args, "", ATTEND_EXAMPLE_EXE); }

}  // namespace

BOOST_AUTO_TEST_SUITE(example)

BOOST_AUTO_TEST_CASE(a_task_added_by_one_file_and_one_line_trains_evaluates_and_predicts) {
  Scratch scratch;
  const Run help = run_example("train --help");
  BOOST_TEST(help.status == 0);
  BOOST_TEST(help.out.find("reverse (generated words, reversed)") != std::string::npos, help.out);
  const std::string out = scratch.path("reverse.safetensors");
  const Run train = run_example(
      "train --task reverse --train-size 2048 --valid-size 64 --test-size 64 --hidden 32 "
      "--embed 8 --epochs 2 --seed 3 --out '" +
      out + "'");
  BOOST_TEST_REQUIRE(train.status == 0, train.err);
  BOOST_TEST(train.err.find("task reverse, 2048 training pairs") != std::string::npos, train.err);
  const Run eval = run_example("eval --model '" + out + "'");
  BOOST_TEST_REQUIRE(eval.status == 0, eval.err);
  BOOST_TEST(eval.out.find("exact_match: ") != std::string::npos, eval.out);
  const Run predict = run_example("predict --model '" + out + "' abc cabbage");
  BOOST_TEST_REQUIRE(predict.status == 0, predict.err);
  BOOST_TEST(lines_of(predict.out).size() == 2u, predict.out);
  // the task's own checks work through the interface: a letter it never saw is refused, naming it
  check_usage_error(run_example("predict --model '" + out + "' xyz"), {"\"x\"", "never seen in training"});
  // and the task is the program's own: the usual program does not know it
  check_usage_error(run_attend("train --task reverse --out '" + scratch.path("m.safetensors") + "'"),
                    {"--task", "reverse"});
}

BOOST_AUTO_TEST_CASE(the_readme_pointer_network_learns_to_point_and_prints_the_same_each_run) {
  const Run first = run_attend("", "", ATTEND_POINTER_EXE);
  BOOST_TEST_REQUIRE(first.status == 0, first.err);
  const std::vector<std::string> lines = lines_of(first.out);
  BOOST_TEST_REQUIRE(lines.size() == 4u, first.out);
  double loss_first = 0, loss_last = 0;
  int step = 0, right = 0, of = 0;
  BOOST_TEST_REQUIRE(std::sscanf(lines.front().c_str(), "step %d: loss %lf", &step, &loss_first) == 2, lines.front());
  BOOST_TEST_REQUIRE(std::sscanf(lines.back().c_str(), "step %d: loss %lf, pointed right %d of %d", &step, &loss_last,
                                 &right, &of) == 4,
                     lines.back());
  BOOST_TEST(step == 300);
  BOOST_TEST(loss_last < loss_first / 10);  // from ~log 6 = 1.8
  BOOST_TEST(right >= of * 9 / 10, lines.back());
  BOOST_TEST(run_attend("", "", ATTEND_POINTER_EXE).out == first.out);
}

// fit.cpp, classify.cpp and language_model.cpp check their own result (status 1 when they did not learn); here: they
// run clean, print their progress, and print the same each run.
BOOST_AUTO_TEST_CASE(the_other_examples_learn_and_print_the_same_each_run) {
  for (const auto& [exe, last] : {std::pair<std::string, std::string>{ATTEND_FIT_EXE, "step 2000: mean squared error"},
                                  {ATTEND_CLASSIFY_EXE, "step 400: loss"},
                                  {ATTEND_LANGUAGE_MODEL_EXE, "the text continued exactly"}}) {
    const Run first = run_attend("", "", exe);
    BOOST_TEST(first.status == 0, exe + ": " + first.out + first.err);
    const std::vector<std::string> lines = lines_of(first.out);
    BOOST_TEST_REQUIRE(lines.size() == 5u, first.out);
    BOOST_TEST(lines.back().rfind(last, 0) == 0u, lines.back());
    BOOST_TEST(run_attend("", "", exe).out == first.out);
  }
}

BOOST_AUTO_TEST_SUITE_END()
