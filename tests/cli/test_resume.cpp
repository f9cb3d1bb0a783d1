// Interrupted work (apps/train.cpp): SIGINT or SIGTERM finish the step, save the training state and exit 128 + the
// signal; `attend train --resume` goes on from it and ends with the same bits as a run that was never interrupted —
// from a --save-every state too when SIGKILL ended the run at any moment;
// a loss that turns NaN stops training before the update, with every file on disk as it was.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "nn/checkpoint.hpp"
#include "tests/cli/cli_helpers.hpp"

using namespace cli_test;

namespace {

// Training long enough (3 epochs of 32 steps, dropout between two layers so that a random generator is part of the
// state) that a signal can land anywhere in it.
const std::string training =
    "train --task dates --train-size 2048 --valid-size 32 --test-size 16 --epochs 3 --hidden 32 --embed 8 "
    "--layers 2 --dropout 0.2 --batch 64 --seed 5 --log-every 1 ";

}  // namespace

BOOST_AUTO_TEST_SUITE(resume)

BOOST_AUTO_TEST_CASE(a_resumed_run_ends_with_the_same_bits) {
  Scratch scratch;
  const Run whole = run_attend(training + "--out '" + scratch.path("a.safetensors") + "'");
  BOOST_TEST_REQUIRE(whole.status == 0, whole.err);
  BOOST_TEST_REQUIRE(exists(scratch.path("a.last.safetensors")));
  const std::string final_state = tensor_bytes(scratch.path("a.last.safetensors"));
  const std::string best = tensor_bytes(scratch.path("a.safetensors"));

  // a random step in each epoch (the signal may land a step or two later: whatever step it stops at must resume)
  std::random_device device;
  std::mt19937 pick(device());
  const std::size_t steps[] = {std::uniform_int_distribution<std::size_t>(1, 31)(pick),
                               std::uniform_int_distribution<std::size_t>(33, 63)(pick),
                               std::uniform_int_distribution<std::size_t>(65, 94)(pick)};
  int signals[] = {SIGINT, SIGTERM, SIGINT};
  for (int k = 0; k < 3; ++k) {
    const std::string name = "b" + std::to_string(k);
    const std::string out = scratch.path(name + ".safetensors");
    const std::string last = scratch.path(name + ".last.safetensors");
    const std::string err = scratch.path(name + ".err");
    const int status = train_and_signal(training + "--out '" + out + "'", err, steps[k], signals[k]);
    const std::string log = read_file(err);
    BOOST_TEST_INFO("signal " << signals[k] << " after the line of step " << steps[k] << "\n" << log);
    BOOST_TEST_REQUIRE(status == 128 + signals[k]);
    BOOST_TEST(log.find(signals[k] == SIGINT ? "stopped by SIGINT" : "stopped by SIGTERM") != std::string::npos);
    BOOST_TEST(log.find("attend train --resume " + last) != std::string::npos);
    BOOST_TEST_REQUIRE(exists(last));
    BOOST_TEST(tensor_bytes(last) != final_state);  // it did stop early

    const Run resumed = run_attend("train --resume '" + last + "'");
    BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
    BOOST_TEST(resumed.err.find("resuming") != std::string::npos, resumed.err);
    BOOST_TEST((tensor_bytes(last) == final_state));  // weights and optimizer state, bit for bit
    BOOST_TEST((tensor_bytes(out) == best));
    // and the training curve goes on where it stopped: the same picture, but for the model's name in its titles
    std::string curve = read_file(scratch.path(name + ".curve.svg"));
    for (std::size_t at = curve.find(name + ".safetensors"); at != std::string::npos;
         at = curve.find(name + ".safetensors", at)) {
      curve.replace(at, name.size(), "a");
    }
    BOOST_TEST((curve == read_file(scratch.path("a.curve.svg"))));
  }
}

// Starts `attend <args>` with standard error to `err`, kills it with SIGKILL `delay` after the progress line of `step`
// is there (nothing is finished, saved or flushed), and returns whether SIGKILL ended it.
bool train_and_kill(const std::string& args, const std::string& err, std::size_t step,
                    std::chrono::microseconds delay) {
  const pid_t pid = start_attend(args, err);
  int raw = 0;
  if (!wait_for_step(pid, err, step, raw)) return false;  // it ended by itself
  std::this_thread::sleep_for(delay);
  kill(pid, SIGKILL);
  waitpid(pid, &raw, 0);
  return WIFSIGNALED(raw) && WTERMSIG(raw) == SIGKILL;
}

