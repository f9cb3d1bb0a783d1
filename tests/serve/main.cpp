// The serve suite's entry point (Boost.Test, linked as a shared library), and the models it serves.
#define BOOST_TEST_MODULE serve
#include <boost/test/unit_test.hpp>
#include <optional>
#include <vector>

#include "data/locate.hpp"
#include "tests/fitting_kernels_fixture.hpp"
#include "tests/serve/serve_helpers.hpp"

namespace serve_test {

const Models& models() {
  static Scratch scratch;
  static const Models trained = [] {
    Models m;
    const std::string dates = "train --task dates --train-size 256 --valid-size 32 --test-size 40 --epochs 2 ";
    m.rnn = scratch.path("dates.safetensors");
    m.transformer = scratch.path("dates-transformer.safetensors");
    m.vanilla = scratch.path("dates-vanilla.safetensors");
    m.digits = scratch.path("digits.safetensors");
    m.digits_folder = scratch.path("digits");
    std::vector<std::string> runs = {
        dates + "--hidden 16 --embed 8 --out '" + m.rnn + "'",
        dates + "--arch transformer --d-model 16 --heads 2 --ff 32 --out '" + m.transformer + "'",
        dates + "--decoder vanilla --hidden 16 --embed 8 --out '" + m.vanilla + "'"};
    // the captioner where the digits data is found (the tests of it need it: tests/needs_data.hpp)
    if (const std::optional<std::string> data = attend::data::locate_data_file("digits/digits.csv.gz")) {
      const std::string digits = "--task digits --data '" + *data + "' --train-size 32 --valid-size 4 --test-size 4 ";
      runs.push_back("train " + digits +
                     "--epochs 1 --hidden 8 --embed 4 --annotation-size 8 --patch-hidden 0 --batch 16 --out '" +
                     m.digits + "'");
      runs.push_back("data " + digits + "--write '" + m.digits_folder + "'");
    }
    for (const std::string& args : runs) {
      const Run run = run_attend(args);
      BOOST_TEST_REQUIRE(run.status == 0, "attend " << args << " failed: " << run.err);
    }
    return m;
  }();
  return trained;
}

}  // namespace serve_test
