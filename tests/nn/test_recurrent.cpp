// The recurrent layers (nn/recurrent.hpp): gradient checks in double for every cell and for the stack and encoder over
// ragged batches; values and gradients against PyTorch (fixtures written by tests/reference/make_layer_reference.py);
// ragged batches against the same sequences run alone; the GRU and LSTM steps (fused ops) equal the same steps
// composed from small ops (gru_step_composed, lstm_step_composed); padding, dropout and error cases. The nested suite
// layer_reference holds the PyTorch reference checks of the layers the encoder is built from (Linear, Embedding,
// cross-entropy with padding).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "autograd/autograd.hpp"
#include "autograd/helpers.hpp"
#include "nn/recurrent.hpp"
#include "nn/reference.hpp"
#include "ops/composed.hpp"

namespace {

using namespace attend;
using namespace attend::nn;
using attend::testing::load_reference;
using attend::testing::load_reference_ids;
using attend::testing::message_has;
using attend::testing::random_tensor;

const CellKind all_kinds[] = {CellKind::rnn_tanh, CellKind::rnn_relu, CellKind::gru, CellKind::lstm};

// float32 comparisons against PyTorch: |actual - expected| ≤ atol + rtol·|expected| element by element.
constexpr double reference_atol = 1e-6, reference_rtol = 1e-5;

// Whether `actual` has expected's shape and every element is within atol + rtol·|expected|; the message names the
// worst element and both values.
template <class T, class U>
boost::test_tools::predicate_result close_to(const Tensor<T>& actual, const Tensor<U>& expected,
                                             double atol = reference_atol, double rtol = reference_rtol) {
  boost::test_tools::predicate_result result(true);
  if (actual.shape() != expected.shape()) {
    result = false;
    result.message() << "shape " << to_string(actual.shape()) << ", expected " << to_string(expected.shape());
    return result;
  }
  double worst = -1;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = static_cast<double>(actual.data()[i]), e = static_cast<double>(expected.data()[i]);
    const double difference = std::abs(a - e), allowed = atol + rtol * std::abs(e);
    if (difference <= allowed) continue;
    const double ratio = allowed > 0 ? difference / allowed : INFINITY;
    if (ratio > worst || std::isnan(ratio)) {
      worst = std::isnan(ratio) ? INFINITY : ratio;
      result = false;
      result.message().stream().str("");
      result.message() << "flat element " << i << " of " << to_string(actual.shape()) << ": got " << a << ", expected "
                       << e << " (|difference| " << std::abs(a - e) << ")";
    }
  }
  return result;
}

// Whether the two tensors are equal element by element (bit for bit, apart from the sign of 0).
template <class T>
boost::test_tools::predicate_result equal(const Tensor<T>& actual, const Tensor<T>& expected) {
  return close_to(actual, expected, 0.0, 0.0);
}

// Copies every parameter of `module` from <case>/<name>.npy, the file named like the parameter.
void load_parameters(Module<float>& module, const std::string& case_name) {
  for (const auto& [name, p] : module.parameters()) {
    Tensor<float> value = load_reference(case_name, name);
    BOOST_REQUIRE_MESSAGE(value.shape() == p->value.shape(), case_name << "/" << name << " has shape "
                                                                       << to_string(value.shape()) << ", parameter "
                                                                       << to_string(p->value.shape()));
    p->value = std::move(value);
  }
}

// Compares every parameter's gradient with <case>/grad.<name>.npy.
void check_parameter_gradients(Module<float>& module, const std::string& case_name) {
  for (const auto& [name, p] : module.parameters()) {
    BOOST_TEST_CONTEXT("gradient of " << case_name << " parameter " << name) {
      BOOST_TEST(close_to(p->grad, load_reference(case_name, "grad." + name)));
    }
  }
}

// Σ w ⊙ y: the scalar whose gradients the fixtures hold.
template <class T>
Variable<T> weighted_sum(const Variable<T>& y, const Tensor<T>& w) {
  return sum(y * y.tape().constant(w));
}

// Every output of a stack (outputs, then each h_final and c_final) flattened and joined into one vector.
template <class T>
Variable<T> joined(const RecurrentOutput<T>& out) {
  std::vector<Variable<T>> parts{reshape(out.outputs, {-1})};
  for (const auto& h : out.h_final) parts.push_back(reshape(h, {-1}));
  for (const auto& c : out.c_final) parts.push_back(reshape(c, {-1}));
  return concat(parts, 0);
}

RecurrentConfig stack_config(CellKind kind, std::size_t input_size, std::size_t hidden_size, std::size_t layers,
                             bool bidirectional, double dropout = 0.0) {
  RecurrentConfig config;
  config.cell = kind;
  config.input_size = input_size;
  config.hidden_size = hidden_size;
  config.num_layers = layers;
  config.bidirectional = bidirectional;
  config.dropout = dropout;
  return config;
}