// SIGKILL gives the program no chance to save anything: what --save-every wrote last (whole, every file being written
// atomically) is where a resumed run goes on from, and it ends with the bits of a run never interrupted. Five kills at
// random moments after the first save — in a step, in a save, in a validation.
BOOST_AUTO_TEST_CASE(a_run_killed_at_any_moment_resumes_to_the_same_bits) {
  Scratch scratch;
  const std::string settings = training + "--save-every 10 ";
  const Run whole = run_attend(settings + "--out '" + scratch.path("a.safetensors") + "'");
  BOOST_TEST_REQUIRE(whole.status == 0, whole.err);
  const std::string final_state = tensor_bytes(scratch.path("a.last.safetensors"));
  const std::string best = tensor_bytes(scratch.path("a.safetensors"));
  std::random_device device;
  std::mt19937 pick(device());
  for (int k = 0; k < 5; ++k) {
    // after the line of a step from 11 (step 10 saved the first state) to 85 of 96, and up to 30 ms more
    const std::size_t step = std::uniform_int_distribution<std::size_t>(11, 85)(pick);
    const std::chrono::microseconds delay(std::uniform_int_distribution<int>(0, 30000)(pick));
    const std::string name = "k" + std::to_string(k);
    const std::string out = scratch.path(name + ".safetensors"), last = scratch.path(name + ".last.safetensors");
    const bool killed = train_and_kill(settings + "--out '" + out + "'", scratch.path(name + ".err"), step, delay);
    BOOST_TEST_INFO("SIGKILL " << delay.count() << " µs after the line of step " << step << "\n"
                               << read_file(scratch.path(name + ".err")));
    BOOST_TEST_REQUIRE(killed);
    BOOST_TEST_REQUIRE(exists(last));
    BOOST_TEST(tensor_bytes(last) != final_state);  // it did stop early
    const Run resumed = run_attend("train --resume '" + last + "'");
    BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
    BOOST_TEST((tensor_bytes(last) == final_state));  // weights and optimizer state, bit for bit
    BOOST_TEST((tensor_bytes(out) == best));
  }
}

BOOST_AUTO_TEST_CASE(a_run_can_be_extended) {
  // two epochs, then a third by --resume --epochs 3: the same bits as three epochs at once
  Scratch scratch;
  const std::string small =
      "train --task dates --train-size 256 --valid-size 16 --test-size 16 --hidden 8 --embed 4 "
      "--batch 32 --seed 2 ";
  BOOST_TEST_REQUIRE(run_attend(small + "--epochs 3 --out '" + scratch.path("a.safetensors") + "'").status == 0);
  BOOST_TEST_REQUIRE(run_attend(small + "--epochs 2 --out '" + scratch.path("b.safetensors") + "'").status == 0);
  const std::string last = scratch.path("b.last.safetensors");
  check_usage_error(run_attend("train --resume '" + last + "'"), {last, "finished its 2 epochs", "--epochs"});
  const Run more = run_attend("train --resume '" + last + "' --epochs 3");
  BOOST_TEST_REQUIRE(more.status == 0, more.err);
  BOOST_TEST((tensor_bytes(last) == tensor_bytes(scratch.path("a.last.safetensors"))));
  // the step limit, likewise
  BOOST_TEST_REQUIRE(
      run_attend(small + "--epochs 3 --max-steps 5 --out '" + scratch.path("c.safetensors") + "'").status == 0);
  const std::string c_last = scratch.path("c.last.safetensors");
  check_usage_error(run_attend("train --resume '" + c_last + "'"), {"step limit of 5", "--max-steps"});
  BOOST_TEST_REQUIRE(run_attend("train --resume '" + c_last + "' --max-steps 0").status == 0);
  BOOST_TEST((tensor_bytes(c_last) == tensor_bytes(scratch.path("a.last.safetensors"))));
}

// Training states written before the seq2seq kind kept --decoder in the model's configuration hold it among the
// training settings too ("options": {"decoder": …}); such a state still resumes, to the same bits.
BOOST_AUTO_TEST_CASE(an_older_state_with_the_decoder_among_its_settings_resumes) {
  Scratch scratch;
  const std::string small =
      "train --task dates --train-size 256 --valid-size 16 --test-size 16 --hidden 8 --embed 4 --batch 32 --seed 2 "
      "--decoder luong-general ";
  BOOST_TEST_REQUIRE(run_attend(small + "--epochs 2 --out '" + scratch.path("a.safetensors") + "'").status == 0);
  BOOST_TEST_REQUIRE(run_attend(small + "--epochs 1 --out '" + scratch.path("b.safetensors") + "'").status == 0);
  const std::string last = scratch.path("b.last.safetensors");
  // the header rewritten as the older program wrote it: "decoder" among the options
  std::string bytes = read_file(last);
  std::uint64_t size = 0;
  for (int k = 7; k >= 0; --k) size = size * 256 + static_cast<unsigned char>(bytes[static_cast<std::size_t>(k)]);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, size));
  nlohmann::json metadata = nlohmann::json::parse(header["__metadata__"]["attend"].get<std::string>());
  nlohmann::json& options = metadata["training"]["state"]["options"];
  BOOST_TEST_REQUIRE(options.is_object());
  BOOST_TEST(!options.contains("decoder"));  // written now: the decoder is the model's
  options["decoder"] = "luong-general";
  header["__metadata__"]["attend"] = metadata.dump();
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string older(8, '\0');
  for (std::size_t k = 0; k < 8; ++k) older[k] = static_cast<char>((text.size() >> (8 * k)) & 0xff);
  older += text + bytes.substr(8 + size);
  { std::ofstream(last, std::ios::binary) << older; }
  const Run more = run_attend("train --resume '" + last + "' --epochs 2");
  BOOST_TEST_REQUIRE(more.status == 0, more.err);
  BOOST_TEST((tensor_bytes(last) == tensor_bytes(scratch.path("a.last.safetensors"))));
  BOOST_TEST((tensor_bytes(scratch.path("b.safetensors")) == tensor_bytes(scratch.path("a.safetensors"))));
}

