// Tests of the fused ops (fast/fused.cpp, recurrence.cpp): gru_cell, lstm_cell, additive_attention,
// batched_matvec, batched_vecmat, and the whole-layer recurrences gru_sequence and lstm_sequence. Each is checked equal
// to what it replaces (the composition of small ops; for a recurrence, the loop of cells with padding masks, in either
// direction) — its value and the gradient of every input, in float and double — on sizes that exercise both the
// vectorised part and the scalar tail of a row; its gradients are checked against finite differences in double with
// inputs that have negatives, values near zero and large magnitudes; wrong shapes throw naming the op and the shapes;
// an input that needs no gradient gets none and leaves the others right; and one value passed as two inputs receives
// both contributions.
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/composed.hpp"
#include "fast/fused.hpp"
#include "tests/autograd/helpers.hpp"

using namespace attend;
using namespace attend::testing;

namespace {

// lstm_cell's output layout, (2, B, H) = [h'; c'], from the composed step's two halves
template <class T>
Variable<T> stacked(const LstmState<T>& s) {
  return stack<T>({s.h, s.c}, 0);
}

std::vector<double> elements(const Tensor<double>& t) { return std::vector<double>(t.data(), t.data() + t.size()); }
template <class T>
std::vector<double> elements(const Tensor<T>& t) {
  return std::vector<double>(t.data(), t.data() + t.size());
}

template <class T>
Tensor<T> converted(const Tensor<double>& t) {
  Tensor<T> out(t.shape(), uninitialized);
  for (std::size_t i = 0; i < t.size(); ++i) out.data()[i] = static_cast<T>(t.data()[i]);
  return out;
}

// Uniform in [-2, 2), with every 5th element shrunk to near zero (×1e-3) and every 7th stretched to a large magnitude
// (×4, up to ±8, where σ and tanh saturate).
Tensor<double> mixed_tensor(const Shape& shape, std::uint64_t seed) {
  Tensor<double> t = random_tensor(shape, seed);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i % 5 == 1) t.data()[i] *= 1e-3;
    if (i % 7 == 3) t.data()[i] *= 4.0;
  }
  return t;
}

// A graph built from the input variables (leaves, or constants for the inputs that need no gradient).
template <class T>
using Build = std::function<Variable<T>(const std::vector<Variable<T>>&)>;

// The output and the gradient of every input for the seed gradient dy (fixed random, of the output's shape).
template <class T>
struct Outcome {
  Tensor<T> y;
  std::vector<Tensor<T>> grads;
};

template <class T>
Outcome<T> run(const Build<T>& f, const std::vector<Tensor<double>>& inputs, const std::vector<bool>& requires_grad) {
  Tape<T> tape;
  std::vector<Variable<T>> xs;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    xs.push_back(requires_grad[k] ? tape.leaf(converted<T>(inputs[k])) : tape.constant(converted<T>(inputs[k])));
  }
  const Variable<T> y = f(xs);
  Outcome<T> out{y.value(), {}};
  if (y.requires_grad()) tape.backward(y, converted<T>(random_tensor(y.shape(), 77)));
  for (const Variable<T>& x : xs) out.grads.push_back(x.grad());
  return out;
}

// Element tolerance of fused against composed, relative to max(1, |value|). In double a few roundings apart. In float
// the fused ops' tanh (fast/kernels.hpp, within 5e-7 relative) and the composed ops' (xsimd's, within about 1e-7)
// differ by a few units in the last place, and a derivative 1 - t² of a saturated tanh (|x| ≈ 4..8, 1 - t² ≈
// 1e-3..1e-6) turns that into up to ~1e-5 of dy·v; a wrong formula is off by far more.
template <class T>
constexpr double tight() {
  return sizeof(T) == 4 ? 1e-5 : 1e-14;
}

// fused(inputs) == composed(inputs): the value and every input's gradient (zero for inputs that need none).
template <class T>
void check_equal(const Build<T>& fused, const Build<T>& composed, const std::vector<Tensor<double>>& inputs,
                 const std::vector<bool>& requires_grad, const std::string& what) {
  const Outcome<T> a = run(fused, inputs, requires_grad);
  const Outcome<T> b = run(composed, inputs, requires_grad);
  BOOST_TEST(values_are(a.y, b.y.shape(), elements(b.y), tight<T>()), what << ": value");
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    BOOST_TEST(values_are(a.grads[k], b.grads[k].shape(), elements(b.grads[k]), tight<T>()),
               what << ": gradient of input " << k);
    if (!requires_grad[k]) {
      BOOST_TEST(values_are(a.grads[k], inputs[k].shape(), std::vector<double>(inputs[k].size(), 0.0)),
                 what << ": input " << k << " needs no gradient");
    }
  }
}