// The first `length` steps of sequence b of a (batch, time, features) tensor: (1, length, features).
template <class T>
Tensor<T> sequence_of(const Tensor<T>& x, std::size_t b, std::size_t length) {
  const std::size_t time = x.shape()[1], features = x.shape()[2];
  Tensor<T> one(Shape{1, length, features});
  std::copy(x.data() + b * time * features, x.data() + (b * time + length) * features, one.data());
  return one;
}

// Entry b of a (batch, H) state: (1, H).
template <class T>
Tensor<T> batch_entry(const Tensor<T>& state, std::size_t b) {
  const std::size_t H = state.shape()[1];
  Tensor<T> one(Shape{1, H});
  std::copy(state.data() + b * H, state.data() + (b + 1) * H, one.data());
  return one;
}

// A double tensor converted to T.
template <class T>
Tensor<T> cast(const Tensor<double>& t) {
  Tensor<T> out(t.shape());
  std::copy(t.data(), t.data() + t.size(), out.data());
  return out;
}

double max_abs(const Tensor<double>& t) {
  double m = 0;
  for (double v : t.flat()) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(recurrent)

// ---- cells ------------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(cells_use_pytorch_layout_names_and_init) {
  Rng rng(1);
  RnnCell<float> rnn(4, 3, rng);
  GruCell<float> gru(4, 3, rng);
  LstmCell<float> lstm(4, 3, rng);
  const std::vector<std::string> names{"W_ih", "W_hh", "b_ih", "b_hh"};
  const std::size_t gates[] = {1, 3, 4};
  RecurrentCell<float>* cells[] = {&rnn, &gru, &lstm};
  for (std::size_t k = 0; k < 3; ++k) {
    RecurrentCell<float>& cell = *cells[k];
    const auto params = cell.parameters();
    BOOST_REQUIRE_EQUAL(params.size(), 4u);
    const std::size_t G = gates[k];
    const Shape shapes[] = {{3 * G, 4}, {3 * G, 3}, {3 * G}, {3 * G}};
    for (std::size_t i = 0; i < 4; ++i) {
      BOOST_TEST(params[i].first == names[i]);
      BOOST_TEST(to_string(params[i].second->value.shape()) == to_string(shapes[i]));
      // PyTorch's default: U(-1/√H, 1/√H)
      for (float v : params[i].second->value.flat()) BOOST_TEST(std::abs(v) <= 1.0f / std::sqrt(3.0f));
    }
    BOOST_TEST(cell.gate_count() == G);
    BOOST_TEST(cell.input_size() == 4u);
    BOOST_TEST(cell.hidden_size() == 3u);
    BOOST_TEST(cell.parameter_count() == G * 3 * (4 + 3 + 2));
  }
  GruCell<double> xavier(4, 3, rng, Init::xavier_uniform);
  const double bound = std::sqrt(6.0 / (4 + 9));
  BOOST_TEST(max_abs(xavier.W_ih.value) <= bound);
  BOOST_TEST(max_abs(xavier.W_ih.value) > 0.5 * bound);
  BOOST_TEST(max_abs(xavier.b_ih.value) == 0.0);
  BOOST_TEST(max_abs(xavier.b_hh.value) == 0.0);
}

BOOST_AUTO_TEST_CASE(rnn_cell_gradients) {
  for (Nonlinearity nonlinearity : {Nonlinearity::tanh, Nonlinearity::relu}) {
    Rng rng(2);
    RnnCell<double> cell(3, 2, rng, nonlinearity);
    const GradcheckFn f = [&](Tape<double>&, const attend::testing::Vars& in) { return cell(in[0], in[1]); };
    const GradcheckResult result = gradcheck_module(cell, f, {random_tensor({2, 3}, 3), random_tensor({2, 2}, 4)});
    BOOST_TEST(result.passed, result.message);
    BOOST_TEST(result.checked == 2 * 3 + 2 * 2 + cell.parameter_count());
  }
}

BOOST_AUTO_TEST_CASE(gru_cell_gradients) {
  Rng rng(5);
  GruCell<double> cell(3, 2, rng);
  const GradcheckFn f = [&](Tape<double>&, const attend::testing::Vars& in) { return cell(in[0], in[1]); };
  const GradcheckResult result = gradcheck_module(cell, f, {random_tensor({2, 3}, 6), random_tensor({2, 2}, 7)});
  BOOST_TEST(result.passed, result.message);
  BOOST_TEST(result.checked == 2 * 3 + 2 * 2 + cell.parameter_count());
}

BOOST_AUTO_TEST_CASE(lstm_cell_gradients) {
  Rng rng(8);
  LstmCell<double> cell(3, 2, rng);
  const GradcheckFn f = [&](Tape<double>&, const attend::testing::Vars& in) {
    const LstmState<double> next = cell(in[0], {in[1], in[2]});
    return concat<double>({next.h, next.c}, 1);
  };
  const GradcheckResult result =
      gradcheck_module(cell, f, {random_tensor({2, 3}, 9), random_tensor({2, 2}, 10), random_tensor({2, 2}, 11)});
  BOOST_TEST(result.passed, result.message);
  BOOST_TEST(result.checked == 2 * 3 + 2 * 2 * 2 + cell.parameter_count());
}

