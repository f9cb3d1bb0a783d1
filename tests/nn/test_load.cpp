// Loading by name (nn/module.hpp, nn/checkpoint.hpp): Module::named_tensors and Module::load, PyTorch's state_dict and
// load_state_dict — strict and not, every error naming the parameter (and both shapes), nothing changed on error,
// gradients zeroed; nn::renamed and nn::read_tensors; and PyTorch's own state_dicts loaded into a GRU cell (fixtures of
// tests/reference/make_state_dict_reference.py). Reference: docs/reference/nn.md ("Weights by name").
#include <cstring>
#include <filesystem>

#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"
#include "nn/recurrent.hpp"
#include "tests/autograd/helpers.hpp"
#include "tests/nn/reference.hpp"

namespace fs = std::filesystem;
using namespace attend;
using attend::testing::float_types;
using attend::testing::message_has;

namespace {

// Two layers of the same shape, so that a load can swap them: first.W (3,3), first.b (3,), second.W, second.b.
template <class T>
struct Twin : nn::Module<T> {
  nn::Linear<T> first;
  nn::Linear<T> second;

  explicit Twin(Rng& rng) : first(3, 3, rng), second(3, 3, rng) {}
  void visit(nn::ModuleVisitor<T>& v) override {
    v.module("first", first);
    v.module("second", second);
  }
};

template <class T>
Twin<T> make_twin(std::uint64_t seed) {
  Rng rng(seed);
  return Twin<T>(rng);
}

// Every parameter's value and gradient, to compare a module before and after a failed load.
template <class T>
std::vector<std::vector<T>> snapshot(nn::Module<T>& m) {
  std::vector<std::vector<T>> out;
  for (const auto& [name, p] : m.parameters()) {
    out.push_back(p->value.to_vector());
    out.push_back(p->grad.to_vector());
  }
  return out;
}

template <class T>
void fill_gradients(nn::Module<T>& m, T value) {
  for (const auto& [name, p] : m.parameters()) p->grad.flat().fill(value);
}

std::string reference_file(const std::string& name) {
  return std::string(ATTEND_SOURCE_DIR) + "/tests/reference/data/state_dicts/" + name;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(load_by_name)

BOOST_AUTO_TEST_CASE_TEMPLATE(named_tensors_of_one_module_load_into_another, T, float_types) {
  Twin<T> source = make_twin<T>(1), target = make_twin<T>(2);
  const nn::NamedTensors<T> named = source.named_tensors();
  std::vector<std::string> names;
  for (const auto& [name, t] : named) names.push_back(name);
  BOOST_TEST(names == (std::vector<std::string>{"first.W", "first.b", "second.W", "second.b"}),
             boost::test_tools::per_element());
  fill_gradients<T>(target, 7);
  const nn::LoadReport report = target.load(named);
  BOOST_TEST(report.missing.empty());
  BOOST_TEST(report.unexpected.empty());
  for (const auto& [name, p] : target.parameters()) {
    BOOST_TEST_CONTEXT(name) {
      const Tensor<T>* from = nullptr;
      for (const auto& [n, t] : named) from = n == name ? t : from;
      BOOST_TEST(p->value.to_vector() == from->to_vector(), boost::test_tools::per_element());
      BOOST_TEST(p->value.data() != from->data());  // copied, not shared
      BOOST_TEST(p->grad.to_vector() == std::vector<T>(p->value.size(), T(0)), boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(strict_load_lists_missing_and_unexpected_names_and_changes_nothing) {
  Twin<float> source = make_twin<float>(1), target = make_twin<float>(2);
  nn::NamedTensors<float> named = source.named_tensors();
  named.erase(named.begin() + 1);  // first.b
  const Tensor<float> stray(Shape{2});
  named.emplace_back("third.W", &stray);
  fill_gradients<float>(target, 3);
  const auto before = snapshot(target);
  BOOST_CHECK_EXCEPTION(target.load(named), std::invalid_argument,
                        message_has({"Module::load (strict)", "no tensor for parameter(s) first.b",
                                     "no parameter named third.W", "nothing was changed"}));
  BOOST_TEST((snapshot(target) == before));
}

BOOST_AUTO_TEST_CASE(a_non_strict_load_skips_and_reports_what_does_not_match) {
  Twin<float> source = make_twin<float>(1), target = make_twin<float>(2);
  const Tensor<float> kept_b = target.first.b.value;
  nn::NamedTensors<float> named = source.named_tensors();
  named.erase(named.begin() + 1);
  const Tensor<float> stray(Shape{2});
  named.emplace_back("third.W", &stray);
  const nn::LoadReport report = target.load(named, /*strict=*/false);
  BOOST_TEST(report.missing == std::vector<std::string>{"first.b"}, boost::test_tools::per_element());
  BOOST_TEST(report.unexpected == std::vector<std::string>{"third.W"}, boost::test_tools::per_element());
  BOOST_TEST(target.first.b.value.to_vector() == kept_b.to_vector(), boost::test_tools::per_element());
  BOOST_TEST(target.second.W.value.to_vector() == source.second.W.value.to_vector(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_shape_mismatch_names_the_parameter_and_both_shapes_and_changes_nothing) {
  Twin<double> target = make_twin<double>(2);
  Twin<double> source = make_twin<double>(1);
  const Tensor<double> wrong(Shape{3, 4});
  nn::NamedTensors<double> named = source.named_tensors();
  named[2].second = &wrong;  // second.W, after first.* which alone would load fine
  for (const bool strict : {true, false}) {
    const auto before = snapshot(target);
    BOOST_CHECK_EXCEPTION(
        target.load(named, strict), std::invalid_argument,
        message_has({"Module::load", "\"second.W\" has shape (3,4)", "parameter has (3,3)", "nothing was changed"}));
    BOOST_TEST((snapshot(target) == before));
  }
}

BOOST_AUTO_TEST_CASE(a_name_given_twice_or_a_null_tensor_is_refused) {
  Twin<float> target = make_twin<float>(2);
  nn::NamedTensors<float> named = target.named_tensors();
  named.push_back(named.front());
  BOOST_CHECK_EXCEPTION(target.load(named), std::invalid_argument,
                        message_has({"Module::load", "\"first.W\" is given twice"}));
  named.pop_back();
  named[0].second = nullptr;
  BOOST_CHECK_EXCEPTION(target.load(named), std::invalid_argument,
                        message_has({"Module::load", "\"first.W\" is a null pointer"}));
}

BOOST_AUTO_TEST_CASE(loading_a_module_own_tensors_under_swapped_names_swaps_them) {
  Twin<float> twin = make_twin<float>(4);
  const std::vector<float> first_w = twin.first.W.value.to_vector(), second_w = twin.second.W.value.to_vector();
  nn::NamedTensors<float> swapped = {{"first.W", &twin.second.W.value},
                                     {"second.W", &twin.first.W.value},
                                     {"first.b", &twin.first.b.value},
                                     {"second.b", &twin.second.b.value}};
  twin.load(swapped);  // every tensor is read before any parameter is written
  BOOST_TEST(twin.first.W.value.to_vector() == second_w, boost::test_tools::per_element());
  BOOST_TEST(twin.second.W.value.to_vector() == first_w, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(renamed_maps_names_and_refuses_an_absent_or_colliding_name) {
  std::map<std::string, Tensor<float>> tensors;
  tensors.emplace("weight", Tensor<float>(Shape{2}, {1, 2}));
  tensors.emplace("bias", Tensor<float>(Shape{1}, {3}));
  const auto out = nn::renamed(tensors, {{"weight", "W"}});
  BOOST_TEST(out.size() == 2u);
  BOOST_TEST(out.at("W").at({1}) == 2.0f);
  BOOST_TEST(out.at("bias").at({0}) == 3.0f);
  BOOST_CHECK_EXCEPTION(nn::renamed(tensors, {{"weights", "W"}}), std::invalid_argument,
                        message_has({"no tensor named \"weights\"", "left: bias, weight"}));
  BOOST_CHECK_EXCEPTION(nn::renamed(tensors, {{"weight", "W"}, {"bias", "W"}}), std::invalid_argument,
                        message_has({"two tensors renamed to \"W\""}));
  BOOST_CHECK_EXCEPTION(nn::renamed(tensors, {{"weight", "bias"}}), std::invalid_argument,
                        message_has({"\"bias\" is both a new name and a name kept unchanged"}));
}

BOOST_AUTO_TEST_CASE(no_init_modules_are_zeros_until_loaded) {
  Rng none = Rng::no_init();
  Twin<float> blank(none);
  for (const auto& [name, p] : blank.parameters()) {
    BOOST_TEST(p->value.to_vector() == std::vector<float>(p->value.size(), 0.0f), boost::test_tools::per_element());
  }
  Twin<float> source = make_twin<float>(9);
  blank.load(source.named_tensors());
  BOOST_TEST(blank.first.W.value.to_vector() == source.first.W.value.to_vector(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(read_tensors_gives_every_tensor_of_a_checkpoint_by_name) {
  const fs::path path = fs::temp_directory_path() / ("attend-read-tensors-" + std::to_string(::getpid()));
  Twin<float> source = make_twin<float>(5);
  nn::save_checkpoint<float>(path.string(), source.parameters(), {{"note", "x"}});
  const std::map<std::string, Tensor<float>> tensors = nn::read_tensors<float>(path.string());
  BOOST_TEST(tensors.size() == 4u);
  BOOST_TEST(tensors.at("second.b").to_vector() == source.second.b.value.to_vector(), boost::test_tools::per_element());
  Twin<float> target = make_twin<float>(6);
  target.load(tensors);
  BOOST_TEST(target.first.W.value.to_vector() == source.first.W.value.to_vector(), boost::test_tools::per_element());
  BOOST_CHECK_EXCEPTION(nn::read_tensors<double>(path.string()), std::runtime_error,
                        message_has({path.string(), "'first.W' has dtype F32, expected F64"}));
  fs::remove(path);
  BOOST_CHECK_EXCEPTION(nn::read_tensors<float>(path.string()), std::runtime_error, message_has({path.string()}));
}

// PyTorch's own state_dict, written by safetensors' format from Python, loaded by name into attend's GRU cell; the
// cell then computes PyTorch's h' for the same x and h.
BOOST_AUTO_TEST_CASE(a_pytorch_gru_cell_state_dict_loads_by_name) {
  const std::string path = reference_file("gru_cell.safetensors");
  // [docs:load-gru]
  // Python:  cell = torch.nn.GRUCell(4, 5)
  //          safetensors.torch.save_file(cell.state_dict(), "gru_cell.safetensors")
  Rng none = Rng::no_init();  // no weights drawn: all will be loaded
  nn::GruCell<float> cell(4, 5, none);
  cell.load(nn::renamed(nn::read_tensors<float>(path),
                        {{"weight_ih", "W_ih"}, {"weight_hh", "W_hh"}, {"bias_ih", "b_ih"}, {"bias_hh", "b_hh"}}));
  // [docs:end]
  const auto io = nn::read_tensors<float>(reference_file("gru_cell_io.safetensors"));
  Tape<float> tape;
  const Variable<float> h_next = cell(tape.constant(io.at("x")), tape.constant(io.at("h")));
  const Tensor<float>& expected = io.at("h_next");
  BOOST_TEST(attend::testing::values_are(h_next.value(), expected.shape(),
                                         std::vector<double>(expected.flat().begin(), expected.flat().end()), 1e-6));
}

BOOST_AUTO_TEST_SUITE_END()
