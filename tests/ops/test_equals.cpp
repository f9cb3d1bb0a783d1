// The one harness that holds every fused op of ops/fused.hpp to the composition of reference ops it names
// (ops/composed.hpp, or a line of reference ops): a table of pairs, each run in float and double and for every subset
// of its inputs needing a gradient (the empty one too: the value alone). For each run it compares the value and the
// gradient of every input for a fixed random seed gradient; an input that needs none must get none. Sizes exercise both
// the vectorised part and the scalar tail of a row; values include near-zero and saturating ones (inputs.hpp).
// Tolerances, relative to max(1, |value|): in double a few roundings; in float the fused kernels' σ and tanh
// (runtime/kernels.hpp, within 5e-7 relative) against xsimd's, which a saturated tanh's derivative 1 − t² turns into up
// to ~1e-5 of dy·v — a wrong formula is off by far more.
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ops/composed.hpp"
#include "ops/fused.hpp"
#include "precision/products.hpp"
#include "tests/ops/inputs.hpp"

using namespace attend;
using namespace attend::testing;

namespace {

template <class T>
using Build = std::function<Variable<T>(const std::vector<Variable<T>>&)>;

// One row of the table: a fused op on some inputs, and what it equals.
template <class T>
struct Pair {
  std::string op, what;  // op: the name in fused.hpp; what: the case
  Build<T> fused, composed;
  std::vector<Tensor<double>> inputs;
  double tolerance_float = 1e-5, tolerance_double = 1e-14;
};

template <class T>
void add(std::vector<Pair<T>>& table, const std::string& op, const std::string& what, Build<T> fused, Build<T> composed,
         std::vector<Tensor<double>> inputs, double tolerance_float = 1e-5, double tolerance_double = 1e-14) {
  table.push_back(
      {op, what, std::move(fused), std::move(composed), std::move(inputs), tolerance_float, tolerance_double});
}

// GRU and LSTM cells and single steps, including one value passed as two inputs (both contributions reach it) and an
// LSTM whose c' is not used.
template <class T>
void cells(std::vector<Pair<T>>& table) {
  for (const std::size_t H : {std::size_t{5}, std::size_t{16}}) {
    const std::string h = "H=" + std::to_string(H);
    add<T>(
        table, "gru_cell", h, [](const auto& x) { return gru_cell(x[0], x[1], x[2]); },
        [](const auto& x) { return gru_step_composed(x[0], x[1], x[2]); },
        {mixed_tensor(Shape{3, 3 * H}, 1), mixed_tensor(Shape{3, 3 * H}, 2), mixed_tensor(Shape{3, H}, 3)});
    add<T>(
        table, "lstm_cell", h, [](const auto& x) { return lstm_cell(x[0], x[1], x[2]); },
        [](const auto& x) {
          const LstmState<T> s = lstm_step_composed(x[0], x[1], x[2]);
          return stack<T>({s.h, s.c}, 0);
        },
        {mixed_tensor(Shape{3, 4 * H}, 11), mixed_tensor(Shape{3, 4 * H}, 12), mixed_tensor(Shape{3, H}, 13)});
  }
  add<T>(
      table, "gru_cell", "(g, g, h)", [](const auto& x) { return gru_cell(x[0], x[0], x[1]); },
      [](const auto& x) { return gru_step_composed(x[0], x[0], x[1]); },
      {mixed_tensor(Shape{2, 12}, 4), mixed_tensor(Shape{2, 4}, 5)});
  add<T>(
      table, "lstm_cell", "(g, g, c)", [](const auto& x) { return lstm_cell(x[0], x[0], x[1]); },
      [](const auto& x) {
        const LstmState<T> s = lstm_step_composed(x[0], x[0], x[1]);
        return stack<T>({s.h, s.c}, 0);
      },
      {mixed_tensor(Shape{2, 16}, 17), mixed_tensor(Shape{2, 4}, 18)});
  add<T>(
      table, "lstm_cell", "h' only", [](const auto& x) { return select(lstm_cell(x[0], x[1], x[2]), 0, 0); },
      [](const auto& x) { return lstm_step_composed(x[0], x[1], x[2]).h; },
      {mixed_tensor(Shape{2, 24}, 14), mixed_tensor(Shape{2, 24}, 15), mixed_tensor(Shape{2, 6}, 16)});
  add<T>(
      table, "gru_step", "H=6", [](const auto& x) { return gru_step(x[0], x[1], x[2], x[3]); },
      [](const auto& x) { return gru_step_composed(x[0], linear(x[3], x[1], x[2]), x[3]); },
      {mixed_tensor(Shape{4, 18}, 90), random_tensor(Shape{18, 6}, 91), random_tensor(Shape{18}, 92),
       mixed_tensor(Shape{4, 6}, 93)});
  add<T>(
      table, "lstm_step", "H=6, h' + c'/2",
      [](const auto& x) {
        const LstmState<T> s = lstm_step(x[0], x[1], x[2], x[3], x[4]);
        return s.h + s.c * T(0.5);
      },
      [](const auto& x) {
        const LstmState<T> s = lstm_step_composed(x[0], linear(x[3], x[1], x[2]), x[4]);
        return s.h + s.c * T(0.5);
      },
      {mixed_tensor(Shape{4, 24}, 94), random_tensor(Shape{24, 6}, 95), random_tensor(Shape{24}, 96),
       mixed_tensor(Shape{4, 6}, 97), mixed_tensor(Shape{4, 6}, 98)});
}

// Whole layers over time, in each direction, with and without ragged lengths; H = 6: rows of 18 and 24 gate values.
template <class T>
void recurrences_over_time(std::vector<Pair<T>>& table) {
  for (const Recurrence& r : recurrences()) {
    add<T>(
        table, "gru_sequence", describe(r), [r](const auto& x) { return gru_sequence(x[0], x[1], x[2], x[3], r); },
        [r](const auto& x) { return gru_sequence_composed(x[0], x[1], x[2], x[3], r); },
        {mixed_tensor(Shape{4, 5, 18}, 60), random_tensor(Shape{18, 6}, 61, -0.6, 0.6), random_tensor(Shape{18}, 62),
         mixed_tensor(Shape{4, 6}, 63)});
    add<T>(
        table, "lstm_sequence", describe(r),
        [r](const auto& x) { return lstm_sequence(x[0], x[1], x[2], x[3], x[4], r); },
        [r](const auto& x) { return lstm_sequence_composed(x[0], x[1], x[2], x[3], x[4], r); },
        {mixed_tensor(Shape{4, 5, 24}, 64), random_tensor(Shape{24, 6}, 65, -0.6, 0.6), random_tensor(Shape{24}, 66),
         mixed_tensor(Shape{4, 6}, 67), mixed_tensor(Shape{4, 6}, 68)});
  }
}

// Attention's energies (v as a row and flat; q also passed as v) and its two batched products.
template <class T>
void attention_products(std::vector<Pair<T>>& table) {
  for (const std::size_t A : {std::size_t{7}, std::size_t{16}}) {
    for (const Shape& v : {Shape{1, A}, Shape{A}}) {
      add<T>(
          table, "additive_attention", "A=" + std::to_string(A) + " v " + to_string(v),
          [](const auto& x) { return additive_attention(x[0], x[1], x[2]); },
          [](const auto& x) { return additive_attention_composed(x[0], x[1], x[2]); },
          {mixed_tensor(Shape{3, A}, 31), mixed_tensor(Shape{3, 4, A}, 32), mixed_tensor(v, 33)});
    }
  }
  add<T>(
      table, "additive_attention", "(q, keys, q)", [](const auto& x) { return additive_attention(x[0], x[1], x[0]); },
      [](const auto& x) { return additive_attention_composed(x[0], x[1], x[0]); },
      {mixed_tensor(Shape{1, 9}, 38), mixed_tensor(Shape{1, 3, 9}, 39)});
  for (const std::size_t A : {std::size_t{5}, std::size_t{19}}) {
    const std::string what = "A=" + std::to_string(A);
    add<T>(
        table, "batched_matvec", what, [](const auto& x) { return batched_matvec(x[0], x[1]); },
        [](const auto& x) { return batched_matvec_composed(x[0], x[1]); },
        {mixed_tensor(Shape{3, 4, A}, 41), mixed_tensor(Shape{3, A}, 42)});
    add<T>(
        table, "batched_vecmat", what, [](const auto& x) { return batched_vecmat(x[0], x[1]); },
        [](const auto& x) { return batched_vecmat_composed(x[0], x[1]); },
        {mixed_tensor(Shape{3, 4}, 45), mixed_tensor(Shape{3, 4, A}, 46)});
  }
}

// The Transformer's ops: layer norm (rows with a large common offset, so the centring must be exact) and attention
// over every mask case, plus cross-attention with T_q ≠ T_k.
template <class T>
void transformer(std::vector<Pair<T>>& table) {
  for (const double eps : {1e-5, 0.5}) {
    Tensor<double> x = random_tensor(Shape{2, 3, 7}, 1, -3.0, 3.0);
    for (std::size_t i = 0; i < 7; ++i) x.data()[i] += 100.0;
    add<T>(
        table, "layer_norm", "eps " + std::to_string(eps),
        [eps](const auto& v) { return layer_norm(v[0], v[1], v[2], eps); },
        [eps](const auto& v) { return layer_norm_composed(v[0], v[1], v[2], eps); },
        {x, random_tensor(Shape{7}, 2), random_tensor(Shape{7}, 3)}, 2e-5, 1e-12);
  }
  AttentionOptions cross;
  cross.heads = 3;
  cross.key_padding = padding({{1, 1, 1, 1, 1}, {1, 1, 1, 0, 0}});
  std::vector<std::pair<std::string, AttentionOptions>> cases = attention_cases();
  cases.emplace_back("cross-attention, 3 heads, T_q 3, T_k 5", cross);
  for (const auto& [name, o] : cases) {
    const bool is_cross = o.heads == 3;
    const std::size_t Tq = is_cross ? 3 : 4, Tk = is_cross ? 5 : 4, dv = o.heads == 1 ? 2 : (is_cross ? 9 : 4);
    add<T>(
        table, "scaled_dot_product_attention", name,
        [o = o](const auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], o); },
        [o = o](const auto& x) { return scaled_dot_product_attention_composed(x[0], x[1], x[2], o); },
        {random_tensor(Shape{2, Tq, 6}, 10), random_tensor(Shape{2, Tk, 6}, 11), random_tensor(Shape{2, Tk, dv}, 12)},
        2e-5, 1e-12);
  }
}

