// `attend train --precision bf16` (precision/precision.hpp): a small run learns, gives the same bits twice, differs
// from the float32 run (its products really were rounded), keeps its weights in float32 files, and resumes to the bits
// of the whole run; a resumed run may change the precision, and says so. On a machine or build without bfloat16 the
// flag is refused in one line (exit 2), which is what these cases check there. Then int8 decoding (eval, predict).
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

#include "nn/checkpoint.hpp"
#include "precision/precision.hpp"
#include "tests/cli/cli_helpers.hpp"

using namespace cli_test;

namespace {

const std::string small =
    "train --task dates --train-size 1024 --valid-size 32 --test-size 16 --epochs 4 --hidden 32 --embed 8 "
    "--batch 32 --seed 4 --threads 2 --log-every 1 ";

// The loss of every progress line, in order.
std::vector<double> losses(const std::string& log) {
  std::vector<double> found;
  const std::regex loss(R"(step \d+/\d+  loss ([0-9.]+))");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), loss); it != std::sregex_iterator(); ++it) {
    found.push_back(std::stod((*it)[1]));
  }
  return found;
}

// The safetensors header (JSON) of a file.
nlohmann::json header_of(const std::string& path) {
  const std::string bytes = read_file(path);
  BOOST_TEST_REQUIRE(bytes.size() >= 8u);
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = length << 8 | static_cast<unsigned char>(bytes[i]);
  return nlohmann::json::parse(bytes.substr(8, length));
}