const std::vector<bool> all_want = {true, true, true};

}  // namespace

BOOST_AUTO_TEST_SUITE(fused)

// ---- gru_cell ----------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(gru_cell_equals_composed, T, float_types) {
  const Build<T> fused = [](const auto& x) { return gru_cell(x[0], x[1], x[2]); };
  const Build<T> composed = [](const auto& x) { return gru_step_composed(x[0], x[1], x[2]); };
  for (const std::size_t H : {std::size_t{5}, std::size_t{16}}) {
    const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{3, 3 * H}, 1), mixed_tensor(Shape{3, 3 * H}, 2),
                                                mixed_tensor(Shape{3, H}, 3)};
    check_equal(fused, composed, inputs, all_want, "gru_cell H=" + std::to_string(H));
    // each input without a gradient in turn
    for (std::size_t k = 0; k < 3; ++k) {
      std::vector<bool> wants = all_want;
      wants[k] = false;
      check_equal(fused, composed, inputs, wants, "gru_cell without gradient " + std::to_string(k));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(gru_cell_same_value_as_gx_and_gh, T, float_types) {
  // gh = gx: the one leaf receives both contributions
  const Build<T> fused = [](const auto& x) { return gru_cell(x[0], x[0], x[1]); };
  const Build<T> composed = [](const auto& x) { return gru_step_composed(x[0], x[0], x[1]); };
  check_equal(fused, composed, {mixed_tensor(Shape{2, 12}, 4), mixed_tensor(Shape{2, 4}, 5)}, {true, true},
              "gru_cell(g, g, h)");
}

BOOST_AUTO_TEST_CASE(gru_cell_gradcheck) {
  const GradcheckFn f = [](Tape<double>&, const Vars& x) { return gru_cell(x[0], x[1], x[2]); };
  const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{3, 15}, 6), mixed_tensor(Shape{3, 15}, 7),
                                              mixed_tensor(Shape{3, 5}, 8)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
}

BOOST_AUTO_TEST_CASE(gru_cell_shape_errors) {
  Tape<double> tape;
  const auto gx = tape.leaf(Tensor<double>(Shape{2, 9}));
  const auto h = tape.leaf(Tensor<double>(Shape{2, 3}));
  BOOST_CHECK_EXCEPTION(gru_cell(gx, tape.leaf(Tensor<double>(Shape{2, 6})), h), std::invalid_argument,
                        message_has({"gru_cell", "(2,9)", "(2,6)", "(2,3)"}));
  BOOST_CHECK_EXCEPTION(gru_cell(gx, gx, tape.leaf(Tensor<double>(Shape{2, 4}))), std::invalid_argument,
                        message_has({"gru_cell", "(2,9)", "(2,4)"}));
  BOOST_CHECK_EXCEPTION(gru_cell(gx, gx, tape.leaf(Tensor<double>(Shape{3, 3}))), std::invalid_argument,
                        message_has({"gru_cell", "(3,3)"}));
  const auto flat = tape.leaf(Tensor<double>(Shape{9}));
  BOOST_CHECK_EXCEPTION(gru_cell(flat, flat, h), std::invalid_argument, message_has({"gru_cell", "(9,)"}));
}