// The loss from logits: rows with ignored targets, (B, T, C) logits, another ignore id, label smoothing.
template <class T>
void losses(std::vector<Pair<T>>& table) {
  struct Case {
    std::string what;
    Shape shape;
    Ids targets;
    std::int64_t ignore;
    double smoothing;
  };
  const std::vector<Case> cases = {
      {"(4,5), one ignored", Shape{4, 5}, Ids(Shape{4}, {1, -100, 4, 0}), -100, 0.0},
      {"(2,3,4)", Shape{2, 3, 4}, Ids(Shape{2, 3}, {3, 0, 1, -100, 2, 2}), -100, 0.0},
      {"ignore id 0", Shape{4, 5}, Ids(Shape{4}, {1, 0, 4, 0}), 0, 0.0},
      {"label smoothing 0.1", Shape{3, 17}, Ids(Shape{3}, {16, -100, 2}), -100, 0.1},
      {"all ignored, smoothing 0.2", Shape{2, 3}, Ids(Shape{2}, {-100, -100}), -100, 0.2},
      {"one row (4,), a scalar target", Shape{4}, Ids::scalar(2), -100, 0.0},
  };
  for (const Case& c : cases) {
    add<T>(
        table, "cross_entropy", c.what,
        [c](const auto& x) { return cross_entropy(x[0], c.targets, c.ignore, c.smoothing); },
        [c](const auto& x) { return cross_entropy_composed(x[0], c.targets, c.ignore, c.smoothing); },
        {random_tensor(c.shape, 19, -6.0, 6.0)}, 2e-6, 1e-13);
  }
  // the output layer with its loss: with and without a bias, ignored rows, smoothing, and 9 rows of 65,537 classes,
  // which the node's forward computes in two blocks of logits (7 rows, then 2)
  struct OutputCase {
    std::string what;
    std::size_t rows, in, classes;
    Ids targets;
    std::int64_t ignore;
    double smoothing;
    bool bias;
  };
  const std::vector<OutputCase> outputs = {
      {"(4,6)·(5,6)ᵀ + b, one ignored", 4, 6, 5, Ids(Shape{4}, {1, -100, 4, 0}), -100, 0.0, true},
      {"no bias", 3, 4, 9, Ids(Shape{3}, {8, 0, 3}), -100, 0.0, false},
      {"ignore id 0, smoothing 0.1", 4, 5, 17, Ids(Shape{4}, {16, 0, 2, 0}), 0, 0.1, true},
      {"all ignored", 2, 3, 4, Ids(Shape{2}, {-100, -100}), -100, 0.2, true},
      {"two blocks of logits", 9, 3, 65537, Ids(Shape{9}, {0, 65536, 7, -100, 30000, 1, 2, 65535, 12}), -100, 0.0,
       true},
  };
  for (const OutputCase& c : outputs) {
    std::vector<Tensor<double>> inputs{random_tensor(Shape{c.rows, c.in}, 20, -2.0, 2.0),
                                       random_tensor(Shape{c.classes, c.in}, 21, -1.0, 1.0)};
    if (c.bias) inputs.push_back(random_tensor(Shape{c.classes}, 22, -1.0, 1.0));
    const auto bias = [c](const auto& x) { return c.bias ? x[2] : std::decay_t<decltype(x[0])>(); };
    add<T>(
        table, "linear_cross_entropy", c.what,
        [c, bias](const auto& x) {
          return linear_cross_entropy(x[0], x[1], bias(x), c.targets, c.ignore, c.smoothing);
        },
        [c, bias](const auto& x) {
          return linear_cross_entropy_composed(x[0], x[1], bias(x), c.targets, c.ignore, c.smoothing);
        },
        std::move(inputs), 2e-6, 1e-13);
  }
}

