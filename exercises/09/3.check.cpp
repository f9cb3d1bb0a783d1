// The check of exercise 9.3 (exercises/09/3.hpp): the four configurations built into models (their decoder and score
// kinds); the general score on s_{j−1} by hand against decoder->step()'s energies over whole dates (double, 1e-10);
// then bahdanau, bahdanau with the general score, luong-concat, luong-general and vanilla trained alike (scaled down,
// seeds 1–3), and the two predictions against the effects measured on 100 test dates.
#include "exercises/09/3.hpp"

#include <cmath>
#define yours reference
#include "exercises/09/3.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/dates_data.hpp"
#include "models/search.hpp"
#include "models/train.hpp"

using namespace attend;

namespace {

// The library's default decoder: Bahdanau's, with the additive score.
models::Seq2seqConfig base(std::size_t E, std::size_t H, std::uint64_t seed) {
  return exercise::date_model_config("bahdanau", E, H, seed);
}

void check_configure(exercise::Check& check, const std::string& when, const std::string& how) {
  models::Seq2seqConfig config = base(4, 5, 1);
  yours::configure(config, when, how);
  models::Seq2seq<double> model(config);
  const bool before = dynamic_cast<models::BahdanauDecoder<double>*>(model.decoder.get()) != nullptr;
  const bool after = dynamic_cast<models::LuongDecoder<double>*>(model.decoder.get()) != nullptr;
  const models::ScoreKind kind = before  ? dynamic_cast<models::BahdanauDecoder<double>&>(*model.decoder).score->kind()
                                 : after ? dynamic_cast<models::LuongDecoder<double>&>(*model.decoder).score->kind()
                                         : models::ScoreKind::dot;
  const bool right_when = when == "before" ? before : after;
  const bool right_how = how == "general" ? kind == models::ScoreKind::general
                                          : kind == models::ScoreKind::additive || kind == models::ScoreKind::concat;
  check.that(right_when && right_how && (before || after), "configure(\"" + when + "\", \"" + how + "\")",
             "your model: the " +
                 std::string(before  ? "Bahdanau"
                             : after ? "Luong"
                                     : "vanilla") +
                 " decoder" + (before || after ? " with the " + models::to_string(kind) + " score" : ""));
}

// Chapter 8's decoder with the general score, a date with teacher forcing: your e_ij from the library's s_{j−1} at
// every step, against the energies of decoder->step().
void check_walk(exercise::Check& check, const std::string& name, std::size_t E, std::size_t H, std::uint64_t seed,
                const std::string& source, const std::string& target) {
  models::Seq2seqConfig config = base(E, H, seed);
  config.decoder = models::DecoderKind::bahdanau;
  config.score = models::ScoreKind::general;
  models::Seq2seq<double> model(config);
  auto& decoder = dynamic_cast<models::BahdanauDecoder<double>&>(*model.decoder);
  const std::vector<std::int64_t> x = exercise::date_source_ids(source), y = exercise::date_target_ids(target);
  Tape<double> tape;
  const models::Batch one = models::make_batch({x}, {y});
  const models::Encoded<double> encoded = model.encode(tape, one.source, one.source_lengths);
  std::vector<double> mine, library;
  models::DecoderState<double> state = encoded.state;
  for (std::size_t j = 1; j <= y.size() + 1; ++j) {
    const std::int64_t y_prev = j == 1 ? data::Vocabulary::sos_id : y[j - 2];
    const std::vector<double> e_ij =
        yours::general_scores_before(decoder, encoded.memory.annotations.value(), state.h[0].value().to_vector());
    const models::DecoderStep<double> step = decoder.step(Ids(Shape{1}, {y_prev}), state, encoded.memory);
    const std::vector<double> energies = step.energies.value().to_vector();
    mine.insert(mine.end(), e_ij.begin(), e_ij.end());
    library.insert(library.end(), energies.begin(), energies.end());
    state = step.state;
  }
  check.near(name + ": e_ij = s_{j−1}ᵀ W_a h_i, as decoder->step()'s energies (steps 1.." +
                 std::to_string(y.size() + 1) + " one after the other)",
             mine, library, 1e-10);
}

struct Measured {
  double loss = 0, largest_weight = 0;  // means over the seeds
};

// One decoder (by name; "bahdanau-general" is chapter 8's with the general score) trained 200 steps from each seed,
// measured on the test dates: the loss (8.6) and the mean over attention rows of max_i α_ij (greedy outputs).
Measured train_and_measure(const exercise::DatesData& data, const std::string& decoder) {
  Measured measured;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    models::Seq2seqConfig config = base(12, 24, seed);
    if (decoder == "bahdanau-general") {
      config.decoder = models::DecoderKind::bahdanau;
      config.score = models::ScoreKind::general;
    } else {
      config.set_decoder(decoder);
    }
    models::Seq2seq<float> model(config);
    models::train(model, data.sources, data.targets, exercise::dates_training(200, seed));
    Tape<float> tape;
    NoGradGuard<float> no_grad(tape);
    measured.loss += model.loss(tape, data.test).value().item() / 3;
    double largest = 0;
    std::size_t rows = 0;
    for (const models::Hypothesis& h : models::decode(model, data.test.source, data.test.source_lengths)) {
      for (const std::vector<float>& row : h.attention) largest += *std::max_element(row.begin(), row.end()), ++rows;
    }
    measured.largest_weight += rows == 0 ? 0 : largest / static_cast<double>(rows) / 3;
  }
  return measured;
}

}  // namespace

