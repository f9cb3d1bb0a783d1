// The `attend` program on the digits task (docs/13-visual-attention.md): `attend data` writes the held-out images as
// PGM files with their captions, `attend train --task digits` trains a captioner whose attention goes left to right,
// `attend eval` scores it, `attend predict --image` captions the written files and draws the overlays, and a resumed
// run ends with the same bits as an uninterrupted one. The error cases are rows of docs/reliability.md's table.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "data/image.hpp"
#include "tests/cli/cli_helpers.hpp"
#include "tests/needs_data.hpp"
#include "tests/plot/xml_check.hpp"

using namespace cli_test;

namespace {

std::string digits_file() { return attend::test::data_file("digits/digits.csv.gz"); }

// "name: 0.9850" → 0.985 for the line of `name` in `text`; -1 when there is none.
double score(const std::string& text, const std::string& name) {
  for (const std::string& line : lines_of(text)) {
    if (line.rfind(name + ": ", 0) == 0) return std::stod(line.substr(name.size() + 2));
  }
  return -1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(digits, *attend::test::needs_data({"digits/digits.csv.gz"}))

BOOST_AUTO_TEST_CASE(data_writes_the_held_out_images_and_their_captions) {
  Scratch scratch;
  const std::string args = "data --task digits --data '" + digits_file() + "' --valid-size 3 --test-size 5 --write '";
  const Run run = run_attend(args + scratch.path("a") + "'");
  BOOST_TEST_REQUIRE(run.status == 0, run.err);
  BOOST_TEST(run.out.find("1797 digits; 1497 training, 100 validation and 200 test digits") != std::string::npos,
             run.out);
  const std::vector<std::string> test = lines_of(read_file(scratch.path("a/test.tsv")));
  BOOST_TEST_REQUIRE(test.size() == 5u);
  BOOST_TEST(lines_of(read_file(scratch.path("a/validation.tsv"))).size() == 3u);
  for (std::size_t k = 0; k < test.size(); ++k) {
    const std::string name = "test-000" + std::to_string(k + 1) + ".pgm";
    BOOST_TEST_REQUIRE(test[k].rfind(name + "\t", 0) == 0u, test[k]);
    // 3 to 6 digits, single characters 0..9 joined by spaces
    const std::string caption = test[k].substr(name.size() + 1);
    BOOST_TEST((caption.size() >= 5u && caption.size() <= 11u && caption.size() % 2 == 1), caption);
    for (std::size_t c = 0; c < caption.size(); ++c) {
      BOOST_TEST((c % 2 == 0 ? caption[c] >= '0' && caption[c] <= '9' : caption[c] == ' '), caption);
    }
    const attend::data::Image image = attend::data::read_pgm(scratch.path("a/" + name), 12, 64);
    float ink = 0;
    for (const float v : image.pixels) ink += v;
    BOOST_TEST(ink > 3.0f * 10);  // at least three digits' worth of ink
  }
  // the same seed writes the same images; another seed other ones
  BOOST_TEST(run_attend(args + scratch.path("b") + "'").status == 0);
  BOOST_TEST((read_file(scratch.path("b/test-0003.pgm")) == read_file(scratch.path("a/test-0003.pgm"))));
  BOOST_TEST(run_attend(args + scratch.path("c") + "' --seed 2").status == 0);
  BOOST_TEST((read_file(scratch.path("c/test-0003.pgm")) != read_file(scratch.path("a/test-0003.pgm"))));
}

// The acceptance test of the chapter at a smaller scale: 800 steps (a minute or two) already give a model whose
// attention moves from left to right across the digits on at least 95% of 200 test images, (13.8) m_t increasing.
BOOST_AUTO_TEST_CASE(a_trained_captioner_looks_from_left_to_right) {
  Scratch scratch;
  const std::string model = scratch.path("d.safetensors");
  const Run train = run_attend("train --task digits --data '" + digits_file() +
                               "' --max-steps 800 --valid-size 50 "
                               "--test-size 200 --log-every 200 --out '" +
                               model + "'");
  BOOST_TEST_REQUIRE(train.status == 0, train.err);
  BOOST_TEST(train.err.find("model patches (8×8, stride 2) → bahdanau gru over 87 positions") != std::string::npos,
             train.err);

  const Run eval = run_attend("eval --model '" + model + "' --output '" + scratch.path("outputs.txt") + "'");
  BOOST_TEST_REQUIRE(eval.status == 0, eval.err);
  BOOST_TEST(lines_of(eval.out)[1] == "count: 200");
  BOOST_TEST(score(eval.out, "left_to_right") >= 0.95, eval.out);
  BOOST_TEST(score(eval.out, "digit_accuracy") >= 0.8, eval.out);
  BOOST_TEST(score(eval.out, "exact_match") >= 0.4, eval.out);
  BOOST_TEST(score(eval.out, "exact_match") <= score(eval.out, "digit_accuracy"));

  // predict reads the images `attend data` wrote, and captions them as eval did
  const Run data = run_attend("data --task digits --data '" + digits_file() + "' --test-size 200 --write '" +
                              scratch.path("images") + "'");
  BOOST_TEST_REQUIRE(data.status == 0, data.err);
  const std::vector<std::string> outputs = lines_of(read_file(scratch.path("outputs.txt")));
  BOOST_TEST_REQUIRE(outputs.size() == 200u);
  const Run predict =
      run_attend("predict --model '" + model + "' --image '" + scratch.path("images/test-0001.pgm") + "' --image '" +
                 scratch.path("images/test-0002.pgm") + "' --svg '" + scratch.path("o.svg") + "'");
  BOOST_TEST_REQUIRE(predict.status == 0, predict.err);
  const std::vector<std::string> captions = lines_of(predict.out);
  BOOST_TEST_REQUIRE(captions.size() == 2u);
  BOOST_TEST(captions[0] == outputs[0]);
  BOOST_TEST(captions[1] == outputs[1]);
  const std::string svg = read_file(scratch.path("o-1.svg"));
  BOOST_TEST(attend::testing::xml_problem(svg) == "");
  BOOST_TEST(exists(scratch.path("o-2.svg")));
  // one panel per output digit and one for <eos>
  BOOST_TEST(svg.find("&lt;eos&gt;") != std::string::npos);
  BOOST_TEST(count(svg, "class=\"panel\"") == (captions[0].size() + 1) / 2 + 1, svg.substr(0, 400));

  // an image that cannot be read among good ones: its own error line, an empty output line in its place, the others
  // captioned and drawn, status 2
  const Run mixed = run_attend("predict --model '" + model + "' --image '" + scratch.path("images/test-0001.pgm") +
                               "' --image '" + scratch.path("images/missing.pgm") + "' --image '" +
                               scratch.path("images/test-0003.pgm") + "' --svg '" + scratch.path("m.svg") + "'");
  BOOST_TEST(mixed.status == 2, mixed.err);
  BOOST_TEST((lines_of(mixed.out) == std::vector<std::string>{outputs[0], "", outputs[2]}), mixed.out);
  BOOST_TEST(mixed.err.find("attend: error: image 2: --image " + scratch.path("images/missing.pgm") +
                            ": cannot open") != std::string::npos,
             mixed.err);
  BOOST_TEST(exists(scratch.path("m-1.svg")));
  BOOST_TEST(!exists(scratch.path("m-2.svg")));
  BOOST_TEST(exists(scratch.path("m-3.svg")));
}

BOOST_AUTO_TEST_CASE(a_resumed_digits_run_ends_with_the_same_bits) {
  Scratch scratch;
  const std::string training = "train --task digits --data '" + digits_file() +
                               "' --train-size 96 --valid-size 8 "
                               "--test-size 8 --epochs 2 --batch 16 --hidden 16 --embed 4 --annotation-size 16 "
                               "--patch-hidden 0 --seed 4 ";
  const Run straight = run_attend(training + "--out '" + scratch.path("a.safetensors") + "'");
  BOOST_TEST_REQUIRE(straight.status == 0, straight.err);
  const Run first = run_attend(training + "--max-steps 7 --out '" + scratch.path("b.safetensors") + "'");
  BOOST_TEST_REQUIRE(first.status == 0, first.err);
  BOOST_TEST(tensor_bytes(scratch.path("b.last.safetensors")) != tensor_bytes(scratch.path("a.last.safetensors")));
  const Run rest = run_attend("train --resume '" + scratch.path("b.last.safetensors") + "' --max-steps 0");
  BOOST_TEST_REQUIRE(rest.status == 0, rest.err);
  BOOST_TEST(rest.err.find("resuming") != std::string::npos, rest.err);
  BOOST_TEST((tensor_bytes(scratch.path("b.last.safetensors")) == tensor_bytes(scratch.path("a.last.safetensors"))));
}

// `--data digits` names the data set, and the model keeps the name (found again wherever it is used), also when the
// folder training runs in holds a folder called digits: that folder is no data file, and training did not read it.
BOOST_AUTO_TEST_CASE(a_data_set_named_beside_a_folder_of_that_name_is_kept_by_name) {
  Scratch scratch;
  BOOST_TEST_REQUIRE(std::filesystem::create_directory(scratch.path("digits")));
  const std::string model = scratch.path("m.safetensors");
  const Run train = run_attend(
      "train --task digits --data digits --train-size 32 --valid-size 4 --test-size 4 "
      "--epochs 1 --hidden 8 --embed 4 --annotation-size 8 --patch-hidden 0 --batch 16 --out '" +
          model + "'",
      "", ATTEND_EXE, "env -C '" + scratch.dir + "' ");
  BOOST_TEST_REQUIRE(train.status == 0, train.err);
  const Run eval = run_attend("eval --model '" + model + "'");
  BOOST_TEST(eval.status == 0, eval.err);
  BOOST_TEST(eval.out.find("digit_accuracy: ") != std::string::npos, eval.out);
}

BOOST_AUTO_TEST_SUITE_END()