BOOST_AUTO_TEST_CASE(precomputed_gates_for_a_sequence_equal_gates_per_step) {
  Rng rng(12);
  GruCell<double> cell(3, 2, rng);
  Tape<double> tape;
  const Variable<double> x = tape.constant(random_tensor({2, 4, 3}, 13));  // (batch, time, in)
  const Variable<double> gx = cell.input_gates(x);                         // (batch, time, 3H), one linear
  Variable<double> h = tape.constant(random_tensor({2, 2}, 14));
  for (std::size_t t = 0; t < 4; ++t) {
    const Variable<double> x_t = select(x, 1, t);
    BOOST_TEST(equal(select(gx, 1, t).value(), cell.input_gates(x_t).value()));
    BOOST_TEST(equal(cell.step(select(gx, 1, t), h).value(), cell(x_t, h).value()));
    h = cell(x_t, h);
  }
}

// One cell step against torch.nn.RNNCell/GRUCell/LSTMCell: outputs, and the gradients of Σ w_h ⊙ h' (+ Σ w_c ⊙ c')
// with respect to the inputs and every parameter.
template <class Cell>
void check_cell_against_pytorch(Cell& cell, const std::string& case_name) {
  load_parameters(cell, case_name);
  cell.zero_grad();
  Tape<float> tape;
  const Variable<float> x = tape.leaf(load_reference(case_name, "x"));
  const Variable<float> h = tape.leaf(load_reference(case_name, "h"));
  Variable<float> loss;
  if constexpr (std::is_same_v<Cell, LstmCell<float>>) {
    const Variable<float> c = tape.leaf(load_reference(case_name, "c"));
    const LstmState<float> next = cell(x, {h, c});
    BOOST_TEST(close_to(next.h.value(), load_reference(case_name, "h_next")));
    BOOST_TEST(close_to(next.c.value(), load_reference(case_name, "c_next")));
    loss =
        weighted_sum(next.h, load_reference(case_name, "w_h")) + weighted_sum(next.c, load_reference(case_name, "w_c"));
    tape.backward(loss);
    BOOST_TEST(close_to(c.grad(), load_reference(case_name, "grad.c")));
  } else {
    const Variable<float> h_next = cell(x, h);
    BOOST_TEST(close_to(h_next.value(), load_reference(case_name, "h_next")));
    loss = weighted_sum(h_next, load_reference(case_name, "w_h"));
    tape.backward(loss);
  }
  BOOST_TEST(close_to(x.grad(), load_reference(case_name, "grad.x")));
  BOOST_TEST(close_to(h.grad(), load_reference(case_name, "grad.h")));
  check_parameter_gradients(cell, case_name);
}

BOOST_AUTO_TEST_CASE(rnn_tanh_cell_matches_pytorch) {
  Rng rng(0);
  RnnCell<float> cell(4, 5, rng, Nonlinearity::tanh);
  check_cell_against_pytorch(cell, "rnn_tanh_cell");
}

BOOST_AUTO_TEST_CASE(rnn_relu_cell_matches_pytorch) {
  Rng rng(0);
  RnnCell<float> cell(4, 5, rng, Nonlinearity::relu);
  check_cell_against_pytorch(cell, "rnn_relu_cell");
}

BOOST_AUTO_TEST_CASE(gru_cell_matches_pytorch) {
  Rng rng(0);
  GruCell<float> cell(4, 5, rng);
  check_cell_against_pytorch(cell, "gru_cell");
}

BOOST_AUTO_TEST_CASE(lstm_cell_matches_pytorch) {
  Rng rng(0);
  LstmCell<float> cell(4, 5, rng);
  check_cell_against_pytorch(cell, "lstm_cell");
}

BOOST_AUTO_TEST_CASE(cell_step_checks_shapes) {
  Rng rng(15);
  GruCell<float> gru(3, 2, rng);
  LstmCell<float> lstm(3, 2, rng);
  Tape<float> tape;
  const Variable<float> x = tape.constant(Tensor<float>(Shape{4, 3}));
  const Variable<float> h = tape.constant(Tensor<float>(Shape{4, 2}));
  // a state of one row would silently broadcast over the batch
  BOOST_CHECK_EXCEPTION(gru(x, tape.constant(Tensor<float>(Shape{1, 2}))), std::invalid_argument,
                        message_has({"GruCell", "(1,2)", "(4,6)"}));
  BOOST_CHECK_EXCEPTION(gru.step(tape.constant(Tensor<float>(Shape{4, 8})), h), std::invalid_argument,
                        message_has({"GruCell", "(4,8)"}));
  BOOST_CHECK_EXCEPTION(lstm(x, {h, tape.constant(Tensor<float>(Shape{4, 3}))}), std::invalid_argument,
                        message_has({"LstmCell", "(4,3)"}));
  BOOST_CHECK_EXCEPTION(gru(tape.constant(Tensor<float>(Shape{4, 5})), h), std::invalid_argument,
                        message_has({"linear", "(4,5)"}));
  BOOST_CHECK_EXCEPTION(GruCell<float>(3, 0, rng), std::invalid_argument, message_has({"GruCell", "hidden_size 0"}));
}