// The Transformer's state has more parts: dropout everywhere, the warm-up schedule's step, label smoothing in the
// saved configuration. Stopped by a step limit and by SIGINT at a random step, it resumes to the same bits.
BOOST_AUTO_TEST_CASE(a_transformer_run_resumes_to_the_same_bits) {
  Scratch scratch;
  const std::string small =
      "train --arch transformer --task dates --train-size 512 --valid-size 16 --test-size 16 --d-model 16 --heads 2 "
      "--ff 32 --layers 2 --dropout 0.2 --warmup 10 --batch 32 --seed 3 --epochs 3 --log-every 1 ";
  BOOST_TEST_REQUIRE(run_attend(small + "--out '" + scratch.path("a.safetensors") + "'").status == 0);
  const std::string final_state = tensor_bytes(scratch.path("a.last.safetensors"));

  BOOST_TEST_REQUIRE(run_attend(small + "--max-steps 7 --out '" + scratch.path("b.safetensors") + "'").status == 0);
  const std::string b_last = scratch.path("b.last.safetensors");
  BOOST_TEST(tensor_bytes(b_last) != final_state);
  const Run more = run_attend("train --resume '" + b_last + "' --max-steps 0");
  BOOST_TEST_REQUIRE(more.status == 0, more.err);
  BOOST_TEST((tensor_bytes(b_last) == final_state));

  std::random_device device;
  const std::size_t step = std::uniform_int_distribution<std::size_t>(2, 40)(device);
  const std::string out = scratch.path("c.safetensors"), last = scratch.path("c.last.safetensors");
  const int status = train_and_signal(small + "--out '" + out + "'", scratch.path("c.err"), step, SIGINT);
  BOOST_TEST_INFO("SIGINT after the line of step " << step << "\n" << read_file(scratch.path("c.err")));
  BOOST_TEST_REQUIRE(status == 128 + SIGINT);
  const Run resumed = run_attend("train --resume '" + last + "'");
  BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
  BOOST_TEST((tensor_bytes(last) == final_state));
}

// --lr-drop: the steps after the given fraction of the epochs' steps run at a tenth of --lr. The progress lines show
// the rate of each step; runs stopped by --max-steps before and after the drop resume to the bits of the whole run
// (the drop is a fraction of the epochs' steps, not of the limit's).
BOOST_AUTO_TEST_CASE(a_learning_rate_drop_is_kept_across_a_resume) {
  Scratch scratch;
  const std::string small =
      "train --task dates --train-size 512 --valid-size 16 --test-size 16 --hidden 16 --embed 8 --batch 32 --seed 3 "
      "--epochs 3 --log-every 1 ";
  const Run whole = run_attend(small + "--lr-drop 0.5 --out '" + scratch.path("a.safetensors") + "'");
  BOOST_TEST_REQUIRE(whole.status == 0, whole.err);
  const std::size_t steps = 3 * 512 / 32, drop = steps / 2;
  const auto line_of = [&](std::size_t step) {
    const std::string key = "step " + std::to_string(step) + "/" + std::to_string(steps) + " ";
    const std::size_t at = whole.err.find(key);
    BOOST_TEST_REQUIRE(at != std::string::npos, key << "\n" << whole.err);
    return whole.err.substr(at, whole.err.find('\n', at) - at);
  };
  BOOST_TEST(line_of(1).find("lr 2.0e-03") != std::string::npos, line_of(1));
  BOOST_TEST(line_of(drop).find("lr 2.0e-03") != std::string::npos, line_of(drop));
  BOOST_TEST(line_of(drop + 1).find("lr 2.0e-04") != std::string::npos, line_of(drop + 1));
  BOOST_TEST(line_of(steps).find("lr 2.0e-04") != std::string::npos, line_of(steps));
  const std::string final_state = tensor_bytes(scratch.path("a.last.safetensors"));
  BOOST_TEST_REQUIRE(run_attend(small + "--out '" + scratch.path("constant.safetensors") + "'").status == 0);
  BOOST_TEST(tensor_bytes(scratch.path("constant.last.safetensors")) != final_state);

  for (const std::size_t stop : {drop - 4, drop + 4}) {
    const std::string name = "b" + std::to_string(stop);
    const std::string last = scratch.path(name + ".last.safetensors");
    const Run first = run_attend(small + "--lr-drop 0.5 --max-steps " + std::to_string(stop) + " --out '" +
                                 scratch.path(name + ".safetensors") + "'");
    BOOST_TEST_REQUIRE(first.status == 0, first.err);
    const Run rest = run_attend("train --resume '" + last + "' --max-steps 0");
    BOOST_TEST_REQUIRE(rest.status == 0, rest.err);
    BOOST_TEST_INFO("stopped after step " << stop);
    BOOST_TEST((tensor_bytes(last) == final_state));
  }
  // one schedule at a time: the Transformer's warm-up is its default
  check_usage_error(run_attend("train --task dates --arch transformer --lr-drop 0.5 --out x.safetensors"),
                    {"--lr-drop with --warmup 1000", "--warmup 0"});
  check_usage_error(run_attend(small + "--lr-drop 1.5 --out x.safetensors"), {"--lr-drop"});
}

