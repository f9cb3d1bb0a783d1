// The check of exercise 9.1 (exercises/09/1.hpp): (9.1) by hand against decoder->step() over whole dates, for Luong
// decoders without input feeding and with it (double, to 1e-10); the parameters input feeding adds, against
// parameter_count() of the two models; and the first s_j that moves when W_c changes, with and without feeding.
#include "exercises/09/1.hpp"

#include <cmath>
#define yours reference
#include "exercises/09/1.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/dates_data.hpp"

using namespace attend;

namespace {

models::Seq2seqConfig luong(const std::string& decoder, bool input_feeding, std::size_t E, std::size_t H,
                            nn::CellKind cell = nn::CellKind::gru, std::uint64_t seed = 1) {
  models::Seq2seqConfig config = exercise::date_model_config(decoder, E, H, seed);
  config.input_feeding = input_feeding;
  config.cell = cell;
  return config;
}

// Every s_j of a date with teacher forcing, from decoder->step(); with `yours_too`, also your s_j from the state
// before each step, and the two lists are compared.
std::vector<std::vector<double>> walk(models::Seq2seq<double>& model, const std::string& source,
                                      const std::string& target, std::vector<std::vector<double>>* mine = nullptr) {
  auto& decoder = dynamic_cast<models::LuongDecoder<double>&>(*model.decoder);
  const std::vector<std::int64_t> x = exercise::date_source_ids(source), y = exercise::date_target_ids(target);
  Tape<double> tape;
  const models::Batch one = models::make_batch({x}, {y});
  const models::Encoded<double> encoded = model.encode(tape, one.source, one.source_lengths);
  models::DecoderState<double> state = encoded.state;
  std::vector<std::vector<double>> s;
  for (std::size_t j = 1; j <= y.size() + 1; ++j) {
    const std::int64_t y_prev = j == 1 ? data::Vocabulary::sos_id : y[j - 2];
    if (mine != nullptr) mine->push_back(yours::state_by_hand(decoder, y_prev, state));
    state = decoder.step(Ids(Shape{1}, {y_prev}), state, encoded.memory).state;
    s.push_back(state.h[0].value().to_vector());
  }
  return s;
}

std::vector<double> joined(const std::vector<std::vector<double>>& rows) {
  std::vector<double> all;
  for (const std::vector<double>& row : rows) all.insert(all.end(), row.begin(), row.end());
  return all;
}

struct WalkCase {
  std::string name, decoder;
  bool input_feeding;
  std::size_t E, H;
  std::string source, target;
};

void check_walk(exercise::Check& check, const WalkCase& c) {
  models::Seq2seq<double> model(luong(c.decoder, c.input_feeding, c.E, c.H));
  std::vector<std::vector<double>> mine;
  const std::vector<std::vector<double>> library = walk(model, c.source, c.target, &mine);
  check.near(c.name + ": (9.1) s_j by hand = decoder->step()'s (steps 1.." + std::to_string(library.size()) +
                 " one after the other)",
             joined(mine), joined(library), 1e-10);
}

void check_count(exercise::Check& check, std::size_t E, std::size_t H, nn::CellKind cell, const std::string& decoder,
                 bool another) {
  const std::string name = std::string(another ? "another case: " : "") + decoder + ", " + nn::to_string(cell) +
                           ", E = " + std::to_string(E) + ", H = " + std::to_string(H);
  models::Seq2seq<double> with(luong(decoder, true, E, H, cell)), without(luong(decoder, false, E, H, cell));
  const std::size_t counted = with.parameter_count() - without.parameter_count();
  const std::size_t mine = yours::feeding_parameters(E, H, cell);
  check.that(mine == counted, name + ": the parameters input feeding adds",
             "yours " + std::to_string(mine) + ", parameter_count() " + std::to_string(with.parameter_count()) +
                 " with feeding, " + std::to_string(without.parameter_count()) +
                 " without: " + std::to_string(counted));
}

// The first j whose s_j moves when every element of W_c is moved by 0.05 (0: none), over a date.
std::size_t measured_first_step(bool input_feeding) {
  models::Seq2seq<double> model(luong("luong-general", input_feeding, 6, 5, nn::CellKind::gru, 4));
  const std::string source = "sep 18th, 1922", target = "1922-09-18";
  const std::vector<std::vector<double>> before = walk(model, source, target);
  auto& decoder = dynamic_cast<models::LuongDecoder<double>&>(*model.decoder);
  for (double& w : decoder.W_c.value.flat()) w += 0.05;
  const std::vector<std::vector<double>> after = walk(model, source, target);
  for (std::size_t j = 0; j < before.size(); ++j) {
    if (before[j] != after[j]) return j + 1;
  }
  return 0;
}

}  // namespace

int main() {
  exercise::Check check("9.1", "Luong's decoder without input feeding");
  const WalkCase walks[] = {
      {"luong-general without input feeding, \"1962/08/09\"", "luong-general", false, 8, 6, "1962/08/09", "1962-08-09"},
      {"luong-dot without input feeding, \"Tuesday 22 June  2083\"", "luong-dot", false, 5, 7, "Tuesday 22 June  2083",
       "2083-06-22"},
      {"another case: luong-concat with input feeding, \"12/28/1953\"", "luong-concat", true, 4, 6, "12/28/1953",
       "1953-12-28"},
  };
  for (const WalkCase& c : walks) check.run(c.name + ": (9.1)", [&] { check_walk(check, c); });
  check.run("the parameters of input feeding", [&] {
    check_count(check, 32, 64, nn::CellKind::gru, "luong-dot", false);
    check_count(check, 8, 16, nn::CellKind::lstm, "luong-concat", true);
    check_count(check, 5, 7, nn::CellKind::rnn_tanh, "luong-general", true);
  });
  for (const bool feeding : {true, false}) {
    const std::string name = feeding ? "with input feeding" : "without input feeding";
    check.run(name + ": the first s_j that reads W_c", [&] {
      const std::size_t mine = yours::first_step_reading_attention(feeding), measured = measured_first_step(feeding);
      check.that(
          mine == measured, name + ": the first s_j that moves when W_c changes",
          "yours j = " + std::to_string(mine) + ", measured j = " + std::to_string(measured) + " (0: no s_j moves)");
    });
  }
  return check.verdict();
}
