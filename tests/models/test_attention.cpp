// Score functions, attention weights and the context vector: each equation against a loop written out by hand, masks,
// errors, and the finite-difference gradient check of every score (models/attention.hpp).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <memory>
#include <type_traits>

#include "autograd/helpers.hpp"
#include "models/attention.hpp"
#include "nn/checkpoint.hpp"
#include "nn/module.hpp"

using namespace attend;
using namespace attend::models;
using attend::testing::message_has;
using attend::testing::random_tensor;

namespace {

constexpr std::size_t B = 2, S = 4, Q = 3, A_h = 5, A = 6;

// v(row, col) of a 2-D parameter
double at(const Parameter<double>& p, std::size_t r, std::size_t c) {
  return p.value.data()[r * p.value.shape()[1] + c];
}

// the score e_bi written as the paper's formula, one term at a time
double expected_score(Score<double>& score, const Tensor<double>& q, const Tensor<double>& h, std::size_t b,
                      std::size_t i) {
  auto query = [&](std::size_t k) { return q.data()[b * Q + k]; };
  auto annotation = [&](std::size_t k) { return h.data()[(b * S + i) * A_h + k]; };
  double e = 0;
  if (auto* additive = dynamic_cast<AdditiveScore<double>*>(&score)) {
    // e_ij = v_aᵀ tanh(W_a s + U_a h_i)
    for (std::size_t a = 0; a < A; ++a) {
      double pre = 0;
      for (std::size_t k = 0; k < Q; ++k) pre += at(additive->W_a, a, k) * query(k);
      for (std::size_t k = 0; k < A_h; ++k) pre += at(additive->U_a, a, k) * annotation(k);
      e += at(additive->v_a, 0, a) * std::tanh(pre);
    }
  } else if (auto* general = dynamic_cast<GeneralScore<double>*>(&score)) {
    // e_ij = sᵀ W_a h_i
    for (std::size_t r = 0; r < Q; ++r) {
      for (std::size_t k = 0; k < A_h; ++k) e += query(r) * at(general->W_a, r, k) * annotation(k);
    }
  } else if (auto* concat = dynamic_cast<ConcatScore<double>*>(&score)) {
    // e_ij = v_aᵀ tanh(W_a [s; h_i])
    for (std::size_t a = 0; a < A; ++a) {
      double pre = 0;
      for (std::size_t k = 0; k < Q; ++k) pre += at(concat->W_a, a, k) * query(k);
      for (std::size_t k = 0; k < A_h; ++k) pre += at(concat->W_a, a, Q + k) * annotation(k);
      e += at(concat->v_a, 0, a) * std::tanh(pre);
    }
  } else {
    // dot: e_ij = sᵀ h_i (Q = A_h)
    for (std::size_t k = 0; k < A_h; ++k) e += q.data()[b * A_h + k] * annotation(k);
  }
  return e;
}

std::unique_ptr<Score<double>> score_of(ScoreKind kind, std::uint64_t seed) {
  Rng rng(seed);
  return make_score<double>(kind, kind == ScoreKind::dot ? A_h : Q, A_h, A, rng);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(attention)

BOOST_AUTO_TEST_CASE(each_score_computes_its_equation) {
  for (ScoreKind kind : {ScoreKind::additive, ScoreKind::dot, ScoreKind::general, ScoreKind::concat}) {
    BOOST_TEST_CONTEXT("score " << to_string(kind)) {
      auto score = score_of(kind, 1);
      const std::size_t query_size = kind == ScoreKind::dot ? A_h : Q;
      const Tensor<double> q = random_tensor({B, query_size}, 2);
      const Tensor<double> h = random_tensor({B, S, A_h}, 3);
      Tape<double> tape;
      Variable<double> e = score->score(tape.constant(q), score->keys(tape.constant(h)));
      BOOST_TEST(e.shape() == (Shape{B, S}));
      for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t i = 0; i < S; ++i) {
          BOOST_TEST(e.value().data()[b * S + i] == expected_score(*score, q, h, b, i),
                     boost::test_tools::tolerance(1e-12));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(score_gradients_match_finite_differences) {
  for (ScoreKind kind : {ScoreKind::additive, ScoreKind::dot, ScoreKind::general, ScoreKind::concat}) {
    BOOST_TEST_CONTEXT("score " << to_string(kind)) {
      auto score = score_of(kind, 4);
      const std::size_t query_size = kind == ScoreKind::dot ? A_h : Q;
      GradcheckFn f = [&](Tape<double>&, const std::vector<Variable<double>>& in) {
        return score->score(in[0], score->keys(in[1]));
      };
      const GradcheckResult result =
          nn::gradcheck_module(*score, f, {random_tensor({B, query_size}, 5), random_tensor({B, S, A_h}, 6)});
      BOOST_TEST(result.passed, result.message);
      BOOST_TEST(result.checked == B * query_size + B * S * A_h + score->parameter_count());
    }
  }
}

BOOST_AUTO_TEST_CASE(parameter_names_follow_the_equations) {
  auto names = [](Score<double>& score) {
    std::vector<std::string> result;
    for (auto& [name, p] : score.parameters()) result.push_back(name);
    return result;
  };
  BOOST_TEST(names(*score_of(ScoreKind::additive, 1)) == (std::vector<std::string>{"W_a", "U_a", "v_a"}),
             boost::test_tools::per_element());
  BOOST_TEST(names(*score_of(ScoreKind::general, 1)) == (std::vector<std::string>{"W_a"}),
             boost::test_tools::per_element());
  BOOST_TEST(names(*score_of(ScoreKind::concat, 1)) == (std::vector<std::string>{"W_a", "v_a"}),
             boost::test_tools::per_element());
  BOOST_TEST(names(*score_of(ScoreKind::dot, 1)).empty());
  // PyTorch's Linear layouts (out, in)
  auto concat = score_of(ScoreKind::concat, 1);
  BOOST_TEST(concat->parameters()[0].second->value.shape() == (Shape{A, Q + A_h}));
  BOOST_TEST(concat->parameters()[1].second->value.shape() == (Shape{1, A}));
}

BOOST_AUTO_TEST_CASE(weights_sum_to_one_and_padding_gets_exactly_zero) {
  Tape<double> tape;
  const Mask mask = source_mask({4, 1}, S);  // the second row keeps one position only
  BOOST_TEST(std::vector<int>(mask.data(), mask.data() + B * S) == (std::vector<int>{1, 1, 1, 1, 1, 0, 0, 0}),
             boost::test_tools::per_element());
  Variable<double> e = tape.leaf(random_tensor({B, S}, 7, -30.0, 30.0));
  Variable<double> alpha = attention_weights(e, mask);
  for (std::size_t b = 0; b < B; ++b) {
    double total = 0;
    for (std::size_t i = 0; i < S; ++i) total += alpha.value().data()[b * S + i];
    BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-12));
  }
  BOOST_TEST(alpha.value().data()[S] == 1.0);
  for (std::size_t i = 1; i < S; ++i) BOOST_TEST(alpha.value().data()[S + i] == 0.0);
  // no gradient reaches a padded position's score
  Variable<double> loss = sum(alpha * tape.constant(random_tensor({B, S}, 8)));
  tape.backward(loss);
  for (std::size_t i = 1; i < S; ++i) BOOST_TEST(e.grad().data()[S + i] == 0.0);
}

BOOST_AUTO_TEST_CASE(context_is_the_weighted_sum_of_annotations) {
  Tape<double> tape;
  const Tensor<double> h = random_tensor({B, S, A_h}, 9);
  Variable<double> alpha = attention_weights(tape.constant(random_tensor({B, S}, 10)), source_mask({3, 4}, S));
  Variable<double> c = context(alpha, tape.constant(h));
  BOOST_TEST(c.shape() == (Shape{B, A_h}));
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t k = 0; k < A_h; ++k) {
      // c_j = Σ_i α_ij h_i
      double expected = 0;
      for (std::size_t i = 0; i < S; ++i) expected += alpha.value().data()[b * S + i] * h.data()[(b * S + i) * A_h + k];
      BOOST_TEST(c.value().data()[b * A_h + k] == expected, boost::test_tools::tolerance(1e-12));
    }
  }
}

BOOST_AUTO_TEST_CASE(weights_and_context_gradients_match_finite_differences) {
  const Mask mask = source_mask({2, 4}, S);
  GradcheckFn f = [&](Tape<double>&, const std::vector<Variable<double>>& in) {
    return context(attention_weights(in[0], mask), in[1]);
  };
  const GradcheckResult result = gradcheck(f, {random_tensor({B, S}, 11), random_tensor({B, S, A_h}, 12)});
  BOOST_TEST(result.passed, result.message);
}

// The misuse an outside user hit: raw annotations where the keys belong. With Q = H_a = A every shape fits, so before
// Keys existed the general score silently computed the dot score and the additive score skipped U_a. Now a Variable
// does not convert to Keys (checked at compile time), score(q, h) with annotations computes the keys itself, and keys
// of another kind of score, or empty keys, throw naming the score and the shapes.
static_assert(!std::is_convertible_v<Variable<double>, Keys<double>>, "annotations must not pass for keys");
static_assert(!std::is_convertible_v<Keys<double>, Variable<double>>, "keys are not a plain Variable");

BOOST_AUTO_TEST_CASE(annotations_never_pass_for_keys_for_any_score_kind) {
  constexpr std::size_t N = 4;  // query, annotation and attention sizes all equal: every shape fits every slot
  const std::vector<ScoreKind> kinds{ScoreKind::additive, ScoreKind::dot, ScoreKind::general, ScoreKind::concat};
  for (ScoreKind kind : kinds) {
    BOOST_TEST_CONTEXT("score " << to_string(kind)) {
      Rng rng(21);
      auto score = make_score<double>(kind, N, N, N, rng);
      Tape<double> tape;
      const Variable<double> q = tape.constant(random_tensor({B, N}, 22));
      const Variable<double> h = tape.constant(random_tensor({B, S, N}, 23));
      // the one-call form computes the keys: the same e as keys() then score()
      const Variable<double> e = score->score(q, h);
      const Variable<double> e_two_calls = score->score(q, score->keys(h));
      for (std::size_t k = 0; k < B * S; ++k) BOOST_TEST(e.value().data()[k] == e_two_calls.value().data()[k]);
      // and it is not the plain dot score s·h_i unless the kind is dot: W_a (or U_a) took part
      const Variable<double> plain_dot = batched_matvec(h, q);
      double largest_difference = 0;
      for (std::size_t k = 0; k < B * S; ++k) {
        largest_difference = std::max(largest_difference, std::abs(e.value().data()[k] - plain_dot.value().data()[k]));
      }
      if (kind == ScoreKind::dot) {
        BOOST_TEST(largest_difference == 0.0);
      } else {
        BOOST_TEST(largest_difference > 1e-3);
      }
      // every parameter gets a gradient through the one-call form
      tape.backward(sum(e));
      for (const auto& [name, p] : score->parameters()) {
        BOOST_TEST_CONTEXT("parameter " << name) {
          double norm = 0;
          for (std::size_t k = 0; k < p->grad.size(); ++k) norm += std::abs(p->grad.data()[k]);
          BOOST_TEST(norm > 0.0);
        }
      }
      // keys made by any other kind of score are refused, naming both kinds and the keys' shape
      for (ScoreKind other : kinds) {
        if (other == kind) continue;
        Rng other_rng(24);
        auto other_score = make_score<double>(other, N, N, N, other_rng);
        BOOST_CHECK_EXCEPTION(
            score->score(q, other_score->keys(h)), std::invalid_argument,
            message_has({to_string(kind) + " score",
                         (other == ScoreKind::additive ? "made by an " : "made by a ") + to_string(other) + " score",
                         "(2,4,4)"}));
      }
      // keys made by no score at all (a default-constructed Keys)
      BOOST_CHECK_EXCEPTION(score->score(q, Keys<double>()), std::invalid_argument,
                            message_has({to_string(kind) + " score", "keys are empty"}));
    }
  }
}

BOOST_AUTO_TEST_CASE(mismatched_shapes_name_the_problem) {
  auto additive = score_of(ScoreKind::additive, 1);
  Tape<double> tape;
  Keys<double> keys = additive->keys(tape.constant(random_tensor({B, S, A_h}, 1)));
  BOOST_CHECK_EXCEPTION(additive->score(tape.constant(random_tensor({B, Q + 1}, 2)), keys), std::invalid_argument,
                        message_has({"additive score", "(2,4)", "(2,4,6)"}));
  BOOST_CHECK_EXCEPTION(additive->keys(tape.constant(random_tensor({B, S, A_h + 1}, 1))), std::invalid_argument,
                        message_has({"additive score", "annotations (2,4,6)", "(batch, S, 5)"}));
  BOOST_CHECK_EXCEPTION(attention_weights(tape.constant(random_tensor({B, S}, 3)), source_mask({1}, S)),
                        std::invalid_argument, message_has({"attention_weights", "(2,4)", "(1,4)"}));
  BOOST_CHECK_EXCEPTION(context(tape.constant(random_tensor({B, S}, 3)), tape.constant(random_tensor({B, 3, 2}, 4))),
                        std::invalid_argument, message_has({"context", "(2,4)", "(2,3,2)"}));
  Rng rng(1);
  BOOST_CHECK_EXCEPTION(make_score<double>(ScoreKind::dot, 4, 8, 4, rng), std::invalid_argument,
                        message_has({"dot score", "4", "8", "general"}));
  BOOST_CHECK_EXCEPTION(score_kind_from_string("cosine"), std::invalid_argument, message_has({"cosine", "additive"}));
  BOOST_TEST(to_string(score_kind_from_string("concat")) == "concat");
}

// d2l.ai's AdditiveAttention, its state_dict saved by PyTorch (tests/reference/make_state_dict_reference.py), loaded by
// name into attend's AdditiveScore; the scores then equal PyTorch's.
BOOST_AUTO_TEST_CASE(a_pytorch_additive_attention_state_dict_loads_by_name) {
  const std::string folder = std::string(ATTEND_SOURCE_DIR) + "/tests/reference/data/state_dicts/";
  const std::string path = folder + "additive.safetensors";
  // [docs:load-additive]
  // Python (d2l.ai): W_k = Linear(4, 6, bias=False), W_q = Linear(5, 6, bias=False), w_v = Linear(6, 1, bias=False)
  //                  safetensors.torch.save_file(attention.state_dict(), "additive.safetensors")
  Rng none = Rng::no_init();
  AdditiveScore<float> score(/*query_size=*/5, /*annotation_size=*/4, /*attention_size=*/6, none);
  score.load(nn::renamed(nn::read_tensors<float>(path), {{"W_q.weight", "W_a"},     // (6, 5): W_a s_{j-1}
                                                         {"W_k.weight", "U_a"},     // (6, 4): U_a h_i
                                                         {"w_v.weight", "v_a"}}));  // (1, 6): v_a, a row
  // [docs:end]
  const auto io = nn::read_tensors<float>(folder + "additive_io.safetensors");
  Tape<float> tape;
  const Variable<float> e = score.score(tape.constant(io.at("query")), tape.constant(io.at("keys")));
  const Tensor<float>& expected = io.at("e");
  BOOST_TEST(attend::testing::values_are(e.value(), expected.shape(),
                                         std::vector<double>(expected.flat().begin(), expected.flat().end()), 1e-6));
}

BOOST_AUTO_TEST_SUITE_END()