// ---- lstm_cell ---------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(lstm_cell_equals_composed, T, float_types) {
  const Build<T> fused = [](const auto& x) { return lstm_cell(x[0], x[1], x[2]); };
  const Build<T> composed = [](const auto& x) { return stacked(lstm_step_composed(x[0], x[1], x[2])); };
  for (const std::size_t H : {std::size_t{5}, std::size_t{16}}) {
    const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{3, 4 * H}, 11), mixed_tensor(Shape{3, 4 * H}, 12),
                                                mixed_tensor(Shape{3, H}, 13)};
    check_equal(fused, composed, inputs, all_want, "lstm_cell H=" + std::to_string(H));
    for (std::size_t k = 0; k < 3; ++k) {
      std::vector<bool> wants = all_want;
      wants[k] = false;
      check_equal(fused, composed, inputs, wants, "lstm_cell without gradient " + std::to_string(k));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(lstm_cell_gradient_of_one_half_only, T, float_types) {
  // only h' = y[0] is used (as a decoder's last step would): dy[1] is zero
  const Build<T> fused = [](const auto& x) { return select(lstm_cell(x[0], x[1], x[2]), 0, 0); };
  const Build<T> composed = [](const auto& x) { return lstm_step_composed(x[0], x[1], x[2]).h; };
  check_equal(fused, composed,
              {mixed_tensor(Shape{2, 24}, 14), mixed_tensor(Shape{2, 24}, 15), mixed_tensor(Shape{2, 6}, 16)}, all_want,
              "lstm_cell h' only");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(lstm_cell_same_value_as_gx_and_gh, T, float_types) {
  const Build<T> fused = [](const auto& x) { return lstm_cell(x[0], x[0], x[1]); };
  const Build<T> composed = [](const auto& x) { return stacked(lstm_step_composed(x[0], x[0], x[1])); };
  check_equal(fused, composed, {mixed_tensor(Shape{2, 16}, 17), mixed_tensor(Shape{2, 4}, 18)}, {true, true},
              "lstm_cell(g, g, c)");
}

BOOST_AUTO_TEST_CASE(lstm_cell_gradcheck) {
  const GradcheckFn f = [](Tape<double>&, const Vars& x) { return lstm_cell(x[0], x[1], x[2]); };
  const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{3, 20}, 19), mixed_tensor(Shape{3, 20}, 20),
                                              mixed_tensor(Shape{3, 5}, 21)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
}

BOOST_AUTO_TEST_CASE(lstm_cell_shape_errors) {
  Tape<double> tape;
  const auto gx = tape.leaf(Tensor<double>(Shape{2, 12}));
  const auto c = tape.leaf(Tensor<double>(Shape{2, 3}));
  BOOST_CHECK_EXCEPTION(lstm_cell(gx, tape.leaf(Tensor<double>(Shape{2, 9})), c), std::invalid_argument,
                        message_has({"lstm_cell", "(2,12)", "(2,9)", "(2,3)"}));
  BOOST_CHECK_EXCEPTION(lstm_cell(gx, gx, tape.leaf(Tensor<double>(Shape{2, 4}))), std::invalid_argument,
                        message_has({"lstm_cell", "(2,12)", "(2,4)"}));
  BOOST_CHECK_EXCEPTION(lstm_cell(gx, gx, tape.leaf(Tensor<double>(Shape{1, 3}))), std::invalid_argument,
                        message_has({"lstm_cell", "(1,3)"}));
}

// ---- additive_attention ------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(additive_attention_equals_composed, T, float_types) {
  const Build<T> fused = [](const auto& x) { return additive_attention(x[0], x[1], x[2]); };
  const Build<T> composed = [](const auto& x) { return additive_attention_composed(x[0], x[1], x[2]); };
  for (const std::size_t A : {std::size_t{7}, std::size_t{16}}) {
    for (const bool v_is_row : {true, false}) {
      const Shape v_shape = v_is_row ? Shape{1, A} : Shape{A};
      const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{3, A}, 31), mixed_tensor(Shape{3, 4, A}, 32),
                                                  mixed_tensor(v_shape, 33)};
      const std::string what = "additive_attention A=" + std::to_string(A) + " v " + to_string(v_shape);
      // every non-empty set of inputs that want a gradient (the backward has one loop for each)
      for (unsigned set = 1; set < 8; ++set) {
        check_equal(fused, composed, inputs, {(set & 4) != 0, (set & 2) != 0, (set & 1) != 0},
                    what + " wants " + std::to_string(set));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(additive_attention_gradcheck) {
  const GradcheckFn f = [](Tape<double>&, const Vars& x) { return additive_attention(x[0], x[1], x[2]); };
  const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{2, 6}, 34), mixed_tensor(Shape{2, 5, 6}, 35),
                                              mixed_tensor(Shape{1, 6}, 36)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
  const std::vector<Tensor<double>> flat_v = {inputs[0], inputs[1], mixed_tensor(Shape{6}, 37)};
  ATTEND_CHECK_GRADIENTS(f, flat_v);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(additive_attention_same_value_as_q_and_v, T, float_types) {
  // with B = 1, q (1,A) can also be v (1,A): both contributions reach it
  const Build<T> fused = [](const auto& x) { return additive_attention(x[0], x[1], x[0]); };
  const Build<T> composed = [](const auto& x) { return additive_attention_composed(x[0], x[1], x[0]); };
  check_equal(fused, composed, {mixed_tensor(Shape{1, 9}, 38), mixed_tensor(Shape{1, 3, 9}, 39)}, {true, true},
              "additive_attention(q, keys, q)");
}

BOOST_AUTO_TEST_CASE(additive_attention_shape_errors) {
  Tape<double> tape;
  const auto q = tape.leaf(Tensor<double>(Shape{2, 4}));
  const auto keys = tape.leaf(Tensor<double>(Shape{2, 3, 4}));
  const auto v = tape.leaf(Tensor<double>(Shape{1, 4}));
  BOOST_CHECK_EXCEPTION(additive_attention(tape.leaf(Tensor<double>(Shape{2, 5})), keys, v), std::invalid_argument,
                        message_has({"additive_attention", "(2,5)", "(2,3,4)", "(1,4)"}));
  BOOST_CHECK_EXCEPTION(additive_attention(tape.leaf(Tensor<double>(Shape{3, 4})), keys, v), std::invalid_argument,
                        message_has({"additive_attention", "(3,4)"}));
  BOOST_CHECK_EXCEPTION(additive_attention(q, keys, tape.leaf(Tensor<double>(Shape{4, 1}))), std::invalid_argument,
                        message_has({"additive_attention", "(4,1)"}));
  BOOST_CHECK_EXCEPTION(additive_attention(q, keys, tape.leaf(Tensor<double>(Shape{5}))), std::invalid_argument,
                        message_has({"additive_attention", "(5,)"}));
  BOOST_CHECK_EXCEPTION(additive_attention(q, tape.leaf(Tensor<double>(Shape{2, 4})), v), std::invalid_argument,
                        message_has({"additive_attention", "keys (2,4)"}));
}

// ---- batched_matvec and batched_vecmat ---------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(batched_matvec_equals_composed, T, float_types) {
  const Build<T> fused = [](const auto& x) { return batched_matvec(x[0], x[1]); };
  const Build<T> composed = [](const auto& x) { return batched_matvec_composed(x[0], x[1]); };
  for (const std::size_t A : {std::size_t{5}, std::size_t{19}}) {
    const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{3, 4, A}, 41), mixed_tensor(Shape{3, A}, 42)};
    const std::string what = "batched_matvec A=" + std::to_string(A);
    check_equal(fused, composed, inputs, {true, true}, what);
    check_equal(fused, composed, inputs, {false, true}, what + " M constant");
    check_equal(fused, composed, inputs, {true, false}, what + " q constant");
  }
}