// The "exact_match: X" that `attend eval` prints (the first, the whole test split's); NaN when there is none.
double exact_match_of(const std::string& out) {
  std::smatch found;
  if (!std::regex_search(out, found, std::regex(R"(exact_match: ([0-9.]+))"))) return std::nan("");
  return std::stod(found[1]);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(precision)

BOOST_AUTO_TEST_CASE(a_bf16_run_learns_and_resumes_to_the_same_bits) {
  Scratch scratch;
  const auto out = [&scratch](const std::string& name) { return "--out '" + scratch.path(name) + "'"; };
  const std::string unavailable = attend::find_precision("bf16")->unavailable();
  const Run a = run_attend(small + "--precision bf16 " + out("a.safetensors"));
  if (!unavailable.empty()) {
    check_usage_error(a, {"--precision bf16", unavailable});
    BOOST_TEST(!exists(scratch.path("a.safetensors")));
    return;
  }
  BOOST_TEST_REQUIRE(a.status == 0, a.err);
  BOOST_TEST(a.err.find("products in bf16") != std::string::npos, a.err);
  const std::vector<double> curve = losses(a.err);
  BOOST_TEST_REQUIRE(curve.size() == 4u * 1024 / 32);
  BOOST_TEST(curve.back() < 0.5 * curve.front(), "first loss " << curve.front() << ", last " << curve.back());

  // the same bits again; not the float32 run's
  const std::string state = tensor_bytes(scratch.path("a.last.safetensors"));
  BOOST_TEST_REQUIRE(run_attend(small + "--precision bf16 " + out("b.safetensors")).status == 0);
  BOOST_TEST((tensor_bytes(scratch.path("b.last.safetensors")) == state));
  const Run f = run_attend(small + out("f.safetensors"));
  BOOST_TEST_REQUIRE(f.status == 0, f.err);
  BOOST_TEST((tensor_bytes(scratch.path("f.last.safetensors")) != state));
  // and it learns as the float32 run does: the last loss within 5% of float32's
  const double float32_last = losses(f.err).back();
  BOOST_TEST(std::fabs(curve.back() - float32_last) <= 0.05 * float32_last,
             "last loss: bf16 " << curve.back() << ", float32 " << float32_last);

  // float32 files, the precision among the saved settings
  const nlohmann::json header = header_of(scratch.path("a.safetensors"));
  BOOST_TEST(header.size() > 10u);
  for (auto item = header.begin(); item != header.end(); ++item) {
    if (item.key() != "__metadata__") BOOST_TEST(item.value().at("dtype").get<std::string>() == "F32", item.key());
  }
  BOOST_TEST(read_file(scratch.path("a.last.safetensors")).find(R"(\"precision\":\"bf16\")") != std::string::npos);

  // stopped by a step limit, resumed: the bits of the whole run; the precision cannot change on resume
  BOOST_TEST_REQUIRE(run_attend(small + "--precision bf16 --max-steps 45 " + out("c.safetensors")).status == 0);
  const std::string last = scratch.path("c.last.safetensors");
  const Run resumed = run_attend("train --resume '" + last + "' --max-steps 0");
  BOOST_TEST_REQUIRE(resumed.status == 0, resumed.err);
  BOOST_TEST(resumed.err.find("products in bf16") != std::string::npos, resumed.err);
  BOOST_TEST((tensor_bytes(last) == state));

  // a resume may change the precision: it goes on, and says that the bits are not the whole run's
  BOOST_TEST_REQUIRE(run_attend(small + "--precision bf16 --max-steps 45 " + out("d.safetensors")).status == 0);
  const std::string d_last = scratch.path("d.last.safetensors");
  const Run changed = run_attend("train --resume '" + d_last + "' --max-steps 0 --precision float32");
  BOOST_TEST_REQUIRE(changed.status == 0, changed.err);
  BOOST_TEST(changed.err.find("--precision float32 where the saved run had bf16") != std::string::npos, changed.err);
  BOOST_TEST(changed.err.find("products in bf16") == std::string::npos, changed.err);
  BOOST_TEST((tensor_bytes(d_last) != state));
}

// `attend eval` and `predict --precision int8` (the weights quantized when the model is loaded): the same outputs as
// float32 on most of a trained dates model's 400 test dates, and as many of them right, within 2 points; the same bytes
// twice; scores that differ from float32's (the products really were quantized) by little; and a line saying what was
// quantized. Without oneDNN the flag is refused in one line. The bounds hold with a margin wherever measured: equal
// outputs 394–397 on a Zen 5 (VNNI: weights on 127 levels); 389–396 on a Zen 2 (no VNNI: 63 levels) over seeds 1–6,
// OpenBLAS's Prescott, Nehalem, Sandybridge, Haswell and Zen cores and the GCC and clang ASan builds, with exact match
// at most 0.01 from float32's. Where they sit depends on the kernels (a count of 390 was crossed by one ASan build).
BOOST_AUTO_TEST_CASE(int8_decoding_gives_float32s_outputs_on_most_inputs) {
  Scratch scratch;
  const std::string model = scratch.path("m.safetensors");
  const Run trained = run_attend(
      "train --task dates --train-size 4096 --valid-size 32 --test-size 400 --epochs 3 --hidden 48 --embed 16 "
      "--batch 32 --seed 6 --threads 2 --out '" +
      model + "'");
  BOOST_TEST_REQUIRE(trained.status == 0, trained.err);
  const auto eval = [&](const std::string& precision, const std::string& flags, const std::string& output) {
    return run_attend("eval --model '" + model + "' --precision " + precision + " " + flags + " --output '" +
                      scratch.path(output) + "'");
  };
  const std::string unavailable = attend::find_precision("int8")->unavailable();
  if (!unavailable.empty()) {
    check_usage_error(eval("int8", "", "i.txt"), {"--precision int8", unavailable});
    return;
  }
  for (const std::string beam : {"1", "3"}) {
    const Run f = eval("float32", "--beam " + beam, "f" + beam + ".txt");
    const Run q = eval("int8", "--beam " + beam, "q" + beam + ".txt");
    BOOST_TEST_REQUIRE(f.status == 0, f.err);
    BOOST_TEST_REQUIRE(q.status == 0, q.err);
    BOOST_TEST(q.err.find("attend eval: products in int8: ") != std::string::npos, q.err);
    BOOST_TEST(q.err.find(" weight matrices quantized per output channel") != std::string::npos, q.err);
    const std::vector<std::string> a = lines_of(read_file(scratch.path("f" + beam + ".txt")));
    const std::vector<std::string> b = lines_of(read_file(scratch.path("q" + beam + ".txt")));
    BOOST_TEST_REQUIRE(a.size() == 400u);
    BOOST_TEST_REQUIRE(b.size() == 400u);
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    BOOST_TEST_MESSAGE("beam " << beam << ": int8 outputs equal to float32's on " << same << " of 400 test dates");
    BOOST_TEST(same >= 380u, "beam " << beam << ": " << same << " of 400 equal");
    const double right_f = exact_match_of(f.out), right_q = exact_match_of(q.out);
    BOOST_TEST(std::fabs(right_q - right_f) <= 0.02,
               "beam " << beam << ": exact match " << right_q << " in int8, " << right_f << " in float32");
    BOOST_TEST(eval("int8", "--beam " + beam, "r" + beam + ".txt").status == 0);
    BOOST_TEST((read_file(scratch.path("r" + beam + ".txt")) == read_file(scratch.path("q" + beam + ".txt"))));
  }
  // the scores: not float32's bits (the products were quantized), within 0.05 of them
  const std::string dates = "'Saturday 09 May 2018' '1 mars 1999' '12/31/2004' 'June 7th, 1987'";
  const Run f = run_attend("predict --scores --model '" + model + "' " + dates);
  const Run q = run_attend("predict --scores --precision int8 --model '" + model + "' " + dates);
  BOOST_TEST_REQUIRE(f.status == 0, f.err);
  BOOST_TEST_REQUIRE(q.status == 0, q.err);
  const std::vector<std::string> fl = lines_of(f.out), ql = lines_of(q.out);
  BOOST_TEST_REQUIRE(fl.size() == 4u);
  BOOST_TEST_REQUIRE(ql.size() == 4u);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const double fs = std::stod(fl[i].substr(fl[i].find('\t') + 1)), qs = std::stod(ql[i].substr(ql[i].find('\t') + 1));
    differ += fs != qs;
    BOOST_TEST(std::fabs(fs - qs) <= 0.05, fl[i] << " / " << ql[i]);
  }
  BOOST_TEST(differ > 0u, f.out << q.out);
}

BOOST_AUTO_TEST_SUITE_END()