// ---- the recurrent stack and the encoder -------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(stack_gradients_over_a_ragged_batch) {
  for (CellKind kind : all_kinds) {
    BOOST_TEST_CONTEXT("cell " << to_string(kind)) {
      Rng rng(16);
      RecurrentStack<double> rnn(stack_config(kind, 3, 2, 2, true), rng);
      const std::vector<std::int64_t> lengths{2, 3, 1};
      const GradcheckFn f = [&](Tape<double>&, const attend::testing::Vars& in) {
        return joined(rnn.forward(in[0], lengths));
      };
      const GradcheckResult result = gradcheck_module(rnn, f, {random_tensor({3, 3, 3}, 17)});
      BOOST_TEST(result.passed, result.message);
      BOOST_TEST(result.checked == 3 * 3 * 3 + rnn.parameter_count());
    }
  }
}

BOOST_AUTO_TEST_CASE(encoder_gradients_over_a_ragged_batch) {
  for (CellKind kind : all_kinds) {
    BOOST_TEST_CONTEXT("cell " << to_string(kind)) {
      Rng rng(18);
      EncoderConfig config;
      config.vocab_size = 5;
      config.embedding_dim = 3;
      config.padding_id = 0;
      config.rnn = stack_config(kind, 0, 2, 2, true);
      Encoder<double> encoder(config, rng);
      const Ids ids(Shape{2, 3}, {4, 2, 3, 1, 0, 0});
      const GradcheckFn f = [&](Tape<double>& tape, const attend::testing::Vars&) {
        return joined(encoder(tape, ids, {3, 1}));
      };
      const GradcheckResult result = gradcheck_module(encoder, f, {});
      BOOST_TEST(result.passed, result.message);
      BOOST_TEST(result.checked == encoder.parameter_count());
    }
  }
}

// A 2-layer bidirectional encoder over a ragged, unsorted batch against PyTorch's Embedding + GRU/LSTM over
// pack_padded_sequence(enforce_sorted=False): outputs, final states and the gradients of every parameter.
void check_encoder_against_pytorch(CellKind kind, const std::string& case_name) {
  const Ids ids = load_reference_ids(case_name, "ids");
  const Ids lengths_tensor = load_reference_ids(case_name, "lengths");
  const std::vector<std::int64_t> lengths(lengths_tensor.data(), lengths_tensor.data() + lengths_tensor.size());
  EncoderConfig config;
  config.vocab_size = 7;
  config.embedding_dim = 4;
  config.padding_id = 0;
  config.rnn = stack_config(kind, 4, 3, 2, true);
  Rng rng(0);
  Encoder<float> encoder(config, rng);
  load_parameters(encoder, case_name);
  encoder.zero_grad();

  Tape<float> tape;
  const RecurrentOutput<float> out = encoder(tape, ids, lengths);
  BOOST_TEST(close_to(out.outputs.value(), load_reference(case_name, "outputs")));
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    const Tensor<float> row = sequence_of(out.outputs.value(), b, 5);
    for (std::size_t t = static_cast<std::size_t>(lengths[b]); t < 5; ++t) {
      for (std::size_t k = 0; k < 6; ++k) BOOST_TEST(row.at({0, t, k}) == 0.0f);  // exactly zero, not just close
    }
  }
  const Variable<float> h_n = stack(out.h_final, 0);  // (layers · directions, batch, H) as PyTorch's h_n
  BOOST_TEST(close_to(h_n.value(), load_reference(case_name, "h_n")));
  Variable<float> loss = weighted_sum(out.outputs, load_reference(case_name, "w_outputs")) +
                         weighted_sum(h_n, load_reference(case_name, "w_h_n"));
  if (kind == CellKind::lstm) {
    const Variable<float> c_n = stack(out.c_final, 0);
    BOOST_TEST(close_to(c_n.value(), load_reference(case_name, "c_n")));
    loss = loss + weighted_sum(c_n, load_reference(case_name, "w_c_n"));
  } else {
    BOOST_TEST(out.c_final.empty());
  }
  tape.backward(loss);
  check_parameter_gradients(encoder, case_name);
}

BOOST_AUTO_TEST_CASE(gru_encoder_matches_pytorch) { check_encoder_against_pytorch(CellKind::gru, "encoder_gru"); }

BOOST_AUTO_TEST_CASE(lstm_encoder_matches_pytorch) { check_encoder_against_pytorch(CellKind::lstm, "encoder_lstm"); }