BOOST_AUTO_TEST_CASE(batched_matvec_gradcheck) {
  const GradcheckFn f = [](Tape<double>&, const Vars& x) { return batched_matvec(x[0], x[1]); };
  const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{2, 5, 11}, 43), mixed_tensor(Shape{2, 11}, 44)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
}

BOOST_AUTO_TEST_CASE(batched_matvec_shape_errors) {
  Tape<double> tape;
  const auto M = tape.leaf(Tensor<double>(Shape{2, 3, 4}));
  BOOST_CHECK_EXCEPTION(batched_matvec(M, tape.leaf(Tensor<double>(Shape{2, 3}))), std::invalid_argument,
                        message_has({"batched_matvec", "(2,3,4)", "(2,3)"}));
  BOOST_CHECK_EXCEPTION(batched_matvec(M, tape.leaf(Tensor<double>(Shape{1, 4}))), std::invalid_argument,
                        message_has({"batched_matvec", "(1,4)"}));
  BOOST_CHECK_EXCEPTION(batched_matvec(tape.leaf(Tensor<double>(Shape{3, 4})), tape.leaf(Tensor<double>(Shape{3, 4}))),
                        std::invalid_argument, message_has({"batched_matvec", "M (3,4)"}));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(batched_vecmat_equals_composed, T, float_types) {
  const Build<T> fused = [](const auto& x) { return batched_vecmat(x[0], x[1]); };
  const Build<T> composed = [](const auto& x) { return batched_vecmat_composed(x[0], x[1]); };
  for (const std::size_t A : {std::size_t{5}, std::size_t{19}}) {
    const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{3, 4}, 45), mixed_tensor(Shape{3, 4, A}, 46)};
    const std::string what = "batched_vecmat A=" + std::to_string(A);
    check_equal(fused, composed, inputs, {true, true}, what);
    check_equal(fused, composed, inputs, {false, true}, what + " w constant");
    check_equal(fused, composed, inputs, {true, false}, what + " M constant");
  }
}

