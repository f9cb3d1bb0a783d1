// The check of exercise 2.4 (exercises/02/4.hpp): the predicted final state against nn::Encoder run with every row's
// length set to the padded length, the drift padding causes, and the learner's lengths against the rows run alone.
#include "exercises/02/4.hpp"

#include <cmath>
#include <string>
#define yours reference
#include "exercises/02/4.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/untrained_encoder.hpp"

using namespace attend;

namespace {

std::vector<double> row(const Tensor<double>& t, std::size_t b) {
  const std::size_t n = t.shape()[1];
  return std::vector<double>(t.data() + b * n, t.data() + (b + 1) * n);
}

// h_Tx of one sentence run alone, unpadded, by the library.
std::vector<double> alone(nn::Encoder<double>& encoder, const std::vector<std::int64_t>& sentence) {
  Tape<double> tape;
  const Ids ids(Shape{1, sentence.size()}, sentence);
  return row(encoder(tape, ids, {static_cast<std::int64_t>(sentence.size())}).h_final[0].value(), 0);
}

Ids padded(const std::vector<std::vector<std::int64_t>>& rows, std::size_t T) {
  Ids batch(Shape{rows.size(), T});
  for (std::size_t b = 0; b < rows.size(); ++b) {
    for (std::size_t i = 0; i < rows[b].size(); ++i) batch.data()[b * T + i] = rows[b][i];
  }
  return batch;
}

// Row `b` of a batch whose every length is T: the library's final state against the prediction, and its distance
// from the sentence alone.
void check_reading_padding(exercise::Check& check, const std::string& name, nn::Encoder<double>& encoder,
                           const std::vector<std::vector<std::int64_t>>& rows, std::size_t T, std::size_t b) {
  Tape<double> tape;
  const std::vector<std::int64_t> all_T(rows.size(), static_cast<std::int64_t>(T));
  const std::vector<double> library = row(encoder(tape, padded(rows, T), all_T).h_final[0].value(), b);
  const std::size_t pads = T - rows[b].size();
  const std::vector<double> yours = yours::final_state_reading_padding(encoder, rows[b], pads);
  check.near(name + ": your h_Tx with " + std::to_string(pads) + " <pad> read as tokens = the encoder's with lengths " +
                 std::to_string(T),
             yours, library, 1e-13);
  const std::vector<double> right = alone(encoder, rows[b]);
  double distance = 0;
  for (std::size_t k = 0; k < right.size() && k < yours.size(); ++k)
    distance += (yours[k] - right[k]) * (yours[k] - right[k]);
  distance = std::sqrt(distance);
  if (pads == 0) {
    check.near(name + ": with no padding, your h_Tx = the sentence's run alone (distance)", distance, 0.0, 1e-13);
  } else {
    check.that(distance > 1e-3, name + ": x = 0 is not a no-op: your h_Tx moved away from the sentence's run alone",
               "distance ‖yours − alone‖ = " + exercise::number(distance));
  }
}

// The learner's lengths against the expected ones, and each row's final state with them against the row alone.
void check_lengths(exercise::Check& check, const std::string& name, nn::Encoder<double>& encoder,
                   const std::vector<std::vector<std::int64_t>>& rows, std::size_t T) {
  const Ids batch = padded(rows, T);
  const std::vector<std::int64_t> lengths = yours::true_lengths(batch);
  std::vector<double> yours_lengths(lengths.begin(), lengths.end()), expected;
  for (const auto& r : rows) expected.push_back(static_cast<double>(r.size()));
  if (!check.near(name + ": your lengths = each row's tokens", yours_lengths, expected, 0.0)) return;
  Tape<double> tape;
  const Tensor<double> h_final = encoder(tape, batch, lengths).h_final[0].value();
  std::vector<double> yours_h, expected_h;
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const std::vector<double> y = row(h_final, b), e = alone(encoder, rows[b]);
    yours_h.insert(yours_h.end(), y.begin(), y.end());
    expected_h.insert(expected_h.end(), e.begin(), e.end());
  }
  check.near(name + ": with your lengths, every row's h_Tx = the row's run alone", yours_h, expected_h, 1e-13);
}

}  // namespace

int main() {
  exercise::Check check("2.4", "padding read as tokens");
  // Chapter 2's batch: "the cat sat on the mat" and "on the mat" + 3 × <pad>, GRU, E = 4, H = 3, Rng(3).
  nn::Encoder<double> chapter = exercise::untrained_encoder(6, 4, 3, nn::CellKind::gru, 3);
  const std::vector<std::vector<std::int64_t>> chapter_rows{{1, 2, 3, 4, 1, 5}, {4, 1, 5}};
  check.run("the chapter's batch with lengths {6, 6}",
            [&] { check_reading_padding(check, "the chapter's batch, sentence 2", chapter, chapter_rows, 6, 1); });
  check.run("another case: sentence 1 of the chapter's batch (no padding)",
            [&] { check_reading_padding(check, "another case: sentence 1, no padding", chapter, chapter_rows, 6, 0); });
  nn::Encoder<double> lstm = exercise::untrained_encoder(9, 5, 4, nn::CellKind::lstm, 12);
  const std::vector<std::vector<std::int64_t>> lstm_rows{{3, 8}, {2, 7, 7, 1, 6, 4, 5}, {6}};
  check.run("another case: an LSTM encoder, 5 pads", [&] {
    check_reading_padding(check, "another case: LSTM, E = 5, H = 4, a 2-token row in T = 7", lstm, lstm_rows, 7, 0);
  });
  check.run("the chapter's batch: your lengths",
            [&] { check_lengths(check, "the chapter's batch", chapter, chapter_rows, 6); });
  check.run("another case: an LSTM batch of 3 rows, one full, one of 1 token",
            [&] { check_lengths(check, "another case: LSTM batch of 3", lstm, lstm_rows, 7); });
  check.run("the reference solution", [&] {
    check.near("the chapter's sentence 2 with 3 pads: yours = the reference's",
               yours::final_state_reading_padding(chapter, {4, 1, 5}, 3),
               reference::final_state_reading_padding(chapter, {4, 1, 5}, 3), 1e-13);
  });
  return check.verdict();
}
