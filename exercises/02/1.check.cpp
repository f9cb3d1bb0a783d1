// The check of exercise 2.1 (exercises/02/1.hpp): the LSTM loop against nn::Encoder with the same weights, the
// context against the encoder's final hidden state, and the step by hand against nn::LstmCell, from a zero state and
// from others.
#include "exercises/02/1.hpp"

#include <string>
#define yours reference
#include "exercises/02/1.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/untrained_encoder.hpp"

using namespace attend;

namespace {

std::vector<double> values(const Tensor<double>& t) { return std::vector<double>(t.data(), t.data() + t.size()); }

// Row b of a (B, n) tensor, or position i of a (1, T, n) one.
std::vector<double> row(const Tensor<double>& t, std::size_t r, std::size_t n) {
  return std::vector<double>(t.data() + r * n, t.data() + (r + 1) * n);
}

struct Sentence {
  std::string name;  // "another case: …" for the sentences the task does not name
  std::string what;  // the sentence without that prefix
  std::vector<std::int64_t> ids;
  std::size_t V, E, H;
  std::uint64_t seed;
};

nn::Encoder<double> lstm_encoder(const Sentence& s) {
  return exercise::untrained_encoder(s.V, s.E, s.H, nn::CellKind::lstm, s.seed);
}

// The loop and the context against the library's Encoder run over the same sentence with the same weights.
void check_loop(exercise::Check& check, const Sentence& s) {
  nn::Encoder<double> encoder = lstm_encoder(s);
  nn::LstmCell<double>& cell = std::get<nn::LstmCell<double>>(encoder.rnn.cells[0][0]);
  const std::size_t T_x = s.ids.size();
  Tape<double> tape;
  const std::vector<LstmState<double>> states = yours::lstm_loop(tape, encoder.embedding, cell, s.ids);
  Ids tokens(Shape{1, T_x});
  for (std::size_t i = 0; i < T_x; ++i) tokens.data()[i] = s.ids[i];
  const nn::RecurrentOutput<double> library = encoder(tape, tokens, {static_cast<std::int64_t>(T_x)});
  if (!check.that(states.size() == T_x, s.name + ": one state per token",
                  std::to_string(states.size()) + " states for " + std::to_string(T_x) + " tokens")) {
    return;
  }
  std::vector<double> yours_h, expected_h;
  for (std::size_t i = 0; i < T_x; ++i) {
    const std::vector<double> h_i = values(states[i].h.value()), e_i = row(library.outputs.value(), i, s.H);
    yours_h.insert(yours_h.end(), h_i.begin(), h_i.end());
    expected_h.insert(expected_h.end(), e_i.begin(), e_i.end());
  }
  check.near(s.name + ": h_1 … h_Tx of your loop = nn::Encoder's outputs", yours_h, expected_h, 1e-13);
  check.near(s.name + ": the memory cell m_Tx of your loop = nn::Encoder's c_final", values(states.back().c.value()),
             values(library.c_final[0].value()), 1e-13);
  check.near(s.name + ": (2.7) your context c = the h_final nn::Encoder hands the decoder", yours::context(states),
             values(library.h_final[0].value()), 1e-13);
}

// One step by hand against the cell's own step from the state (h, m).
void check_step(exercise::Check& check, const std::string& name, nn::LstmCell<double>& cell,
                const std::vector<double>& x, const std::vector<double>& h, const std::vector<double>& m) {
  Tape<double> tape;
  const std::size_t H = cell.hidden_size();
  const LstmState<double> state{tape.constant(Tensor<double>(Shape{1, H}, h)),
                                tape.constant(Tensor<double>(Shape{1, H}, m))};
  const LstmState<double> next = cell(tape.constant(Tensor<double>(Shape{1, x.size()}, x)), state);
  const std::array<std::vector<double>, 2> yours = yours::lstm_step_by_hand(cell, x, h, m);
  check.near(name + ": h′ = o ⊙ tanh(m′) by hand = nn::LstmCell's", yours[0], values(next.h.value()), 1e-13);
  check.near(name + ": m′ = f ⊙ m + i ⊙ g by hand = nn::LstmCell's", yours[1], values(next.c.value()), 1e-13);
}

void check_steps(exercise::Check& check, const Sentence& s) {
  nn::Encoder<double> encoder = lstm_encoder(s);
  nn::LstmCell<double>& cell = std::get<nn::LstmCell<double>>(encoder.rnn.cells[0][0]);
  Tape<double> tape;
  Ids tokens(Shape{1, 2}, {s.ids[0], s.ids[1]});
  const Tensor<double> x = encoder.embedding(tape, tokens).value();  // (1, 2, E)
  const std::vector<double> x_1 = row(x, 0, s.E), x_2 = row(x, 1, s.E), zero(s.H, 0.0);
  check.run(s.name + ": the first step, from h_0 = m_0 = 0",
            [&] { check_step(check, s.name + ": step 1", cell, x_1, zero, zero); });
  const std::string second = "another case: " + s.what + ": step 2, from (h_1, m_1) ≠ 0";
  check.run(second, [&] {
    const std::array<std::vector<double>, 2> first = reference::lstm_step_by_hand(cell, x_1, zero, zero);
    check_step(check, second, cell, x_2, first[0], first[1]);
  });
}

}  // namespace

int main() {
  exercise::Check check("2.1", "the hand-built loop with an LSTM cell");
  const Sentence sentences[] = {
      {"\"the cat sat on the mat\" (E = 4, H = 3)", "\"the cat sat on the mat\"", {1, 2, 3, 4, 1, 5}, 6, 4, 3, 2},
      {"another case: 9 tokens, E = 2, H = 5", "9 tokens, E = 2, H = 5", {3, 1, 4, 1, 5, 7, 2, 6, 5}, 8, 2, 5, 7},
  };
  for (const Sentence& s : sentences) {
    check.run(s.name + ": the loop", [&] { check_loop(check, s); });
    check_steps(check, s);
  }
  check.run("another case: a step from a large state (|h|, |m| up to 3)", [&] {
    Rng rng(11), weights(5);
    nn::LstmCell<double> cell(3, 4, weights);
    const Tensor<double> x = rng.uniform_tensor<double>(Shape{3}, -2, 2),
                         h = rng.uniform_tensor<double>(Shape{4}, -3, 3),
                         m = rng.uniform_tensor<double>(Shape{4}, -3, 3);
    check_step(check, "another case: x, h, m drawn from [−2, 2], [−3, 3], [−3, 3]", cell, values(x), values(h),
               values(m));
  });
  return check.verdict();
}
