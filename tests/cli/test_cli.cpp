// The `attend` program end to end: train a tiny model for a few steps, evaluate it, predict from arguments and from
// standard input, draw the heatmap; then every error a user can make, each of which must give one line on standard
// error that names the problem, exit status 2, and no file written (apps/cli.cpp; the table of error cases is in
// docs/reliability.md and test_bad_input.cpp).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/task.hpp"
#include "data/dates.hpp"
#include "nn/checkpoint.hpp"
#include "precision/precision.hpp"
#include "runtime/cpu.hpp"
#include "runtime/kernels.hpp"
#include "tests/cli/cli_helpers.hpp"
#include "tests/needs_data.hpp"
#include "tests/plot/xml_check.hpp"

using namespace cli_test;

namespace {

// A tiny model, trained once for the whole suite.
const std::string& tiny_model() {
  static Scratch scratch;
  static const std::string path = scratch.path("tiny.safetensors");
  static bool trained = false;
  if (!trained) {
    const Run run = run_attend(
        "train --task dates --train-size 256 --valid-size 32 --test-size 40 --epochs 2 --hidden 16 "
        "--embed 8 --batch 64 --seed 3 --out '" +
        path + "'");
    BOOST_REQUIRE_MESSAGE(run.status == 0, "training the tiny model failed: " << run.err);
    trained = true;
  }
  return path;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli)

BOOST_AUTO_TEST_CASE(train_then_eval_then_predict) {
  Scratch scratch;
  const std::string model = scratch.path("m.safetensors");
  const Run train = run_attend(
      "train --task dates --decoder luong-general --cell lstm --bidirectional --train-size 128 "
      "--valid-size 16 --test-size 24 --epochs 1 --hidden 8 --embed 4 --batch 32 --out '" +
      model + "'");
  BOOST_TEST_REQUIRE(train.status == 0, train.err);
  BOOST_TEST(exists(model));
  BOOST_TEST(train.err.find("epoch 1 done") != std::string::npos, train.err);
  BOOST_TEST(train.out.find("best validation exact_match: ") == 0u, train.out);
  // not a terminal: plain lines, no carriage returns
  BOOST_TEST(train.err.find('\r') == std::string::npos);

  const Run eval = run_attend("eval --model '" + model + "'");
  BOOST_TEST_REQUIRE(eval.status == 0, eval.err);
  const auto lines = lines_of(eval.out);
  BOOST_TEST_REQUIRE(lines.size() == 7u, eval.out);
  BOOST_TEST(lines[0] == "split: test");
  BOOST_TEST(lines[1] == "count: 24");
  // the decoding's time and rate, on a timing line (the one line that varies between runs)
  BOOST_TEST(lines[6].rfind("time: ", 0) == 0u, lines[6]);
  BOOST_TEST(lines[6].find(" sentences/s") != std::string::npos, lines[6]);
  BOOST_TEST(lines[2].rfind("exact_match: ", 0) == 0u);
  const double exact = std::stod(lines[2].substr(13));
  BOOST_TEST((exact >= 0.0 && exact <= 1.0));
  for (std::size_t k = 3; k < 6; ++k) {
    const double accuracy = std::stod(lines[k].substr(lines[k].find(": ") + 2));
    BOOST_TEST((accuracy >= 0.0 && accuracy <= 1.0), lines[k]);
  }

  const Run predict = run_attend("predict --model '" + model + "' 'Saturday 09 May 2018' '1 mars 1999'");
  BOOST_TEST_REQUIRE(predict.status == 0, predict.err);
  BOOST_TEST(lines_of(predict.out).size() == 2u, predict.out);
}

// The Transformer through the same commands: its flags, the warm-up schedule in the progress lines, eval, beam
// search, and a heatmap of the layer and head chosen (or the last layer's mean of the heads).
BOOST_AUTO_TEST_CASE(a_transformer_trains_evaluates_and_draws_a_chosen_layer_and_head) {
  Scratch scratch;
  const std::string model = scratch.path("t.safetensors");
  const Run train = run_attend(
      "train --arch transformer --task dates --train-size 128 --valid-size 16 --test-size 16 --epochs 2 "
      "--d-model 16 --heads 2 --ff 32 --layers 2 --norm pre --warmup 4 --batch 32 --log-every 1 --out '" +
      model + "'");
  BOOST_TEST_REQUIRE(train.status == 0, train.err);
  BOOST_TEST(train.err.find("model transformer pre-norm, 2+2 layers, d 16, 2 heads, ff 32") != std::string::npos,
             train.err);
  // the learning rate rises over the 4 warm-up steps to --lr (0.001), then falls as 1/√step
  BOOST_TEST(train.err.find("step 2/8") != std::string::npos, train.err);
  BOOST_TEST(train.err.find("lr 5.0e-04") != std::string::npos, train.err);
  BOOST_TEST(train.err.find("lr 1.0e-03") != std::string::npos, train.err);
  BOOST_TEST(train.err.find("lr 8.9e-04") != std::string::npos, train.err);  // step 5: 0.001 · √(4/5)

  const Run eval = run_attend("eval --model '" + model + "' --beam 3");
  BOOST_TEST_REQUIRE(eval.status == 0, eval.err);
  BOOST_TEST_REQUIRE(lines_of(eval.out).size() == 7u, eval.out);
  BOOST_TEST(lines_of(eval.out)[1] == "count: 16");

  const Run chosen = run_attend("predict --model '" + model + "' --svg '" + scratch.path("h.svg") +
                                "' --layer 1 --head 2 'May 9, 2018'");
  BOOST_TEST_REQUIRE(chosen.status == 0, chosen.err);
  const Run mean = run_attend("predict --model '" + model + "' --svg '" + scratch.path("m.svg") + "' 'May 9, 2018'");
  BOOST_TEST_REQUIRE(mean.status == 0, mean.err);
  BOOST_TEST(chosen.out == mean.out);  // the picture's choice changes no output
  const std::string head = read_file(scratch.path("h.svg")), average = read_file(scratch.path("m.svg"));
  BOOST_TEST(attend::testing::xml_problem(head) == "");
  BOOST_TEST(head.find("(layer 1 of 2, head 2)") != std::string::npos);
  BOOST_TEST(average.find("(layer 2 of 2, mean of the heads)") != std::string::npos);
  BOOST_TEST(count(head, "class=\"cell\"") == count(average, "class=\"cell\""));
  BOOST_TEST(count(head, "class=\"cell\"") % 11 == 0u);  // 11 source characters across
}

BOOST_AUTO_TEST_CASE(predict_reads_lines_from_standard_input_and_beam_search_works) {
  const Run run =
      run_attend("predict --model '" + tiny_model() + "' --beam 3", "9 de mayo de 2018\n2018-05-09\r\nMay 9, 2018\n");
  BOOST_TEST_REQUIRE(run.status == 0, run.err);
  BOOST_TEST(lines_of(run.out).size() == 3u, run.out);
  const Run eval = run_attend("eval --model '" + tiny_model() + "' --split validation --beam 2");
  BOOST_TEST_REQUIRE(eval.status == 0, eval.err);
  BOOST_TEST(lines_of(eval.out)[1] == "count: 32");
}

// One input the model cannot read does not cost the others: its error names its place, the others are decoded, an
// empty line keeps the outputs in step with the inputs, and the status is 2.
BOOST_AUTO_TEST_CASE(a_bad_input_among_good_ones_gets_its_own_error) {
  const std::string model = tiny_model();
  const Run good = run_attend("predict --model '" + model + "' 'May 9, 2018' '1 mars 1999'");
  BOOST_TEST_REQUIRE(good.status == 0, good.err);
  const auto expected = lines_of(good.out);
  const Run mixed = run_attend("predict --model '" + model + "' 'May 9, 2018' 'May 9, 2018 ☃' '1 mars 1999'");
  BOOST_TEST(mixed.status == 2);
  BOOST_TEST(mixed.out == expected[0] + "\n\n" + expected[1] + "\n", mixed.out);
  std::vector<std::string> errors;  // (the tiny model's outputs may also be named as no calendar dates)
  for (const std::string& line : lines_of(mixed.err))
    if (line.rfind("attend: error: ", 0) == 0) errors.push_back(line);
  BOOST_TEST_REQUIRE(errors.size() == 1u, mixed.err);
  BOOST_TEST(errors[0].rfind("attend: error: argument 2: ", 0) == 0u, errors[0]);
  BOOST_TEST(errors[0].find("\"☃\" was never seen in training") != std::string::npos, errors[0]);
  // from standard input: errors name lines; every input bad: nothing on standard output
  const Run lines = run_attend("predict --model '" + model + "'", "☃\nMay 9, 2018\n\n");
  BOOST_TEST(lines.status == 2);
  BOOST_TEST(lines.out == "\n" + expected[0] + "\n\n", lines.out);
  BOOST_TEST(lines.err.find("attend: error: line 1: ") != std::string::npos, lines.err);
  BOOST_TEST(lines.err.find("attend: error: line 3: empty input") != std::string::npos, lines.err);
  const Run none = run_attend("predict --model '" + model + "' '☃' '☃☃'");
  BOOST_TEST(none.status == 2);
  BOOST_TEST(none.out.empty(), none.out);
  BOOST_TEST(lines_of(none.err).size() == 2u, none.err);
}

// --scores: after each output, a TAB and log p(y | x) / |y| (≤ 0); the outputs themselves unchanged. An output that
// is not a calendar date ("2021-02-31") is named on standard error, and only such an output.
BOOST_AUTO_TEST_CASE(predict_prints_scores_and_names_outputs_that_are_not_dates) {
  const std::string model = tiny_model();
  const std::vector<std::string> inputs = {"31 February 2021", "tomorrow",   "May 9, 2018", "99/99/9999",
                                           "30 02 1999",       "0000-00-00", "1 1 1",       "Monday"};
  std::string args;
  for (const std::string& input : inputs) args += " '" + input + "'";
  const Run plain = run_attend("predict --model '" + model + "'" + args);
  const Run scored = run_attend("predict --model '" + model + "' --scores" + args);
  BOOST_TEST_REQUIRE(plain.status == 0, plain.err);
  BOOST_TEST_REQUIRE(scored.status == 0, scored.err);
  const auto outputs = lines_of(plain.out), lines = lines_of(scored.out);
  BOOST_TEST_REQUIRE(outputs.size() == inputs.size(), plain.out);
  BOOST_TEST_REQUIRE(lines.size() == inputs.size(), scored.out);
  std::size_t flagged = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::size_t tab = lines[k].find('\t');
    BOOST_TEST_REQUIRE(tab != std::string::npos, lines[k]);
    BOOST_TEST(lines[k].substr(0, tab) == outputs[k]);
    const double score = std::stod(lines[k].substr(tab + 1));
    BOOST_TEST((std::isfinite(score) && score <= 0.0), lines[k]);
    const bool date = attend::data::dates::from_iso(outputs[k]).has_value();
    const std::string note = "argument " + std::to_string(k + 1) + ": " + outputs[k] + " is not a calendar date";
    BOOST_TEST((plain.err.find(note) != std::string::npos) == !date, outputs[k] << "; " << plain.err);
    flagged += date ? 0 : 1;
  }
  BOOST_TEST(flagged >= 1u, plain.out);  // impossible dates among the inputs: the tiny model writes some
}