BOOST_AUTO_TEST_CASE(batched_vecmat_gradcheck) {
  const GradcheckFn f = [](Tape<double>&, const Vars& x) { return batched_vecmat(x[0], x[1]); };
  const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{2, 5}, 47), mixed_tensor(Shape{2, 5, 11}, 48)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
}

BOOST_AUTO_TEST_CASE(batched_vecmat_shape_errors) {
  Tape<double> tape;
  const auto M = tape.leaf(Tensor<double>(Shape{2, 3, 4}));
  BOOST_CHECK_EXCEPTION(batched_vecmat(tape.leaf(Tensor<double>(Shape{2, 4})), M), std::invalid_argument,
                        message_has({"batched_vecmat", "(2,4)", "(2,3,4)"}));
  BOOST_CHECK_EXCEPTION(batched_vecmat(tape.leaf(Tensor<double>(Shape{3, 3})), M), std::invalid_argument,
                        message_has({"batched_vecmat", "(3,3)"}));
  BOOST_CHECK_EXCEPTION(batched_vecmat(tape.leaf(Tensor<double>(Shape{2, 3})), tape.leaf(Tensor<double>(Shape{2, 3}))),
                        std::invalid_argument, message_has({"batched_vecmat", "M (2,3)"}));
}

BOOST_AUTO_TEST_CASE(attention_step_from_fused_ops_gradcheck) {
  // the ops together as an attention step uses them: e = additive energies, α = softmax(e), c = Σ_i α_i h_i
  const GradcheckFn f = [](Tape<double>&, const Vars& x) {
    return batched_vecmat(softmax(additive_attention(x[0], x[1], x[2]), 1), x[1]);
  };
  const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{2, 6}, 49), mixed_tensor(Shape{2, 4, 6}, 50),
                                              mixed_tensor(Shape{1, 6}, 51)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
}

// ---- gru_sequence and lstm_sequence ------------------------------------------------------------------------------

