// The check of exercise 12.1 (exercises/12/1.hpp): F against the width of the library's output layer W_o; the widened
// Luong-general configuration against the Bahdanau model's features; the H of equal parameter counts against the
// library's parameter_count on both sides of it and against the reference; then three seeds of the chapter's Spanish →
// English training scaled down, with the claims that Luong-general at the same H is far behind Bahdanau and that the
// widened one comes within 0.15 nats of it.
#include "exercises/12/1.hpp"

#include <cmath>
#define yours reference
#include "exercises/12/1.hpp"
#undef yours
#include "exercises/12/spanish_data.hpp"
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

Seq2seqConfig configured(const std::string& decoder, std::size_t V_x, std::size_t V_y, std::size_t E, std::size_t H) {
  Seq2seqConfig config;
  config.source_vocab_size = V_x;
  config.target_vocab_size = V_y;
  config.set_decoder(decoder);
  config.embedding_dim = E;
  config.hidden_size = H;
  config.seed = 1;
  return config;
}

void check_features(exercise::Check& check) {
  Seq2seqConfig both_ways = configured("bahdanau", 50, 40, 6, 9), dot = configured("luong-dot", 50, 40, 6, 9);
  both_ways.bidirectional = true;
  const std::pair<std::string, Seq2seqConfig> cases[] = {
      {"the chapter's Bahdanau model (E = 64, H = 128)", configured("bahdanau", 13607, 8207, 64, 128)},
      {"the chapter's vanilla model", configured("vanilla", 13607, 8207, 64, 128)},
      {"the chapter's Luong-general model", configured("luong-general", 13607, 8207, 64, 128)},
      {"another case: a bidirectional Bahdanau model, E = 6, H = 9", both_ways},
      {"another case: Luong-dot, E = 6, H = 9", dot}};
  for (const auto& [name, config] : cases) {
    check.run(name + ": F", [&, name = name, config = config] {
      const std::size_t F = Seq2seq<float>(config).decoder->output.W.value.shape()[1];
      check.near(name + ": F = the width of W_o", double(yours::output_features(config)), double(F), 0.0);
    });
  }
  for (const auto& [name, bahdanau] : {cases[0], cases[3]}) {
    check.run(name + ": widened", [&, name = name, bahdanau = bahdanau] {
      const Seq2seqConfig luong = yours::widened_luong(bahdanau);
      const std::size_t F = Seq2seq<float>(bahdanau).decoder->output.W.value.shape()[1];
      Seq2seqConfig same = luong;
      same.hidden_size = bahdanau.hidden_size;
      same.set_decoder("bahdanau");
      check.that(luong.decoder == DecoderKind::luong && luong.score == ScoreKind::general && luong.hidden_size == F &&
                     same.to_json() == bahdanau.to_json(),
                 name + ": widened to Luong-general with H = the Bahdanau model's F, nothing else changed",
                 "yours: " + luong.decoder_name() + ", H = " + std::to_string(luong.hidden_size) +
                     " (F = " + std::to_string(F) + ")");
    });
  }
}

void check_equal_parameters(exercise::Check& check) {
  Seq2seqConfig lstm = configured("luong-general", 300, 200, 12, 10);
  lstm.cell = nn::CellKind::lstm;
  lstm.bidirectional = true;
  const std::size_t bahdanau = Seq2seq<float>(configured("bahdanau", 1427, 1251, 32, 64)).parameter_count();
  Seq2seqConfig at_37 = configured("luong-general", 300, 200, 12, 37);
  const struct {
    std::string name;
    Seq2seqConfig config;
    std::size_t parameters;
  } cases[] = {{"Luong-general at a Bahdanau model's count (V 1427/1251, E = 32, H = 64)",
                configured("luong-general", 1427, 1251, 32, 64), bahdanau},
               {"vanilla at the same count", configured("vanilla", 1427, 1251, 32, 64), bahdanau},
               {"another case: a bidirectional LSTM Luong-general at 100,000", lstm, 100000},
               {"another case: exactly the count of H = 37", at_37, Seq2seq<float>(at_37).parameter_count()}};
  for (const auto& c : cases) {
    check.run(c.name, [&] {
      const std::size_t H = yours::equal_parameter_hidden(c.config, c.parameters);
      const auto distance = [&](std::size_t h) {
        Seq2seqConfig config = c.config;
        config.hidden_size = h;
        return std::abs(double(Seq2seq<float>(config).parameter_count()) - double(c.parameters));
      };
      const double here = H > 0 ? distance(H) : 0, below = H > 1 ? distance(H - 1) : INFINITY;
      check.that(H > 0 && here < below && here <= distance(H + 1),
                 c.name + ": the parameter count at your H is the closest (H − 1 is further, H + 1 not closer)",
                 "yours H = " + std::to_string(H) + ": off by " + exercise::number(here) +
                     "; H − 1: " + exercise::number(below) + "; H + 1: " + exercise::number(distance(H + 1)));
      check.near(c.name + ": H = the reference's", double(H),
                 double(reference::equal_parameter_hidden(c.config, c.parameters)), 0.0);
    });
  }
}

// The mean cross-entropy on the test sentences (their first reference) after 200 steps of 32 pairs.
double test_loss(const exercise::SmallCorpus& corpus, const Seq2seqConfig& config, std::uint64_t seed) {
  Seq2seqConfig seeded = config;
  seeded.seed = seed;
  Seq2seq<float> model(seeded);
  exercise::train_on(corpus, model, seed);
  Tape<float> tape;
  return model.loss(tape, make_batch(corpus.test_sources, corpus.test_targets)).value().item();
}

void check_training(exercise::Check& check) {
  exercise::SmallCorpus corpus;
  check.run("the data: tatoeba/spa-eng.tsv", [&] { corpus = exercise::small_corpus(); });
  if (corpus.sources.empty()) return;
  for (const std::uint64_t seed : {1, 2, 3}) {
    const std::string name = "seed " + std::to_string(seed);
    check.run(name + ": three trainings", [&] {
      const Seq2seqConfig bahdanau = configured("bahdanau", corpus.source.size(), corpus.target.size(), 16, 16);
      const Seq2seqConfig luong = configured("luong-general", corpus.source.size(), corpus.target.size(), 16, 16);
      const Seq2seqConfig widened = yours::widened_luong(bahdanau);
      const double b = test_loss(corpus, bahdanau, seed), l = test_loss(corpus, luong, seed);
      const double w = test_loss(corpus, widened, seed);
      const std::string losses = "test loss: Bahdanau " + exercise::number(b) + ", Luong-general H = 16 " +
                                 exercise::number(l) + ", widened (H = " + std::to_string(widened.hidden_size) + ") " +
                                 exercise::number(w);
      check.that(l >= b + 0.25, name + ": at the same H, Luong-general's test loss is at least 0.25 above Bahdanau's",
                 losses);
      check.that(std::abs(w - b) <= 0.15, name + ": widened, Luong-general's test loss is within 0.15 of Bahdanau's",
                 losses);
    });
  }
}

}  // namespace

int main() {
  exercise::Check check("12.1", "Luong-general's output layer: as wide as Bahdanau's, and at equal parameters");
  check_features(check);
  check_equal_parameters(check);
  check_training(check);
  return check.verdict();
}