// An output that is a date the input cannot mean is named too: "32 May 2019" and "tomorrow" read as no date at all
// (a guess), a valid input as its readings (the parser lists them); an output among its input's readings is not named.
BOOST_AUTO_TEST_CASE(predict_names_outputs_the_input_cannot_mean) {
  const std::string model = tiny_model();
  const std::vector<std::string> inputs = {"32 May 2019", "tomorrow",   "May 9, 2018",
                                           "9 May 2018",  "2018-05-09", "03/04/2018"};
  std::string args;
  for (const std::string& input : inputs) args += " '" + input + "'";
  const Run run = run_attend("predict --model '" + model + "'" + args);
  BOOST_TEST_REQUIRE(run.status == 0, run.err);
  const auto outputs = lines_of(run.out);
  BOOST_TEST_REQUIRE(outputs.size() == inputs.size(), run.out);
  std::size_t named = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::string place = "argument " + std::to_string(k + 1) + ": " + outputs[k] + " is ";
    const auto output = attend::data::dates::from_iso(outputs[k]);
    const auto readings = attend::data::dates::parse_readings(inputs[k]);
    const bool meant = output && std::find(readings.begin(), readings.end(), *output) != readings.end();
    const std::string expected = !output            ? "not a calendar date"
                                 : readings.empty() ? "a guess: the input \"" + inputs[k] + "\" is no date"
                                 : meant            ? ""
                                                    : "not what the input says: \"" + inputs[k] + "\" reads as ";
    BOOST_TEST_INFO(inputs[k] << " -> " << outputs[k] << "\n" << run.err);
    if (expected.empty()) {
      BOOST_TEST(run.err.find(place) == std::string::npos);
    } else {
      BOOST_TEST(run.err.find(place + expected) != std::string::npos);
      ++named;
    }
  }
  BOOST_TEST(named >= 2u);  // the first two inputs mean no date: whatever the model writes is named
}

