// The check of exercise 14.2 (exercises/14/2.hpp): remove_source_positions leaves src_pos zero and nothing else
// changed; the encoder of such a model is permutation equivariant; and same_output against the library: the
// teacher-forced output probabilities of a model without source positions (double, random weights) for pairs of dates.
#include "exercises/14/2.hpp"

#include <algorithm>
#include <cmath>
#define yours reference
#include "exercises/14/2.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/dates_data.hpp"

using namespace attend;

namespace {

// The dates model, small, with learned positions (so that the source's can be removed), in double, without dropout.
models::TransformerConfig dates_config(std::uint64_t seed) {
  models::TransformerConfig config;
  config.source_vocab_size = exercise::date_vocabularies().source.size();
  config.target_vocab_size = exercise::date_vocabularies().target.size();
  config.d_model = 16, config.heads = 2, config.ff = 32;
  config.encoder_layers = config.decoder_layers = 2;
  config.dropout = 0.0;
  config.positions = models::PositionKind::learned;
  config.max_positions = 48, config.max_target_length = 12;
  config.seed = seed;
  return config;
}

void check_removal(exercise::Check& check) {
  models::TransformerModel<double> model(dates_config(1)), untouched(dates_config(1));
  yours::remove_source_positions(model);
  double src = 0, other = 0;
  const nn::NamedParameters<double> after = model.parameters(), before = untouched.parameters();
  for (std::size_t k = 0; k < after.size(); ++k) {
    const Tensor<double>&a = after[k].second->value, &b = before[k].second->value;
    for (std::size_t e = 0; e < a.size(); ++e) {
      if (after[k].first == "src_pos") {
        src = std::max(src, std::abs(a.data()[e]));
      } else {
        other = std::max(other, std::abs(a.data()[e] - b.data()[e]));
      }
    }
  }
  check.that(src == 0, "src_pos = 0 after remove_source_positions", "largest |src_pos| " + exercise::number(src));
  check.that(other == 0, "tgt_pos and every other parameter as they were", "largest change " + exercise::number(other));
}

// The permutation test on the encoder of a model without source positions: reversing the source reverses the memory.
void check_equivariance(exercise::Check& check) {
  models::TransformerModel<double> model(dates_config(2));
  yours::remove_source_positions(model);
  model.eval();
  std::vector<std::int64_t> forward = exercise::date_source_ids("Saturday 09 May 2018"),
                            backward(forward.rbegin(), forward.rend());
  const models::Batch batch = models::make_batch({forward, backward});
  Tape<double> tape;
  const Tensor<double> memory = model.encode(tape, batch.source, batch.source_lengths).memory.value();  // (2, S, D)
  const std::size_t S = forward.size(), D = 16;
  double worst = 0;
  for (std::size_t p = 0; p < S; ++p) {
    for (std::size_t c = 0; c < D; ++c) {
      worst = std::max(worst, std::abs(memory.data()[p * D + c] - memory.data()[(S + (S - 1 - p)) * D + c]));
    }
  }
  check.that(worst <= 1e-12,
             "without source positions, the encoder's output of the reversed source is its output "
             "reversed (permutation equivariance)",
             "largest difference " + exercise::number(worst) + " (tolerance 1e-12)");
}

// The largest difference of the teacher-forced log-probabilities (every step of the target "2018-05-09") between
// sources a and b, for a model without source positions.
double output_difference(models::TransformerModel<double>& model, const std::string& a, const std::string& b) {
  const std::vector<std::int64_t> target = exercise::date_target_ids("2018-05-09");
  const models::Batch batch =
      models::make_batch({exercise::date_source_ids(a), exercise::date_source_ids(b)}, {target, target});
  Tape<double> tape;
  const Tensor<double> z = log_softmax(model.forward(tape, batch), -1).value();  // (2, T, V)
  const std::size_t half = z.size() / 2;
  double worst = 0;
  for (std::size_t k = 0; k < half; ++k) worst = std::max(worst, std::abs(z.data()[k] - z.data()[half + k]));
  return worst;
}

void check_pairs(exercise::Check& check, const std::string& name,
                 const std::vector<std::pair<std::string, std::string>>& pairs) {
  for (std::uint64_t seed : {3, 4}) {
    models::TransformerModel<double> model(dates_config(seed));
    yours::remove_source_positions(model);
    model.eval();
    for (const auto& [a, b] : pairs) {
      const double difference = output_difference(model, a, b);
      const bool measured = difference <= 1e-9, predicted = yours::same_output(a, b);
      check.that(predicted == measured,
                 name + ", weights of seed " + std::to_string(seed) + ": \"" + a + "\" and \"" + b + "\"",
                 std::string("you say ") + (predicted ? "the same output" : "different outputs") +
                     "; the largest difference of log p(y_j | …) is " + exercise::number(difference) + " (" +
                     (measured ? "the same" : "different") + ")");
    }
  }
}

}  // namespace

int main() {
  exercise::Check check("14.2", "the Transformer without positions");
  check.run("remove_source_positions", [&] { check_removal(check); });
  check.run("the permutation test", [&] { check_equivariance(check); });
  check.run("same_output", [&] {
    check_pairs(check, "the chapter's date", {{"09 May 2018", "May 09 2018"}, {"09 May 2018", "9 May 2018"}});
    check_pairs(check, "another case: digits swapped",
                {{"12 May 2018", "21 May 2018"}, {"03/05/2018", "05/03/2018"}, {"11 May 2018", "12 May 2018"}});
    check_pairs(check, "another case: a space moved, a capital",
                {{"09 May 2018", "09 May2018 "}, {"09 May 2018", "09 may 2018"}});
    check_pairs(check, "another case: accents",
                {{"1er août 1999", "1er oûta 1999"}, {"1er août 1999", "1er aout 1999"}});
  });
  return check.verdict();
}