namespace {

// The loop of one-step ops that a fused recurrence replaces, as nn::RecurrentStack ran it before: per step the state
// product linear(h, W_hh, b_hh), the cell, and for a padded step h_t = m_t ⊙ h_new + (1 − m_t) ⊙ h_{t−1}.
template <class T>
struct Masks {
  std::vector<Variable<T>> keep, drop;  // per time step, (B, 1); empty when every step is real
};

template <class T>
Masks<T> masks_of(Tape<T>& tape, const Recurrence& r, std::size_t B, std::size_t Tn) {
  Masks<T> m;
  if (r.lengths.empty()) return m;
  for (std::size_t t = 0; t < Tn; ++t) {
    Tensor<T> keep(Shape{B, 1});
    for (std::size_t b = 0; b < B; ++b) keep.data()[b] = static_cast<std::int64_t>(t) < r.lengths[b] ? T(1) : T(0);
    Tensor<T> drop(Shape{B, 1});
    for (std::size_t b = 0; b < B; ++b) drop.data()[b] = T(1) - keep.data()[b];
    m.keep.push_back(tape.constant(std::move(keep)));
    m.drop.push_back(tape.constant(std::move(drop)));
  }
  return m;
}

template <class T>
Variable<T> gru_loop(const Variable<T>& gx, const Variable<T>& W, const Variable<T>& b, const Variable<T>& h0,
                     const Recurrence& r) {
  const std::size_t B = gx.shape()[0], Tn = gx.shape()[1];
  const Masks<T> m = masks_of(gx.tape(), r, B, Tn);
  std::vector<Variable<T>> hs(Tn);
  Variable<T> h = h0;
  for (std::size_t s = 0; s < Tn; ++s) {
    const std::size_t t = r.reverse ? Tn - 1 - s : s;
    const Variable<T> next = gru_cell(select(gx, 1, t), linear(h, W, b), h);
    h = m.keep.empty() ? next : m.keep[t] * next + m.drop[t] * h;
    hs[t] = h;
  }
  return stack(hs, 1);
}

template <class T>
Variable<T> lstm_loop(const Variable<T>& gx, const Variable<T>& W, const Variable<T>& b, const Variable<T>& h0,
                      const Variable<T>& c0, const Recurrence& r) {
  const std::size_t B = gx.shape()[0], Tn = gx.shape()[1];
  const Masks<T> m = masks_of(gx.tape(), r, B, Tn);
  std::vector<Variable<T>> hs(Tn), cs(Tn);
  Variable<T> h = h0, c = c0;
  for (std::size_t s = 0; s < Tn; ++s) {
    const std::size_t t = r.reverse ? Tn - 1 - s : s;
    const Variable<T> hc = lstm_cell(select(gx, 1, t), linear(h, W, b), c);
    const Variable<T> h_new = select(hc, 0, 0), c_new = select(hc, 0, 1);
    h = m.keep.empty() ? h_new : m.keep[t] * h_new + m.drop[t] * h;
    c = m.keep.empty() ? c_new : m.keep[t] * c_new + m.drop[t] * c;
    hs[t] = h;
    cs[t] = c;
  }
  return stack<T>({stack(hs, 1), stack(cs, 1)}, 0);
}

// Batches of 4 sequences of 5 steps: all real; ragged with a row of every step and a row of none; each direction.
std::vector<Recurrence> recurrences() {
  return {Recurrence{{}, false}, Recurrence{{}, true}, Recurrence{{5, 2, 0, 3}, false}, Recurrence{{5, 2, 0, 3}, true}};
}

std::string describe(const Recurrence& r) {
  std::string s = r.reverse ? "reverse" : "forward";
  for (const std::int64_t len : r.lengths) s += " " + std::to_string(len);
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(gru_sequence_equals_loop_of_cells, T, float_types) {
  for (const Recurrence& r : recurrences()) {
    const Build<T> fused = [&](const auto& x) { return gru_sequence(x[0], x[1], x[2], x[3], r); };
    const Build<T> loop = [&](const auto& x) { return gru_loop(x[0], x[1], x[2], x[3], r); };
    // H = 6: rows of 18 and 24 gate values, a vectorised part and a tail
    const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{4, 5, 18}, 60),
                                                random_tensor(Shape{18, 6}, 61, -0.6, 0.6),
                                                random_tensor(Shape{18}, 62), mixed_tensor(Shape{4, 6}, 63)};
    check_equal(fused, loop, inputs, {true, true, true, true}, "gru_sequence " + describe(r));
    for (std::size_t k = 0; k < 4; ++k) {
      std::vector<bool> wants(4, true);
      wants[k] = false;
      check_equal(fused, loop, inputs, wants, "gru_sequence without gradient " + std::to_string(k));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(lstm_sequence_equals_loop_of_cells, T, float_types) {
  for (const Recurrence& r : recurrences()) {
    const Build<T> fused = [&](const auto& x) { return lstm_sequence(x[0], x[1], x[2], x[3], x[4], r); };
    const Build<T> loop = [&](const auto& x) { return lstm_loop(x[0], x[1], x[2], x[3], x[4], r); };
    const std::vector<Tensor<double>> inputs = {
        mixed_tensor(Shape{4, 5, 24}, 64), random_tensor(Shape{24, 6}, 65, -0.6, 0.6), random_tensor(Shape{24}, 66),
        mixed_tensor(Shape{4, 6}, 67), mixed_tensor(Shape{4, 6}, 68)};
    check_equal(fused, loop, inputs, {true, true, true, true, true}, "lstm_sequence " + describe(r));
    for (std::size_t k = 0; k < 5; ++k) {
      std::vector<bool> wants(5, true);
      wants[k] = false;
      check_equal(fused, loop, inputs, wants, "lstm_sequence without gradient " + std::to_string(k));
    }
  }
}

BOOST_AUTO_TEST_CASE(gru_sequence_gradcheck) {
  for (const Recurrence& r : recurrences()) {
    const GradcheckFn f = [&](Tape<double>&, const Vars& x) { return gru_sequence(x[0], x[1], x[2], x[3], r); };
    const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{4, 5, 9}, 70), random_tensor(Shape{9, 3}, 71),
                                                random_tensor(Shape{9}, 72), mixed_tensor(Shape{4, 3}, 73)};
    BOOST_TEST_CONTEXT(describe(r)) { ATTEND_CHECK_GRADIENTS(f, inputs); }
  }
}

BOOST_AUTO_TEST_CASE(lstm_sequence_gradcheck) {
  for (const Recurrence& r : recurrences()) {
    const GradcheckFn f = [&](Tape<double>&, const Vars& x) { return lstm_sequence(x[0], x[1], x[2], x[3], x[4], r); };
    const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{4, 5, 12}, 74), random_tensor(Shape{12, 3}, 75),
                                                random_tensor(Shape{12}, 76), mixed_tensor(Shape{4, 3}, 77),
                                                mixed_tensor(Shape{4, 3}, 78)};
    BOOST_TEST_CONTEXT(describe(r)) { ATTEND_CHECK_GRADIENTS(f, inputs); }
  }
}