int main() {
  exercise::Check check("9.3", "when the decoder scores, and how");
  for (const char* when : {"before", "after"}) {
    for (const char* how : {"additive", "general"}) {
      const std::string name = std::string("configure(\"") + when + "\", \"" + how + "\")";
      check.run(name, [&] { check_configure(check, when, how); });
    }
  }
  check.run("\"Tuesday 22 June  2083\", E = 8, H = 8", [&] {
    check_walk(check, "\"Tuesday 22 June  2083\", E = 8, H = 8", 8, 8, 1, "Tuesday 22 June  2083", "2083-06-22");
  });
  check.run("another case: \"1ER FÉVR. 1931\", E = 3, H = 5", [&] {
    check_walk(check, "another case: \"1ER FÉVR. 1931\", E = 3, H = 5", 3, 5, 2, "1ER FÉVR. 1931", "1931-02-01");
  });
  // The predictions first: the trainings take seconds, and are run only when there is something to check.
  std::string loss_prediction, weights_prediction;
  check.run("your predictions", [&] {
    loss_prediction = yours::matters_most_for_loss();
    weights_prediction = yours::matters_most_for_weights();
    const bool named = (loss_prediction == "when" || loss_prediction == "how" || loss_prediction == "attention") &&
                       (weights_prediction == "when" || weights_prediction == "how");
    check.that(named, "your predictions name one of the choices each",
               "loss \"" + loss_prediction + "\", weights \"" + weights_prediction + "\"");
    if (!named) loss_prediction.clear();
  });
  if (loss_prediction.empty()) return check.verdict();
  const exercise::DatesData data = exercise::dates_data(3000, 100, true);  // 3,000 training pairs, 100 test dates
  std::vector<Measured> runs;  // bahdanau, bahdanau-general, luong-concat, luong-general, vanilla
  check.run("the five decoders, trained", [&] {
    for (const char* decoder : {"bahdanau", "bahdanau-general", "luong-concat", "luong-general", "vanilla"}) {
      runs.push_back(train_and_measure(data, decoder));
    }
  });
  if (runs.size() != 5) return check.verdict();
  const auto effects = [&](double Measured::*of) {
    const double before = (runs[0].*of + runs[1].*of) / 2, after = (runs[2].*of + runs[3].*of) / 2;
    const double additive = (runs[0].*of + runs[2].*of) / 2, general = (runs[1].*of + runs[3].*of) / 2;
    return std::array<double, 3>{std::abs(before - after), std::abs(additive - general),
                                 std::abs(runs[4].*of - (before + after) / 2)};
  };
  const std::string table = "means of seeds 1–3 (bahdanau, bahdanau + general, luong-concat, luong-general, vanilla)";
  check.run("the held-out loss", [&] {
    const std::array<double, 3> e = effects(&Measured::loss);
    const char* names[] = {"when", "how", "attention"};
    const std::size_t largest = static_cast<std::size_t>(std::max_element(e.begin(), e.end()) - e.begin());
    const std::string& mine = loss_prediction;
    check.that(
        mine == names[largest],
        "the largest effect on the held-out loss (8.6): yours \"" + mine + "\", measured \"" + names[largest] + "\"",
        "when " + exercise::number(e[0]) + ", how " + exercise::number(e[1]) + ", attention " + exercise::number(e[2]) +
            "; " + table + ": " +
            exercise::numbers({runs[0].loss, runs[1].loss, runs[2].loss, runs[3].loss, runs[4].loss}));
  });
  check.run("the weights", [&] {
    const std::array<double, 3> e = effects(&Measured::largest_weight);
    const std::string measured = e[0] > e[1] ? "when" : "how", mine = weights_prediction;
    check.that(mine == measured,
               "the larger effect on the mean largest weight max_i α_ij: yours \"" + mine + "\", measured \"" +
                   measured + "\"",
               "when " + exercise::number(e[0]) + ", how " + exercise::number(e[1]) + "; " + table + ": " +
                   exercise::numbers({runs[0].largest_weight, runs[1].largest_weight, runs[2].largest_weight,
                                      runs[3].largest_weight}));
  });
  return check.verdict();
}