// The note itself, on outputs chosen by hand (a tiny model rarely writes a valid date for a wrong input).
BOOST_AUTO_TEST_CASE(the_dates_task_names_an_output_its_input_cannot_mean) {
  const std::unique_ptr<attend::app::Task> task = attend::app::make_task("dates");
  auto characters = [](const std::string& text) {
    std::vector<std::string> tokens;
    for (const char c : text) tokens.emplace_back(1, c);
    return tokens;
  };
  BOOST_TEST(task->output_note("9 May 2018", characters("2018-05-09")) == "");
  BOOST_TEST(task->output_note("03/04/2018", characters("2018-04-03")) == "");  // one of its two readings
  BOOST_TEST(task->output_note("32 May 2019", characters("2019-05-30")) ==
             "a guess: the input \"32 May 2019\" is no date from 1900 to 2099");
  BOOST_TEST(task->output_note("tomorrow", characters("1980-08-01")).rfind("a guess: ", 0) == 0u);
  BOOST_TEST(task->output_note("9 May 2018", characters("2018-05-08")) ==
             "not what the input says: \"9 May 2018\" reads as 2018-05-09");
  BOOST_TEST(task->output_note("03/04/2018", characters("2018-05-03")) ==
             "not what the input says: \"03/04/2018\" reads as 2018-03-04 or 2018-04-03");
  BOOST_TEST(task->output_note("31 February 2019", characters("2019-02-31")).rfind("not a calendar date", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(svg_heatmaps_are_written_one_per_input) {
  Scratch scratch;
  const Run one =
      run_attend("predict --model '" + tiny_model() + "' --svg '" + scratch.path("a.svg") + "' 'May 9, 2018'");
  BOOST_TEST_REQUIRE(one.status == 0, one.err);
  const std::string svg = read_file(scratch.path("a.svg"));
  BOOST_TEST(svg.rfind("<svg", 0) == 0u);
  BOOST_TEST(attend::testing::xml_problem(svg) == "");
  // rows: the output characters (and <eos> when it ended); columns: the 11 source characters
  const std::size_t output_rows = lines_of(one.out)[0].size() + 1;
  BOOST_TEST(count(svg, "class=\"cell\"") % 11 == 0u);
  BOOST_TEST(count(svg, "class=\"cell\"") / 11 <= output_rows);

  const Run two = run_attend("predict --model '" + tiny_model() + "' --svg '" + scratch.path("b.svg") +
                             "' 'May 9, 2018' '9.5.2018'");
  BOOST_TEST_REQUIRE(two.status == 0, two.err);
  BOOST_TEST(exists(scratch.path("b-1.svg")));
  BOOST_TEST(exists(scratch.path("b-2.svg")));
  BOOST_TEST(!exists(scratch.path("b.svg")));
}

// eval --output, predict --svg and data --write refuse to replace what is there (the user's file is left as it was)
// unless --force; with it, they write as on a first run
BOOST_AUTO_TEST_CASE(outputs_replace_an_existing_file_only_with_force) {
  Scratch scratch;
  const std::string mine = "a file of the user's\n";
  BOOST_TEST_REQUIRE(mkdir(scratch.path("split").c_str(), 0777) == 0);
  for (const char* name : {"out.txt", "h.svg", "split/notes.txt"}) std::ofstream(scratch.path(name)) << mine;
  const std::string model = "--model '" + tiny_model() + "' ";
  const std::string eval = "eval " + model + "--split validation --output '" + scratch.path("out.txt") + "'";
  const std::string predict = "predict " + model + "--svg '" + scratch.path("h.svg") + "' 'May 9, 2018'";
  const std::string data = "data --train-size 64 --valid-size 8 --test-size 8 --write '" + scratch.path("split") + "'";
  for (const std::string& command : {eval, predict, data}) {
    const Run refused = run_attend(command);
    BOOST_TEST(refused.status == 2, command << ": " << refused.err);
    BOOST_TEST(refused.err.find("--force") != std::string::npos, refused.err);
    BOOST_TEST(refused.out.empty(), refused.out);  // refused before any work
  }
  BOOST_TEST(read_file(scratch.path("out.txt")) == mine);
  BOOST_TEST(read_file(scratch.path("h.svg")) == mine);
  BOOST_TEST(!exists(scratch.path("split/test.tsv")));
  std::vector<Run> forced;
  for (const std::string& command : {eval, predict, data}) {
    forced.push_back(run_attend(command + " --force"));
    BOOST_TEST_REQUIRE(forced.back().status == 0, command << " --force: " << forced.back().err);
  }
  const std::size_t count = lines_of(read_file(scratch.path("out.txt"))).size();  // one output a validation date
  BOOST_TEST(forced[0].out.find("count: " + std::to_string(count) + "\n") != std::string::npos, forced[0].out);
  BOOST_TEST(read_file(scratch.path("h.svg")).rfind("<svg", 0) == 0u);
  BOOST_TEST(lines_of(read_file(scratch.path("split/test.tsv"))).size() == 8u);
  BOOST_TEST(read_file(scratch.path("split/notes.txt")) == mine);  // a file of another name is left alone
}

BOOST_AUTO_TEST_CASE(the_same_seed_trains_the_same_weights) {
  Scratch scratch;
  auto train = [&](const std::string& name, int seed) {
    const Run run = run_attend(
        "train --train-size 128 --valid-size 16 --test-size 16 --epochs 2 --hidden 8 --embed 4 "
        "--batch 16 --seed " +
        std::to_string(seed) + " --out '" + scratch.path(name) + "'");
    BOOST_TEST_REQUIRE(run.status == 0, run.err);
    return tensor_bytes(scratch.path(name));
  };
  const std::string first = train("a.safetensors", 4);
  BOOST_TEST(first.size() > 1000u);
  BOOST_TEST((train("b.safetensors", 4) == first));
  BOOST_TEST((train("c.safetensors", 5) != first));
}

// Every error case (a bad value for each flag, missing and broken files, bad inputs) is a row of the table in
// docs/reliability.md, run by test_bad_input.cpp.

BOOST_AUTO_TEST_CASE(the_vanilla_decoder_has_no_heatmap) {
  Scratch scratch;
  const std::string model = scratch.path("v.safetensors");
  const Run train = run_attend(
      "train --decoder vanilla --train-size 64 --valid-size 8 --test-size 8 --epochs 1 --hidden 8 "
      "--embed 4 --out '" +
      model + "'");
  BOOST_TEST_REQUIRE(train.status == 0, train.err);
  BOOST_TEST(train.err.find("; 1 epoch of ") != std::string::npos, train.err);  // not "1 epochs"
  const Run run = run_attend("predict --model '" + model + "' --svg '" + scratch.path("v.svg") + "' 'May 9, 2018'");
  check_usage_error(run, {"vanilla", "attention"});
  BOOST_TEST(!exists(scratch.path("v.svg")));
  BOOST_TEST(run_attend("predict --model '" + model + "' 'May 9, 2018'").status == 0);
}

BOOST_AUTO_TEST_CASE(help_and_version_succeed) {
  const Run help = run_attend("--help");
  BOOST_TEST(help.status == 0);
  for (const char* command : {"train", "eval", "predict"}) BOOST_TEST(help.out.find(command) != std::string::npos);
  const Run train_help = run_attend("train --help");
  BOOST_TEST(train_help.status == 0);
  for (const char* flag : {"--decoder", "--bidirectional", "--hidden", "--embed", "--layers", "--batch", "--epochs",
                           "--lr", "--seed", "--threads", "--out"}) {
    BOOST_TEST(train_help.out.find(flag) != std::string::npos, flag);
  }
  BOOST_TEST(run_attend("--version").out == "attend 0.1.0\n");
  // `translate` is `predict` under another name: its help says the name typed
  const Run translate_help = run_attend("translate --help");
  BOOST_TEST(translate_help.out.find("Usage: attend translate") != std::string::npos, translate_help.out);
  // `data` only splits: its seed draws no weights
  const Run data_help = run_attend("data --help");
  BOOST_TEST(data_help.out.find("seed of the data split\n") != std::string::npos, data_help.out);
  BOOST_TEST(data_help.out.find("initial weights") == std::string::npos, data_help.out);
}

// `attend info` (apps/info.cpp): what a bug report needs, in lines and as JSON — the CPU as CPUID names it, OpenBLAS's
// kernels, every precision with the kernel its products run or why it is unavailable. An OPENBLAS_CORETYPE the user
// set is kept (no notice, no run again), and info says so where the CPU fits wider vectors.
BOOST_AUTO_TEST_CASE(info_names_the_machine_and_its_kernels) {
  const Run text = run_attend("info");
  BOOST_TEST(text.status == 0);
  BOOST_TEST(text.err == "");
  for (const char* line : {"cpu: ", "\ncpu features: avx", "\nopenblas: OpenBLAS ", "\nfused kernels: the ",
                           "\nprecision float32: OpenBLAS's sgemm, its ", "\ndata folder: "}) {
    BOOST_TEST(text.out.find(line) != std::string::npos, line);
  }
  const Run json = run_attend("info --json");
  BOOST_TEST_REQUIRE(json.status == 0);
  const nlohmann::json info = nlohmann::json::parse(json.out);
  const attend::CpuFeatures& cpu = attend::cpu_features();
  BOOST_TEST(info["cpu"]["vendor"].get<std::string>() == cpu.vendor);
  BOOST_TEST(info["cpu"]["family"].get<unsigned>() == cpu.family);
  BOOST_TEST(info["cpu"]["model"].get<unsigned>() == cpu.model);
  BOOST_TEST(info["cpu"]["features"]["avx2"].get<bool>() == cpu.avx2);
  BOOST_TEST(info["openblas"]["core"].get<std::string>() == attend::blas_kernels().core);
  std::vector<std::string> names;
  for (const nlohmann::json& p : info["precisions"]) {
    const std::string name = p["name"].get<std::string>();
    names.push_back(name);
    const bool available = attend::find_precision(name)->unavailable().empty();
    BOOST_TEST(p["available"].get<bool>() == available, name);
    BOOST_TEST(p["kernel"].get<std::string>().empty() == !available, name);
  }
  BOOST_TEST((names == attend::precision_names()));
  const Run kept = run_attend("info --json", "", ATTEND_EXE, "OPENBLAS_CORETYPE=Nehalem ");
  BOOST_TEST_REQUIRE(kept.status == 0);
  BOOST_TEST(kept.err == "");
  const nlohmann::json blas = nlohmann::json::parse(kept.out)["openblas"];
  BOOST_TEST(blas["core"].get<std::string>() == "Nehalem");
  BOOST_TEST(blas["coretype"].get<std::string>() == "Nehalem");
  BOOST_TEST(blas["fitting"].get<std::string>() == "");
  if (cpu.avx) BOOST_TEST(blas["why_unchanged"].get<std::string>() == "OPENBLAS_CORETYPE=Nehalem is set, and kept");
}

// ATTEND_KERNELS=x86-64 runs the fused kernels' baseline clone on any CPU (what a machine without AVX2 computes); a
// name that is no clone is refused, naming the ones there are.
BOOST_AUTO_TEST_CASE(the_kernels_baseline_clone_can_be_forced) {
  const Run baseline = run_attend("info --json", "", ATTEND_EXE, "ATTEND_KERNELS=x86-64 ");
  BOOST_TEST_REQUIRE(baseline.status == 0, baseline.err);
  // a build without clones (clang, or not x86-64) has only its one build
  const std::string expected = std::string(attend::kernels::clone()) == "one build" ? "one build" : "x86-64";
  BOOST_TEST(nlohmann::json::parse(baseline.out)["fused_kernels"].get<std::string>() == expected);
  const Run unknown = run_attend("info", "", ATTEND_EXE, "ATTEND_KERNELS=avx9 ");
  BOOST_TEST(unknown.status == 1);
  BOOST_TEST(unknown.err.find("ATTEND_KERNELS=avx9: no such clone of the fused kernels (x86-64, x86-64-v3)") !=
                 std::string::npos,
             unknown.err);
}

BOOST_AUTO_TEST_CASE(an_unknown_flag_is_named_with_the_nearest_known_one) {
  check_usage_error(run_attend("train --epoch 3"), {"unknown flag --epoch for attend train (did you mean --epochs?)"});
  check_usage_error(run_attend("train --batch=3 --hiden 8"), {"unknown flag --hiden", "did you mean --hidden?"});
  check_usage_error(run_attend("eval --beams 2"), {"unknown flag --beams for attend eval (did you mean --beam?)"});
  const Run far = run_attend("train --xyzzy");
  check_usage_error(far, {"unknown flag --xyzzy for attend train"});
  BOOST_TEST(far.err.find("did you mean") == std::string::npos, far.err);
  // not a flag: CLI11's own message
  check_usage_error(run_attend("train --out x extra"), {"not expected: extra"});
}

// ---- translation (task pairs) on real Tatoeba sentences ----

namespace {

// The first `lines` lines of the data file tatoeba/spa-eng.tsv, as scratch/spa-eng.tsv (the name gives the languages).
std::string spanish_english(const Scratch& scratch, std::size_t lines) {
  const std::string source = attend::test::data_file("tatoeba/spa-eng.tsv");
  std::ifstream in(source);
  BOOST_REQUIRE_MESSAGE(in.good(), source << ": cannot open");
  std::ofstream out(scratch.path("spa-eng.tsv"));
  std::string line;
  for (std::size_t k = 0; k < lines && std::getline(in, line); ++k) out << line << "\n";
  return scratch.path("spa-eng.tsv");
}

double value_of(const std::string& line, const std::string& name) {
  BOOST_TEST_REQUIRE(line.rfind(name + ": ", 0) == 0u, line);
  return std::stod(line.substr(name.size() + 2));
}

}  // namespace

BOOST_AUTO_TEST_CASE(translation_train_eval_translate_on_real_pairs,
                     *attend::test::needs_data({"tatoeba/spa-eng.tsv"})) {
  Scratch scratch;
  const std::string data = spanish_english(scratch, 700);
  const std::string model = scratch.path("spa-eng.safetensors");
  const std::string task =
      "--task pairs --data '" + data + "' --source spa --target eng --valid-size 30 --test-size 50 ";
  const Run train =
      run_attend("train " + task + "--min-count 1 --epochs 2 --hidden 16 --embed 8 --batch 32 --out '" + model + "'");
  BOOST_TEST_REQUIRE(train.status == 0, train.err);
  BOOST_TEST(train.err.find("700 pairs") != std::string::npos, train.err);
  BOOST_TEST(train.out.rfind("best validation bleu: ", 0) == 0u, train.out);

  const Run eval = run_attend("eval --model '" + model + "' --beam 2");
  BOOST_TEST_REQUIRE(eval.status == 0, eval.err);
  const auto lines = lines_of(eval.out);
  BOOST_TEST_REQUIRE(lines.size() == 11u, eval.out);
  BOOST_TEST(lines[0] == "split: test");
  BOOST_TEST(lines[1] == "count: 50");
  const double bleu = value_of(lines[2], "bleu");
  BOOST_TEST((bleu >= 0.0 && bleu <= 100.0));
  const double exact = value_of(lines[3], "exact_match");
  BOOST_TEST((exact >= 0.0 && exact <= 1.0));
  BOOST_TEST(value_of(lines[4], "precision_1") >= value_of(lines[5], "precision_2"));
  value_of(lines[8], "brevity_penalty");
  value_of(lines[9], "length_ratio");
  BOOST_TEST(lines[10].rfind("time: ", 0) == 0u, lines[10]);

  // translate is predict; unknown words read as <unk> and never fail; punctuation is attached for display
  const Run translate = run_attend("translate --model '" + model + "' '¿Dónde está Tom?' 'Xyzzy plugh.'");
  BOOST_TEST_REQUIRE(translate.status == 0, translate.err);
  BOOST_TEST(lines_of(translate.out).size() == 2u, translate.out);
  // from standard input, beam 3, one heatmap per sentence with a column per source token
  const Run heatmaps = run_attend("translate --model '" + model + "' --beam 3 --svg '" + scratch.path("t.svg") + "'",
                                  "Tengo hambre.\nEstoy muy cansado hoy.\n");
  BOOST_TEST_REQUIRE(heatmaps.status == 0, heatmaps.err);
  BOOST_TEST(lines_of(heatmaps.out).size() == 2u, heatmaps.out);
  const std::string svg = read_file(scratch.path("t-2.svg"));
  BOOST_TEST(attend::testing::xml_problem(svg) == "");
  BOOST_TEST(count(svg, "class=\"cell\"") % 5 == 0u);  // estoy muy cansado hoy .
  BOOST_TEST(count(svg, "class=\"cell\"") > 0u);
  BOOST_TEST(svg.find("cansado") != std::string::npos);

  // the vocabularies travel in the model file: the same tokens as `attend data` writes for the same task
  const Run split = run_attend("data " + task + "--min-count 1 --write '" + scratch.path("split") + "'");
  BOOST_TEST_REQUIRE(split.status == 0, split.err);
  const nlohmann::json metadata = attend::nn::read_checkpoint_metadata(model);
  for (const char* side : {"source", "target"}) {
    const auto written = lines_of(read_file(scratch.path("split/" + std::string(side) + ".vocab")));
    const auto saved = metadata.at(std::string(side) + "_vocabulary").get<std::vector<std::string>>();
    BOOST_TEST(saved == written, boost::test_tools::per_element());
  }
  // the exported splits: 50 test sentences with their references, training pairs as `source<TAB>target`
  const auto test = lines_of(read_file(scratch.path("split/test.tsv")));
  BOOST_TEST(test.size() == 50u);
  for (const auto& line : test) BOOST_TEST(line.find('\t') != std::string::npos);
  const auto vocabulary = lines_of(read_file(scratch.path("split/source.vocab")));
  BOOST_TEST_REQUIRE(vocabulary.size() > 4u);
  BOOST_TEST(vocabulary[0] == "<pad>");
  BOOST_TEST(vocabulary[3] == "<unk>");

  // eval finds a moved data file with --data, and refuses a changed one
  BOOST_TEST(std::system(("cp '" + data + "' '" + scratch.path("moved.tsv") + "'").c_str()) == 0);
  const Run moved = run_attend("eval --model '" + model + "' --data '" + scratch.path("moved.tsv") + "'");
  BOOST_TEST_REQUIRE(moved.status == 0, moved.err);
  BOOST_TEST(lines_of(moved.out)[2] == lines_of(run_attend("eval --model '" + model + "'").out)[2]);
  { std::ofstream(scratch.path("moved.tsv"), std::ios::app) << "Hola.\tHello.\n"; }
  check_usage_error(run_attend("eval --model '" + model + "' --data '" + scratch.path("moved.tsv") + "'"),
                    {"moved.tsv", "not the file the model was trained on"});
}

// A model trained with a relative --data keeps the file's absolute path: `attend eval` finds it from another folder,
// and when the file has moved the error says which flag gives its new place. Split sizes that hold out every
// sentence name their flags.
BOOST_AUTO_TEST_CASE(a_pairs_model_finds_its_data_from_any_folder, *attend::test::needs_data({"tatoeba/spa-eng.tsv"})) {
  const Scratch scratch;
  spanish_english(scratch, 700);
  const std::string in_folder = "env -C '" + scratch.path("") + "' ";
  const Run train = run_attend(
      "train --task pairs --data spa-eng.tsv --source spa --target eng --min-count 1 --epochs 1 --hidden 8 --embed 4 "
      "--valid-size 20 --test-size 20 --out m.safetensors",
      "", ATTEND_EXE, in_folder);
  BOOST_TEST_REQUIRE(train.status == 0, train.err);
  const std::string model = scratch.path("m.safetensors");
  const Run eval = run_attend("eval --model '" + model + "'");  // from the tests' folder
  BOOST_TEST(eval.status == 0, eval.err);
  BOOST_TEST(eval.out.find("count: 20") != std::string::npos, eval.out);
  BOOST_TEST_REQUIRE(std::rename(scratch.path("spa-eng.tsv").c_str(), scratch.path("moved.tsv").c_str()) == 0);
  check_usage_error(run_attend("eval --model '" + model + "'"),
                    {"spa-eng.tsv: cannot open", "give the data file's place with --data FILE"});
  const Run moved = run_attend("eval --model '" + model + "' --data '" + scratch.path("moved.tsv") + "'");
  BOOST_TEST(moved.status == 0, moved.err);
  check_usage_error(
      run_attend("data --task pairs --data '" + scratch.path("moved.tsv") + "' --source 1 --target 2 --test-size 600"),
      {"leave none to train on", "--test-size N and --valid-size N hold fewer out"});
}

BOOST_AUTO_TEST_CASE(bad_lines_are_skipped_and_counted_on_request) {
  Scratch scratch;
  {
    std::ofstream(scratch.path("bad-lines.tsv"))
        << "Hola.\tHello.\nAdiós. Goodbye.\nGracias.\tThanks.\nSí.\tYes.\nNo.\tNo.\nVale.\tOkay.\n";
  }
  // skipped, and counted (then too few sentences to hold out 10 + 10)
  check_usage_error(run_attend("data --task pairs --skip-bad-lines --data '" + scratch.path("bad-lines.tsv") + "'"),
                    {"5 distinct source sentences"});
  const Run skipped = run_attend("data --task pairs --skip-bad-lines --valid-size 1 --test-size 1 --data '" +
                                 scratch.path("bad-lines.tsv") + "'");
  BOOST_TEST(skipped.status == 0, skipped.err);
  BOOST_TEST(skipped.out.find("1 bad lines skipped") != std::string::npos, skipped.out);
}

BOOST_AUTO_TEST_SUITE_END()