BOOST_AUTO_TEST_CASE(sequence_padded_steps_keep_the_state) {
  // lengths {2, 0}: row 0 stops changing after step 1, row 1 never leaves h0 (forward), and backward a row of length
  // 0 passes every step's output gradient straight to h0
  Tape<double> tape;
  const auto gx = tape.leaf(mixed_tensor(Shape{2, 4, 9}, 80));
  const auto W = tape.leaf(random_tensor(Shape{9, 3}, 81));
  const auto b = tape.leaf(random_tensor(Shape{9}, 82));
  const auto h0 = tape.leaf(mixed_tensor(Shape{2, 3}, 83));
  const Variable<double> y = gru_sequence(gx, W, b, h0, Recurrence{{2, 0}, false});
  for (std::size_t t = 2; t < 4; ++t)
    for (std::size_t k = 0; k < 3; ++k) BOOST_TEST(y.value().data()[t * 3 + k] == y.value().data()[1 * 3 + k]);
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t k = 0; k < 3; ++k) BOOST_TEST(y.value().data()[(4 + t) * 3 + k] == h0.value().data()[3 + k]);
  tape.backward(sum(y));
  for (std::size_t k = 0; k < 3; ++k) BOOST_TEST(h0.grad().data()[3 + k] == 4.0);
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t g = 0; g < 9; ++g) BOOST_TEST(gx.grad().data()[(4 + t) * 9 + g] == 0.0);
}

BOOST_AUTO_TEST_CASE(sequence_errors) {
  Tape<double> tape;
  const auto gx = tape.leaf(Tensor<double>(Shape{2, 5, 12}));
  const auto W = tape.leaf(Tensor<double>(Shape{12, 3}));
  const auto b = tape.leaf(Tensor<double>(Shape{12}));
  const auto h = tape.leaf(Tensor<double>(Shape{2, 3}));
  // a GRU has 3 gates: (B,T,12) with W_hh (12,3) is an LSTM's shape
  BOOST_CHECK_EXCEPTION(gru_sequence(gx, W, b, h), std::invalid_argument,
                        message_has({"gru_sequence", "(2,5,12)", "(12,3)", "(B,T,3H)"}));
  BOOST_CHECK_EXCEPTION(lstm_sequence(gx, W, b, h, tape.leaf(Tensor<double>(Shape{3, 3}))), std::invalid_argument,
                        message_has({"lstm_sequence", "(3,3)", "states (B,H)"}));
  BOOST_CHECK_EXCEPTION(lstm_sequence(gx, W, tape.leaf(Tensor<double>(Shape{9})), h, h), std::invalid_argument,
                        message_has({"lstm_sequence", "b_hh (9,)"}));
  BOOST_CHECK_EXCEPTION(lstm_sequence(gx, W, b, h, h, Recurrence{{5}, false}), std::invalid_argument,
                        message_has({"lstm_sequence", "1 lengths for a batch of 2"}));
  BOOST_CHECK_EXCEPTION(lstm_sequence(gx, W, b, h, h, Recurrence{{5, 6}, false}), std::invalid_argument,
                        message_has({"lstm_sequence", "lengths[1] = 6", "[0, 5]"}));
  BOOST_CHECK_EXCEPTION(lstm_sequence(gx, W, b, h, h, Recurrence{{-1, 2}, true}), std::invalid_argument,
                        message_has({"lstm_sequence", "lengths[0] = -1"}));
}