BOOST_AUTO_TEST_CASE(resume_errors) {
  Scratch scratch;
  check_usage_error(run_attend("train --resume '" + scratch.path("none.safetensors") + "'"),
                    {"none.safetensors", "no such file"});
  check_usage_error(run_attend("train --resume x.safetensors --hidden 8"), {"--hidden", "--resume"});
  check_usage_error(run_attend("train --resume x.safetensors --task pairs"), {"--task", "--resume"});
  check_usage_error(run_attend("train --resume x.safetensors --lr 0.1"), {"--lr", "--resume"});
  // a checkpoint that is not an attend model
  { std::ofstream(scratch.path("junk.safetensors")) << "not a checkpoint"; }
  check_usage_error(run_attend("train --resume '" + scratch.path("junk.safetensors") + "'"), {"junk.safetensors"});
}

BOOST_AUTO_TEST_CASE(a_nan_stops_training_before_the_update) {
  Scratch scratch;
  const std::string out = scratch.path("m.safetensors");
  const std::string last = scratch.path("m.last.safetensors");
  const Run run = run_attend(
      "train --task dates --train-size 128 --valid-size 16 --test-size 16 --epochs 1 --hidden 8 "
      "--embed 4 --batch 32 --out '" +
      out + "'");
  BOOST_TEST_REQUIRE(run.status == 0, run.err);
  // one weight of the saved state set to NaN, as a diverged update would leave it
  std::string bytes = read_file(last);
  std::size_t offset = bytes.size();
  for (const auto& tensor : attend::nn::list_checkpoint(last)) {
    if (tensor.name == "decoder.output.b") offset = static_cast<std::size_t>(tensor.begin);  // every logit turns NaN
  }
  BOOST_TEST_REQUIRE(offset < bytes.size());
  std::uint64_t header = 0;
  for (int k = 7; k >= 0; --k) header = header * 256 + static_cast<unsigned char>(bytes[static_cast<std::size_t>(k)]);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(&bytes[8 + header + offset], &nan, sizeof nan);
  { std::ofstream(last, std::ios::binary) << bytes; }
  const std::string best_before = read_file(out);
  const Run diverged = run_attend("train --resume '" + last + "' --epochs 2");
  BOOST_TEST(diverged.status == 1);
  BOOST_TEST(lines_of(diverged.err).back().find("attend: error: training diverged at step 5 (loss ") == 0u,
             diverged.err);
  BOOST_TEST(lines_of(diverged.err).back().find("nan") != std::string::npos, diverged.err);
  BOOST_TEST(diverged.err.find("the best model so far") != std::string::npos, diverged.err);
  BOOST_TEST((read_file(last) == bytes));  // nothing written over the last good files
  BOOST_TEST((read_file(out) == best_before));
  // anomaly detection names the op that made the first NaN
  const Run anomaly = run_attend("train --resume '" + last + "' --epochs 2 --detect-anomaly");
  BOOST_TEST(anomaly.status == 1);
  BOOST_TEST(anomaly.err.find("attend: error: step 5: anomaly detection: node ") != std::string::npos, anomaly.err);
  BOOST_TEST(anomaly.err.find("nan in its output") != std::string::npos, anomaly.err);
  BOOST_TEST((read_file(last) == bytes));
}

BOOST_AUTO_TEST_SUITE_END()