// Each sequence of a ragged batch, run alone and unpadded, has the same final states (every layer and direction) and
// the same outputs; the batch's outputs at padded steps are exactly 0, and padded inputs get exactly no gradient.
BOOST_AUTO_TEST_CASE_TEMPLATE(ragged_batch_equals_sequences_run_alone, T, attend::testing::float_types) {
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  const std::vector<std::int64_t> lengths{5, 2, 4, 1};
  const std::size_t batch = 4, time = 5, in = 3;
  const Tensor<T> x_values = cast<T>(random_tensor({batch, time, in}, 19));
  for (CellKind kind : all_kinds) {
    BOOST_TEST_CONTEXT("cell " << to_string(kind)) {
      Rng rng(20);
      RecurrentStack<T> rnn(stack_config(kind, in, 3, 2, true), rng);
      Tape<T> tape;
      const Variable<T> x = tape.leaf(x_values);
      const RecurrentOutput<T> out = rnn.forward(x, lengths);
      BOOST_REQUIRE_EQUAL(out.h_final.size(), 4u);
      BOOST_REQUIRE_EQUAL(out.c_final.size(), kind == CellKind::lstm ? 4u : 0u);
      BOOST_TEST(to_string(out.outputs.shape()) == "(4,5,6)");
      for (std::size_t b = 0; b < batch; ++b) {
        BOOST_TEST_CONTEXT("sequence " << b) {
          const auto length = static_cast<std::size_t>(lengths[b]);
          Tape<T> alone_tape;
          const RecurrentOutput<T> alone = rnn.forward(alone_tape.constant(sequence_of(x_values, b, length)));
          for (std::size_t k = 0; k < out.h_final.size(); ++k) {
            BOOST_TEST(close_to(batch_entry(out.h_final[k].value(), b), alone.h_final[k].value(), tol, tol));
          }
          for (std::size_t k = 0; k < out.c_final.size(); ++k) {
            BOOST_TEST(close_to(batch_entry(out.c_final[k].value(), b), alone.c_final[k].value(), tol, tol));
          }
          BOOST_TEST(close_to(sequence_of(out.outputs.value(), b, length), alone.outputs.value(), tol, tol));
          const Tensor<T> row = sequence_of(out.outputs.value(), b, time);
          for (std::size_t t = length; t < time; ++t) {
            for (std::size_t k = 0; k < 6; ++k) BOOST_TEST(row.at({0, t, k}) == T(0));
          }
        }
      }
      // Padded inputs influence nothing: their gradient is exactly zero; the real ones do get a gradient.
      const Variable<T> all = joined(out);
      tape.backward(all, cast<T>(random_tensor(all.shape(), 21)));
      const Tensor<T> dx = x.grad();
      for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t t = 0; t < time; ++t) {
          const bool padded = t >= static_cast<std::size_t>(lengths[b]);
          bool any = false;
          for (std::size_t k = 0; k < in; ++k) any = any || dx.at({b, t, k}) != T(0);
          BOOST_TEST(any == !padded, "input gradient at (" << b << ", " << t << ")");
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(full_lengths_equal_no_lengths) {
  Rng rng(22);
  RecurrentStack<double> rnn(stack_config(CellKind::lstm, 3, 2, 2, true), rng);
  const Tensor<double> x = random_tensor({2, 4, 3}, 23);
  Tape<double> with_tape, without_tape, padded_tape;
  const RecurrentOutput<double> with = rnn.forward(with_tape.constant(x), {4, 4});
  const RecurrentOutput<double> without = rnn.forward(without_tape.constant(x));
  BOOST_TEST(equal(with.outputs.value(), without.outputs.value()));
  for (std::size_t k = 0; k < 4; ++k) {
    BOOST_TEST(equal(with.h_final[k].value(), without.h_final[k].value()));
    BOOST_TEST(equal(with.c_final[k].value(), without.c_final[k].value()));
  }
  // nothing padded: the same graph, without masking ops; one padded step adds the masks and the masked updates
  BOOST_TEST(with_tape.size() == without_tape.size());
  rnn.forward(padded_tape.constant(x), {4, 3});
  BOOST_TEST(padded_tape.size() > with_tape.size());
}

// The stack, which precomputes the input gates of all steps, equals the cells run one step at a time with
// forward(x, h); the backward direction is the backward cell run from the last step to the first.
BOOST_AUTO_TEST_CASE(stack_equals_the_cells_run_step_by_step) {
  for (CellKind kind : all_kinds) {
    BOOST_TEST_CONTEXT("cell " << to_string(kind)) {
      Rng rng(24);
      RecurrentStack<double> rnn(stack_config(kind, 3, 2, 1, true), rng);
      Tape<double> tape;
      const std::size_t time = 4;
      const Variable<double> x = tape.constant(random_tensor({2, time, 3}, 25));
      const RecurrentOutput<double> out = rnn.forward(x);
      for (std::size_t d = 0; d < 2; ++d) {
        LstmState<double> state{tape.constant(Tensor<double>(Shape{2, 2})), tape.constant(Tensor<double>(Shape{2, 2}))};
        for (std::size_t s = 0; s < time; ++s) {
          const std::size_t t = d == 0 ? s : time - 1 - s;
          const Variable<double> x_t = select(x, 1, t);
          std::visit(
              [&](auto& cell) {
                if constexpr (std::is_same_v<std::decay_t<decltype(cell)>, LstmCell<double>>) {
                  state = cell(x_t, state);
                } else {
                  state.h = cell(x_t, state.h);
                }
              },
              rnn.cells[0][d]);
          BOOST_TEST(
              close_to(slice(select(out.outputs, 1, t), 1, 2 * d, 2 * d + 2).value(), state.h.value(), 1e-15, 1e-13));
        }
        BOOST_TEST(close_to(out.h_final[d].value(), state.h.value(), 1e-15, 1e-13));
        if (kind == CellKind::lstm) BOOST_TEST(close_to(out.c_final[d].value(), state.c.value(), 1e-15, 1e-13));
      }
    }
  }
}

// GruCell::step and LstmCell::step (one fused op after the state linear) equal gru_step_composed and
// lstm_step_composed (the small ops): the outputs and the gradients of x, h, c and of every parameter, float and
// double.
template <class T>
struct StepRun {
  std::vector<Tensor<T>> values;  // h' (and c'), then the gradients of x, h (and c), then the parameters' gradients
};

template <class T, class Cell, class Step>
StepRun<T> run_step(Cell& cell, bool lstm, Step step) {
  Tape<T> tape;
  cell.zero_grad();
  const std::size_t H = cell.hidden_size();
  const Variable<T> x = tape.leaf(cast<T>(random_tensor({3, cell.input_size()}, 60)));
  const Variable<T> h = tape.leaf(cast<T>(random_tensor({3, H}, 61, -3.0, 3.0)));
  const Variable<T> c = tape.leaf(cast<T>(random_tensor({3, H}, 62, -3.0, 3.0)));
  const LstmState<T> next = step(cell.input_gates(x), LstmState<T>{h, lstm ? c : Variable<T>{}});
  const Variable<T> y = lstm ? concat<T>({next.h, next.c}, 1) : next.h;
  tape.backward(sum(y * tape.constant(cast<T>(random_tensor(y.shape(), 63)))));
  StepRun<T> run;
  run.values.push_back(y.value());
  for (const Variable<T>& v : {x, h, c}) run.values.push_back(v.grad());
  for (const auto& named : cell.parameters()) run.values.push_back(named.second->grad);
  return run;
}

template <class T>
void check_same_runs(const StepRun<T>& fused, const StepRun<T>& composed) {
  const double tolerance = std::is_same_v<T, float> ? 2e-6 : 1e-14;
  BOOST_TEST_REQUIRE(fused.values.size() == composed.values.size());
  for (std::size_t k = 0; k < fused.values.size(); ++k) {
    BOOST_TEST_CONTEXT("value " << k) {
      BOOST_TEST(close_to(fused.values[k], composed.values[k], tolerance, tolerance));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(cells_equal_their_composed_steps, T, attend::testing::float_types) {
  Rng rng(64);
  GruCell<T> gru(4, 6, rng);
  const auto gru_fused = run_step<T>(gru, false, [&](const Variable<T>& gx, const LstmState<T>& s) {
    return LstmState<T>{gru.step(gx, s.h), {}};
  });
  const auto gru_composed = run_step<T>(gru, false, [&](const Variable<T>& gx, const LstmState<T>& s) {
    Tape<T>& tape = gx.tape();
    const Variable<T> gh = linear(s.h, tape.param(gru.W_hh), tape.param(gru.b_hh));
    return LstmState<T>{gru_step_composed(gx, gh, s.h), {}};
  });
  BOOST_TEST_CONTEXT("gru") { check_same_runs(gru_fused, gru_composed); }

  LstmCell<T> lstm(4, 5, rng);
  const auto lstm_fused =
      run_step<T>(lstm, true, [&](const Variable<T>& gx, const LstmState<T>& s) { return lstm.step(gx, s); });
  const auto lstm_composed = run_step<T>(lstm, true, [&](const Variable<T>& gx, const LstmState<T>& s) {
    Tape<T>& tape = gx.tape();
    const Variable<T> gh = linear(s.h, tape.param(lstm.W_hh), tape.param(lstm.b_hh));
    return lstm_step_composed(gx, gh, s.c);
  });
  BOOST_TEST_CONTEXT("lstm") { check_same_runs(lstm_fused, lstm_composed); }
}

BOOST_AUTO_TEST_CASE(composed_steps_check_shapes) {
  Tape<double> tape;
  const Variable<double> gx = tape.leaf(Tensor<double>(Shape{2, 9}));
  BOOST_CHECK_EXCEPTION(gru_step_composed(gx, gx, tape.leaf(Tensor<double>(Shape{2, 4}))), std::invalid_argument,
                        message_has({"gru_step_composed", "(2,9)", "(2,4)"}));
  BOOST_CHECK_EXCEPTION(lstm_step_composed(gx, gx, tape.leaf(Tensor<double>(Shape{2, 3}))), std::invalid_argument,
                        message_has({"lstm_step_composed", "(2,9)", "(2,3)"}));
}

BOOST_AUTO_TEST_CASE(dropout_only_between_layers_and_only_in_training) {
  Tape<float> tape;
  const Variable<float> x = tape.constant(cast<float>(random_tensor({3, 4, 2}, 26)));
  Rng rng_a(27), rng_b(27);
  RecurrentStack<float> with_dropout(stack_config(CellKind::gru, 2, 3, 2, true, 0.5), rng_a);
  RecurrentStack<float> without(stack_config(CellKind::gru, 2, 3, 2, true, 0.0), rng_b);  // the same weights
  const Tensor<float> reference = without.forward(x, {4, 2, 3}).outputs.value();
  BOOST_TEST(with_dropout.training());
  const Tensor<float> trained = with_dropout.forward(x, {4, 2, 3}).outputs.value();
  BOOST_TEST(!close_to(trained, reference, 1e-3, 1e-3));  // dropout changed layer 2's input
  with_dropout.eval();
  BOOST_TEST(!with_dropout.training());
  BOOST_TEST(equal(with_dropout.forward(x, {4, 2, 3}).outputs.value(), reference));
  BOOST_TEST(equal(with_dropout.forward(x, {4, 2, 3}).outputs.value(), reference));
  // one layer: there is no layer after it, so no dropout even in training mode (PyTorch's behaviour)
  Rng rng_c(28), rng_d(28);
  RecurrentStack<float> one_layer(stack_config(CellKind::lstm, 2, 3, 1, false, 0.9), rng_c);
  RecurrentStack<float> one_layer_plain(stack_config(CellKind::lstm, 2, 3, 1, false, 0.0), rng_d);
  BOOST_TEST(equal(one_layer.forward(x).outputs.value(), one_layer_plain.forward(x).outputs.value()));
  // the encoder passes evaluation mode on to its stack
  EncoderConfig config;
  config.vocab_size = 4;
  config.embedding_dim = 2;
  config.rnn = stack_config(CellKind::gru, 2, 3, 2, false, 0.5);
  Rng rng_e(29);
  Encoder<float> encoder(config, rng_e);
  encoder.eval();
  BOOST_TEST(!encoder.rnn.training());
  const Ids ids(Shape{1, 3}, {1, 2, 3});
  BOOST_TEST(equal(encoder(tape, ids, {3}).outputs.value(), encoder(tape, ids, {3}).outputs.value()));
}

BOOST_AUTO_TEST_CASE(parameter_names_follow_the_pytorch_mapping) {
  EncoderConfig config;
  config.vocab_size = 7;
  config.embedding_dim = 4;
  config.rnn = stack_config(CellKind::gru, 0, 3, 2, true);
  Rng rng(30);
  Encoder<float> encoder(config, rng);
  std::vector<std::string> expected{"embedding.W"};
  for (const char* layer : {"0", "1"}) {
    for (const char* direction : {"forward", "backward"}) {
      for (const char* p : {"W_ih", "W_hh", "b_ih", "b_hh"}) {
        expected.push_back(std::string("rnn.layers.") + layer + "." + direction + "." + p);
      }
    }
  }
  std::vector<std::string> names;
  for (const auto& [name, p] : encoder.parameters()) names.push_back(name);
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  // torch.nn.GRU(4, 3, num_layers=2, bidirectional=True) has 2·3·3·(4+3+2) + 2·3·3·(6+3+2) = 360 parameters
  BOOST_TEST(encoder.rnn.parameter_count() == 360u);
  BOOST_TEST(encoder.parameter_count() == 360u + 7 * 4);
  BOOST_TEST(to_string(encoder.parameters()[5].second->value.shape()) == "(9,4)");  // layers.0.backward.W_ih
  BOOST_TEST(to_string(encoder.parameters()[9].second->value.shape()) == "(9,6)");  // layers.1.forward.W_ih
  BOOST_TEST(encoder.output_size() == 6u);
  for (CellKind kind : all_kinds) BOOST_TEST((cell_kind_from_string(to_string(kind)) == kind));
  BOOST_CHECK_EXCEPTION(cell_kind_from_string("transformer"), std::invalid_argument, message_has({"transformer"}));
}

BOOST_AUTO_TEST_CASE(invalid_batches_and_configurations_throw) {
  Rng rng(31);
  EncoderConfig config;
  config.vocab_size = 5;
  config.embedding_dim = 2;
  config.rnn = stack_config(CellKind::lstm, 0, 3, 1, true);
  Encoder<float> encoder(config, rng);
  Tape<float> tape;
  const Ids ids(Shape{2, 3}, {1, 2, 3, 4, 0, 0});
  BOOST_CHECK_EXCEPTION(encoder(tape, ids, {3}), std::invalid_argument,
                        message_has({"Encoder", "1 lengths", "batch of 2"}));
  BOOST_CHECK_EXCEPTION(encoder(tape, ids, {3, 0}), std::invalid_argument,
                        message_has({"Encoder", "length 0 of sequence 1", "[1, 3]"}));
  BOOST_CHECK_EXCEPTION(encoder(tape, ids, {4, 1}), std::invalid_argument,
                        message_has({"Encoder", "length 4 of sequence 0"}));
  BOOST_CHECK_EXCEPTION(encoder(tape, ids, {-1, 1}), std::invalid_argument, message_has({"Encoder", "length -1"}));
  BOOST_CHECK_EXCEPTION(encoder(tape, Ids(Shape{2, 3}, {1, 2, 3, 4, 5, 0}), {3, 1}), std::invalid_argument,
                        message_has({"Encoder", "id 5", "(1, 1)", "[0, 5)"}));
  BOOST_CHECK_EXCEPTION(encoder(tape, Ids(Shape{6}, {1, 2, 3, 4, 0, 0}), {6}), std::invalid_argument,
                        message_has({"Encoder", "(6,)"}));

  RecurrentStack<float> rnn(stack_config(CellKind::gru, 2, 3, 2, false), rng);
  BOOST_CHECK_EXCEPTION(rnn.forward(tape.constant(Tensor<float>(Shape{2, 3, 4}))), std::invalid_argument,
                        message_has({"RecurrentStack", "(2,3,4)", "(batch, time, 2)"}));
  BOOST_CHECK_EXCEPTION(rnn.forward(tape.constant(Tensor<float>(Shape{2, 2}))), std::invalid_argument,
                        message_has({"RecurrentStack", "(2,2)"}));
  BOOST_CHECK_EXCEPTION(rnn.forward(tape.constant(Tensor<float>(Shape{2, 3, 2})), {1, 5}), std::invalid_argument,
                        message_has({"RecurrentStack", "length 5 of sequence 1"}));

  BOOST_CHECK_EXCEPTION(RecurrentStack<float>(stack_config(CellKind::gru, 2, 3, 0, false), rng), std::invalid_argument,
                        message_has({"RecurrentStack", "num_layers"}));
  BOOST_CHECK_EXCEPTION(RecurrentStack<float>(stack_config(CellKind::gru, 2, 3, 2, false, 1.5), rng),
                        std::invalid_argument, message_has({"RecurrentStack", "dropout 1.5"}));
  BOOST_CHECK_EXCEPTION(RecurrentStack<float>(stack_config(CellKind::gru, 0, 3, 1, false), rng), std::invalid_argument,
                        message_has({"GruCell", "input_size 0"}));
  config.rnn.input_size = 3;
  BOOST_CHECK_EXCEPTION(Encoder<float>(config, rng), std::invalid_argument,
                        message_has({"Encoder", "input_size 3", "embedding_dim 2"}));
}

// ---- PyTorch reference values of the layers the encoder is built from ------------------------------------------

BOOST_AUTO_TEST_SUITE(layer_reference)

BOOST_AUTO_TEST_CASE(linear_matches_pytorch) {
  Rng rng(0);
  Linear<float> layer(4, 5, rng);
  load_parameters(layer, "linear");
  layer.zero_grad();
  Tape<float> tape;
  const Variable<float> x = tape.leaf(load_reference("linear", "x"));  // (2, 3, 4): the sequence form
  const Variable<float> y = layer(x);
  BOOST_TEST(close_to(y.value(), load_reference("linear", "y")));
  tape.backward(weighted_sum(y, load_reference("linear", "w")));
  BOOST_TEST(close_to(x.grad(), load_reference("linear", "grad.x")));
  check_parameter_gradients(layer, "linear");
}

BOOST_AUTO_TEST_CASE(embedding_with_padding_matches_pytorch) {
  Rng rng(0);
  Embedding<float> layer(6, 3, rng, 0);
  load_parameters(layer, "embedding");
  layer.zero_grad();
  Tape<float> tape;
  const Variable<float> y = layer(tape, load_reference_ids("embedding", "ids"));
  BOOST_TEST(close_to(y.value(), load_reference("embedding", "y")));
  tape.backward(weighted_sum(y, load_reference("embedding", "w")));
  check_parameter_gradients(layer, "embedding");
  for (std::size_t k = 0; k < 3; ++k) BOOST_TEST(layer.W.grad.at({0, k}) == 0.0f);  // the padding row: no gradient
}

BOOST_AUTO_TEST_CASE(cross_entropy_with_padding_matches_pytorch) {
  const Ids targets = load_reference_ids("cross_entropy", "targets");
  for (const auto& [suffix, smoothing] : {std::pair<std::string, double>{"", 0.0}, {"_smoothed", 0.1}}) {
    BOOST_TEST_CONTEXT("label_smoothing " << smoothing) {
      Tape<float> tape;
      const Variable<float> logits = tape.leaf(load_reference("cross_entropy", "logits"));
      const Variable<float> loss = CrossEntropyLoss(0, smoothing)(logits, targets);
      BOOST_TEST(close_to(loss.value(), load_reference("cross_entropy", "loss" + suffix).reshaped(Shape{})));
      tape.backward(loss);
      BOOST_TEST(close_to(logits.grad(), load_reference("cross_entropy", "grad.logits" + suffix)));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()  // layer_reference

BOOST_AUTO_TEST_SUITE_END()  // recurrent