// One step: gru_step / lstm_step on gx (B, G·H) equal the sequence ops over T = 1 (value and every gradient), pass the
// gradient check, and name every shape when one does not fit; hidden_and_cell splits both LSTM outputs.
BOOST_AUTO_TEST_CASE_TEMPLATE(one_step_equals_the_sequence_over_one_step, T, float_types) {
  const std::int64_t B = 4, H = 6;
  const Build<T> gru_one = [&](const auto& x) { return gru_step(x[0], x[1], x[2], x[3]); };
  const Build<T> gru_seq = [&](const auto& x) {
    return reshape(gru_sequence(reshape(x[0], {B, 1, 3 * H}), x[1], x[2], x[3]), {B, H});
  };
  const std::vector<Tensor<double>> gru_inputs = {mixed_tensor(Shape{4, 18}, 90), random_tensor(Shape{18, 6}, 91),
                                                  random_tensor(Shape{18}, 92), mixed_tensor(Shape{4, 6}, 93)};
  check_equal(gru_one, gru_seq, gru_inputs, {true, true, true, true}, "gru_step");
  const std::vector<Tensor<double>> lstm_inputs = {mixed_tensor(Shape{4, 24}, 94), random_tensor(Shape{24, 6}, 95),
                                                   random_tensor(Shape{24}, 96), mixed_tensor(Shape{4, 6}, 97),
                                                   mixed_tensor(Shape{4, 6}, 98)};
  for (const std::size_t half : {0, 1}) {
    const Build<T> lstm_one = [&](const auto& x) {
      const LstmState<T> s = lstm_step(x[0], x[1], x[2], x[3], x[4]);
      return half == 0 ? s.h : s.c;
    };
    const Build<T> lstm_seq = [&](const auto& x) {
      const LstmState<T> s = hidden_and_cell(lstm_sequence(reshape(x[0], {B, 1, 4 * H}), x[1], x[2], x[3], x[4]));
      return reshape(half == 0 ? s.h : s.c, {B, H});
    };
    check_equal(lstm_one, lstm_seq, lstm_inputs, {true, true, true, true, true},
                half == 0 ? "lstm_step h" : "lstm_step c");
  }
}

BOOST_AUTO_TEST_CASE(one_step_gradcheck) {
  const GradcheckFn gru = [](Tape<double>&, const Vars& x) { return gru_step(x[0], x[1], x[2], x[3]); };
  const std::vector<Tensor<double>> gru_inputs = {mixed_tensor(Shape{3, 9}, 100), random_tensor(Shape{9, 3}, 101),
                                                  random_tensor(Shape{9}, 102), mixed_tensor(Shape{3, 3}, 103)};
  ATTEND_CHECK_GRADIENTS(gru, gru_inputs);
  // both halves at once: a loss that weighs h' and c' differently
  const GradcheckFn lstm = [](Tape<double>&, const Vars& x) {
    const LstmState<double> s = lstm_step(x[0], x[1], x[2], x[3], x[4]);
    return s.h + s.c * 0.5;
  };
  const std::vector<Tensor<double>> lstm_inputs = {mixed_tensor(Shape{3, 12}, 104), random_tensor(Shape{12, 3}, 105),
                                                   random_tensor(Shape{12}, 106), mixed_tensor(Shape{3, 3}, 107),
                                                   mixed_tensor(Shape{3, 3}, 108)};
  ATTEND_CHECK_GRADIENTS(lstm, lstm_inputs);
}

BOOST_AUTO_TEST_CASE(one_step_errors) {
  Tape<double> tape;
  const auto gx = tape.leaf(Tensor<double>(Shape{2, 12}));
  const auto W = tape.leaf(Tensor<double>(Shape{12, 3}));
  const auto b = tape.leaf(Tensor<double>(Shape{12}));
  const auto h = tape.leaf(Tensor<double>(Shape{2, 3}));
  BOOST_CHECK_EXCEPTION(gru_step(gx, W, b, h), std::invalid_argument,
                        message_has({"gru_step", "gx (2,12)", "W_hh (12,3)", "expected gx (B,3H)"}));
  // the sequence's (B, 1, G·H) is not a step's gx
  BOOST_CHECK_EXCEPTION(lstm_step(tape.leaf(Tensor<double>(Shape{2, 1, 12})), W, b, h, h), std::invalid_argument,
                        message_has({"lstm_step", "gx (2,1,12)", "expected gx (B,4H)"}));
  BOOST_CHECK_EXCEPTION(lstm_step(gx, W, b, h, tape.leaf(Tensor<double>(Shape{2, 4}))), std::invalid_argument,
                        message_has({"lstm_step", "(2,4)", "states (B,H)"}));
  const LstmState<double> s = hidden_and_cell(tape.leaf(Tensor<double>(Shape{2, 4, 5, 3})));
  BOOST_TEST(s.h.shape() == (Shape{4, 5, 3}));
  BOOST_TEST(s.c.shape() == (Shape{4, 5, 3}));
  BOOST_CHECK_EXCEPTION(hidden_and_cell(h), std::invalid_argument,
                        message_has({"hidden_and_cell", "(2,3)", "(2,B,H)", "(2,B,T,H)"}));
}

BOOST_AUTO_TEST_SUITE_END()