// dense (precision/products.hpp) without a context: linear's products, bit for bit — with and without a bias, inputs of
// rank 2 and 3, one row.
template <class T>
void layers(std::vector<Pair<T>>& table) {
  for (const auto& [what, x_shape, out] : {std::tuple{"(5,7)·(4,7)ᵀ", Shape{5, 7}, std::size_t{4}},
                                           std::tuple{"(2,3,6)·(9,6)ᵀ", Shape{2, 3, 6}, std::size_t{9}},
                                           std::tuple{"one row", Shape{1, 5}, std::size_t{3}}}) {
    const std::size_t in = x_shape[x_shape.rank() - 1];
    add<T>(
        table, "dense", std::string(what) + " + b", [](const auto& x) { return dense(x[0], x[1], x[2]); },
        [](const auto& x) { return linear(x[0], x[1], x[2]); },
        {mixed_tensor(x_shape, 30), random_tensor(Shape{out, in}, 31), random_tensor(Shape{out}, 32)}, 0.0, 0.0);
    add<T>(
        table, "dense", what, [](const auto& x) { return dense(x[0], x[1]); },
        [](const auto& x) { return linear(x[0], x[1]); },
        {mixed_tensor(x_shape, 33), random_tensor(Shape{out, in}, 34)}, 0.0, 0.0);
  }
}

