// The check of exercise 8.2 (exercises/08/2.hpp): the LSTM step by hand against nn::LstmCell on random inputs and
// states (a large memory cell among them), the decoder's step against decoder->step() with teacher forcing over a
// whole date, and s_0, m_0 by hand against the state encode() gives the decoder — all in double, to 1e-10.
#include "exercises/08/2.hpp"

#include <cmath>
#define yours reference
#include "exercises/08/2.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/dates_data.hpp"

using namespace attend;

namespace {

std::vector<double> values(const Tensor<double>& t) { return t.to_vector(); }

std::vector<double> joined(const std::vector<std::vector<double>>& rows) {
  std::vector<double> all;
  for (const std::vector<double>& row : rows) all.insert(all.end(), row.begin(), row.end());
  return all;
}

// One step of a fresh LstmCell (in → H, weights from `seed`) on random x, s and m (m in [−m_range, m_range]).
void cell_case(exercise::Check& check, const std::string& name, std::size_t in, std::size_t H, std::uint64_t seed,
               double m_range) {
  Rng rng(seed);
  const nn::LstmCell<double> cell(in, H, rng);
  const Tensor<double> x = rng.uniform_tensor<double>(Shape{1, in}, -2, 2);
  const Tensor<double> s = rng.uniform_tensor<double>(Shape{1, H}, -1, 1);
  const Tensor<double> m = rng.uniform_tensor<double>(Shape{1, H}, -m_range, m_range);
  Tape<double> tape;
  nn::LstmCell<double> library = cell;
  const LstmState<double> next = library.forward(tape.constant(x), {tape.constant(s), tape.constant(m)});
  const std::array<std::vector<double>, 2> mine = yours::lstm_step(cell, values(x), values(s), values(m));
  check.near(name + ": s′ = o ⊙ tanh(m′), as nn::LstmCell's", mine[0], values(next.h.value()), 1e-10);
  check.near(name + ": m′ = f ⊙ m + i ⊙ g, as nn::LstmCell's", mine[1], values(next.c.value()), 1e-10);
}

struct Case {
  std::string name, source, target;
  std::size_t E, H;
  std::uint64_t seed;
};

models::Seq2seqConfig lstm_model(std::size_t E, std::size_t H, std::uint64_t seed) {
  models::Seq2seqConfig config = exercise::date_model_config("bahdanau", E, H, seed);
  config.cell = nn::CellKind::lstm;
  return config;
}

// The date with teacher forcing through the library's decoder; your step is given the library's y_{j−1}, c_j and
// (s_{j−1}, m_{j−1}) at every step, and your initial state the source ids.
void walk(exercise::Check& check, const Case& c) {
  models::Seq2seq<double> model(lstm_model(c.E, c.H, c.seed));
  auto& decoder = dynamic_cast<models::BahdanauDecoder<double>&>(*model.decoder);
  const std::vector<std::int64_t> x = exercise::date_source_ids(c.source), y = exercise::date_target_ids(c.target);
  Tape<double> tape;
  const models::Batch one = models::make_batch({x}, {y});
  const models::Encoded<double> encoded = model.encode(tape, one.source, one.source_lengths);
  check.run(c.name + ": s_0, m_0", [&] {
    const std::array<std::vector<double>, 2> mine = yours::initial_state(model.encoder, x);
    check.near(c.name + ": s_0 = h_Tx, the encoder's last hidden state", mine[0], values(encoded.state.h[0].value()),
               1e-10);
    check.near(c.name + ": m_0 = the encoder's last memory cell (DecoderState::c)", mine[1],
               values(encoded.state.c[0].value()), 1e-10);
  });
  check.run(c.name + ": s_j, m_j", [&] {
    std::vector<std::vector<double>> mine_s, mine_m, library_s, library_m;
    models::DecoderState<double> state = encoded.state;
    for (std::size_t j = 1; j <= y.size() + 1; ++j) {
      const std::int64_t y_prev = j == 1 ? data::Vocabulary::sos_id : y[j - 2];
      const models::DecoderStep<double> step = decoder.step(Ids(Shape{1}, {y_prev}), state, encoded.memory);
      const std::array<std::vector<double>, 2> mine = yours::decoder_step(
          decoder, y_prev, values(step.context.value()), values(state.h[0].value()), values(state.c[0].value()));
      mine_s.push_back(mine[0]);
      mine_m.push_back(mine[1]);
      library_s.push_back(values(step.state.h[0].value()));
      library_m.push_back(values(step.state.c[0].value()));
      state = step.state;
    }
    const std::string steps = " (steps 1.." + std::to_string(y.size() + 1) + " one after the other)";
    check.near(c.name + ": (8.4) s_j with the LSTM, as decoder->step()'s" + steps, joined(mine_s), joined(library_s),
               1e-10);
    check.near(c.name + ": m_j, the memory cell the DecoderState carries" + steps, joined(mine_m), joined(library_m),
               1e-10);
  });
}

}  // namespace

int main() {
  exercise::Check check("8.2", "an LSTM in the attention decoder: its step, and its state");
  check.run("an LstmCell 6 → 4", [&] { cell_case(check, "an LstmCell 6 → 4", 6, 4, 1, 1.0); });
  check.run("another case: a memory cell far from 0 (m in [−4, 4])",
            [&] { cell_case(check, "another case: a memory cell far from 0 (m in [−4, 4])", 3, 5, 2, 4.0); });
  const Case cases[] = {
      {"\"Tuesday 22 June  2083\", E = 8, H = 8", "Tuesday 22 June  2083", "2083-06-22", 8, 8, 1},
      {"another case: \"12/28/1953\", E = 5, H = 3", "12/28/1953", "1953-12-28", 5, 3, 2},
  };
  for (const Case& c : cases) check.run(c.name, [&] { walk(check, c); });
  return check.verdict();
}
