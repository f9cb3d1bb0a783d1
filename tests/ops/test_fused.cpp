// Tests of the fused ops of ops/fused.cpp and recurrence.cpp beyond their equality with the compositions they replace
// (that is test_equals.cpp, for every fused op): gru_cell, lstm_cell, gru_step, lstm_step, additive_attention,
// batched_matvec, batched_vecmat, gru_sequence and lstm_sequence. Their gradients are checked against finite
// differences in double with inputs that have negatives, values near zero and large magnitudes; padded steps keep
// the state exactly; wrong shapes throw naming the op and the shapes.
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/fused.hpp"
#include "tests/ops/inputs.hpp"

using namespace attend;
using namespace attend::testing;

BOOST_AUTO_TEST_SUITE(fused)

// ---- gru_cell ----------------------------------------------------------------------------------------------------

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

BOOST_AUTO_TEST_CASE(additive_attention_gradcheck) {
  const GradcheckFn f = [](Tape<double>&, const Vars& x) { return additive_attention(x[0], x[1], x[2]); };
  const std::vector<Tensor<double>> inputs = {mixed_tensor(Shape{2, 6}, 34), mixed_tensor(Shape{2, 5, 6}, 35),
                                              mixed_tensor(Shape{1, 6}, 36)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
  const std::vector<Tensor<double>> flat_v = {inputs[0], inputs[1], mixed_tensor(Shape{6}, 37)};
  ATTEND_CHECK_GRADIENTS(f, flat_v);
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