template <class T>
std::vector<Pair<T>> table() {
  std::vector<Pair<T>> t;
  layers(t);
  cells(t);
  recurrences_over_time(t);
  attention_products(t);
  transformer(t);
  losses(t);
  return t;
}

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

// fused(inputs) == composed(inputs) with the inputs of `set` (bit k: input k) needing a gradient.
template <class T>
void check_pair(const Pair<T>& p, unsigned set) {
  std::vector<bool> wants(p.inputs.size());
  for (std::size_t k = 0; k < wants.size(); ++k) wants[k] = (set >> k & 1u) != 0;
  const double tol = sizeof(T) == 4 ? p.tolerance_float : p.tolerance_double;
  const Outcome<T> a = run(p.fused, p.inputs, wants);
  const Outcome<T> b = run(p.composed, p.inputs, wants);
  const std::string what = p.op + " " + p.what + ", gradient set " + std::to_string(set);
  BOOST_TEST(values_are(a.y, b.y.shape(), elements(b.y), tol), what << ": value");
  for (std::size_t k = 0; k < p.inputs.size(); ++k) {
    BOOST_TEST(values_are(a.grads[k], b.grads[k].shape(), elements(b.grads[k]), tol),
               what << ": gradient of input " << k);
    if (!wants[k]) {
      BOOST_TEST(values_are(a.grads[k], p.inputs[k].shape(), std::vector<double>(p.inputs[k].size(), 0.0)),
                 what << ": input " << k << " needs no gradient");
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(equals)

BOOST_AUTO_TEST_CASE_TEMPLATE(every_fused_op_equals_its_composition, T, float_types) {
  std::size_t runs = 0;
  for (const Pair<T>& p : table<T>()) {
    for (unsigned set = 0; set < (1u << p.inputs.size()); ++set, ++runs) check_pair(p, set);
  }
  BOOST_TEST_MESSAGE(runs << " fused-against-composed runs");
}

// Every op ops/fused.hpp and precision/products.hpp declare (a function returning a Variable or an LstmState, but for
// hidden_and_cell, which only splits an output) has rows in the table, and the table names no other: a new fused op
// fails here until its pair is added.
BOOST_AUTO_TEST_CASE(the_table_covers_every_fused_op) {
  std::set<std::string> declared;
  for (const std::string file : {"ops/fused.hpp", "precision/products.hpp"}) {
    std::ifstream header(std::string(ATTEND_SOURCE_DIR) + "/" + file);
    BOOST_TEST_REQUIRE(header.good(), "cannot read " + file);
    for (std::string line; std::getline(header, line);) {
      for (const std::string type : {"Variable<T> ", "LstmState<T> "}) {
        if (line.rfind(type, 0) != 0) continue;
        const std::string name = line.substr(type.size(), line.find('(') - type.size());
        if (!name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos &&
            name != "hidden_and_cell")
          declared.insert(name);
      }
    }
  }
  std::set<std::string> ops;
  for (const Pair<double>& p : table<double>()) ops.insert(p.op);
  BOOST_TEST(declared.size() >= 13u);
  BOOST_TEST(ops == declared, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
