// The check of exercise 11.1 (exercises/11/1.hpp): the predicted multiply-adds per source word against the matrix
// products the library does, counted by a Products that adds up m·n·k (precision/products.hpp) as T_x grows from 6 to
// 10; the predicted scores per word against the chapter's CountingScore; and the answer against which slope the
// counts say the LSTM changes.
#include "exercises/11/1.hpp"

#include <atomic>
#include <memory>
#define yours reference
#include "exercises/11/1.hpp"
#undef yours
#include "exercises/11/counting_score.hpp"
#include "exercises/check.hpp"
#include "models/batch.hpp"
#include "precision/products.hpp"

using namespace attend;
using namespace attend::models;

namespace {

// Every float product of the work on a tape, counted: m·n·k multiply-adds, then declined so that OpenBLAS computes it.
// A product with a bias is asked again without it once declined, so only the second asking is counted.
class CountingProducts : public Products {
 public:
  mutable std::atomic<std::size_t> multiply_adds{0};
  std::string name() const override { return "counting"; }
  bool gemm(bool, bool, std::size_t m, std::size_t n, std::size_t k, float, const float*, std::size_t, const float*,
            std::size_t, float, float*, std::size_t, const float* bias, const WeightOperands&) const override {
    if (bias == nullptr) multiply_adds += m * n * k;
    return false;
  }
};

constexpr std::size_t B = 3, T_y = 5;  // 4 target words and the end token

struct Counted {
  double multiply_adds_per_word = 0, scores_per_word = 0;
};

// The forward pass of a training step (Seq2seq::loss) at T_x = 6 and 10: the products' growth per source word and
// sentence, and the scores per source word and sentence at T_x = 10.
Counted count(const Seq2seqConfig& config) {
  Seq2seq<float> model(config);
  exercise::CountingScore* counter = nullptr;
  if (std::unique_ptr<Score<float>>* slot = exercise::score_slot(model)) {
    auto counting = std::make_unique<exercise::CountingScore>(std::move(*slot));
    counter = counting.get();
    *slot = std::move(counting);
  }
  std::size_t products[2];
  const std::size_t lengths[2] = {6, 10};
  for (std::size_t t = 0; t < 2; ++t) {
    const std::vector<std::vector<std::int64_t>> sources(B, std::vector<std::int64_t>(lengths[t], 5));
    const std::vector<std::vector<std::int64_t>> targets(B, std::vector<std::int64_t>(T_y - 1, 6));
    CountingProducts counting;
    Context context;
    context.products = &counting;
    Tape<float> tape;
    tape.set_context(&context);
    if (counter != nullptr) counter->evaluations = 0;
    model.loss(tape, make_batch(sources, targets));
    products[t] = counting.multiply_adds;
  }
  Counted counted;
  counted.multiply_adds_per_word = static_cast<double>(products[1] - products[0]) / (4.0 * B);
  counted.scores_per_word = counter != nullptr ? static_cast<double>(counter->evaluations) / (10.0 * B) : 0.0;
  return counted;
}

Seq2seqConfig configured(const std::string& decoder, nn::CellKind cell, std::size_t E, std::size_t H) {
  Seq2seqConfig config;
  config.source_vocab_size = config.target_vocab_size = 24;
  config.set_decoder(decoder);
  config.cell = cell;
  config.embedding_dim = E;
  config.hidden_size = H;
  config.seed = 11;
  return config;
}

void check_config(exercise::Check& check, const std::string& name, const Seq2seqConfig& config) {
  check.run(name, [&] {
    Seq2seqConfig vanilla = config;
    vanilla.decoder = DecoderKind::vanilla;
    const Counted whole = count(config), encoder = count(vanilla);
    check.near(name + ": the encoder's multiply-adds per source word", double(yours::encoder_multiply_adds(config)),
               encoder.multiply_adds_per_word, 0.0);
    check.near(name + ": the attention's multiply-adds per source word (the keys)",
               double(yours::attention_multiply_adds(config)),
               whole.multiply_adds_per_word - encoder.multiply_adds_per_word, 0.0);
    check.near(name + ": scores e_ij per source word, T_y = 5", double(yours::scores_per_word(config, T_y)),
               whole.scores_per_word, 0.0);
  });
}

void check_answer(exercise::Check& check) {
  check.run("which slope the LSTM changes", [&] {
    // the chapter's sizes (H = 64, E = 32): the vanilla slope, and the extra slope of each attention model
    bool vanilla_changes = false, attention_changes = false;
    Counted vanilla[2], extra[2][2];
    const nn::CellKind cells[2] = {nn::CellKind::gru, nn::CellKind::lstm};
    for (std::size_t c = 0; c < 2; ++c) {
      vanilla[c] = count(configured("vanilla", cells[c], 32, 64));
      for (std::size_t d = 0; d < 2; ++d) {
        const Counted with = count(configured(d == 0 ? "bahdanau" : "luong-general", cells[c], 32, 64));
        extra[c][d] = {with.multiply_adds_per_word - vanilla[c].multiply_adds_per_word, with.scores_per_word};
      }
    }
    vanilla_changes = vanilla[0].multiply_adds_per_word != vanilla[1].multiply_adds_per_word;
    for (std::size_t d = 0; d < 2; ++d) {
      attention_changes |= extra[0][d].multiply_adds_per_word != extra[1][d].multiply_adds_per_word ||
                           extra[0][d].scores_per_word != extra[1][d].scores_per_word;
    }
    const std::string measured =
        vanilla_changes ? (attention_changes ? "both" : "vanilla") : (attention_changes ? "attention" : "neither");
    const std::string yours = yours::slope_the_cell_changes();
    check.that(yours == measured, "GRU → LSTM at H = 64, E = 32: the slope that changes",
               "yours \"" + yours + "\"; counted per source word: vanilla " +
                   exercise::number(vanilla[0].multiply_adds_per_word) + " → " +
                   exercise::number(vanilla[1].multiply_adds_per_word) + " multiply-adds; Bahdanau's extra " +
                   exercise::number(extra[0][0].multiply_adds_per_word) + " → " +
                   exercise::number(extra[1][0].multiply_adds_per_word) + " multiply-adds and " +
                   exercise::number(extra[0][0].scores_per_word) + " → " +
                   exercise::number(extra[1][0].scores_per_word) + " scores");
  });
}

}  // namespace

int main() {
  exercise::Check check("11.1", "an LSTM in place of the GRU: which slope changes");
  check_config(check, "the chapter's Bahdanau model (GRU, H = 64, E = 32)",
               configured("bahdanau", nn::CellKind::gru, 32, 64));
  check_config(check, "the chapter's Luong-general model with an LSTM",
               configured("luong-general", nn::CellKind::lstm, 32, 64));
  check_config(check, "the vanilla model with an LSTM", configured("vanilla", nn::CellKind::lstm, 32, 64));
  Seq2seqConfig deep = configured("luong-general", nn::CellKind::lstm, 6, 8);
  deep.bidirectional = true;
  deep.num_layers = 2;
  check_config(check, "another case: Luong-general, a bidirectional LSTM of 2 layers, E = 6, H = 8", deep);
  Seq2seqConfig concat = configured("luong-concat", nn::CellKind::rnn_tanh, 5, 8);
  concat.attention_size = 6;
  check_config(check, "another case: Luong-concat, a tanh RNN, attention size 6, H = 8", concat);
  Seq2seqConfig general = configured("bahdanau", nn::CellKind::gru, 4, 7);
  general.score = ScoreKind::general;
  general.bidirectional = true;
  check_config(check, "another case: Bahdanau with the general score, bidirectional, H = 7", general);
  check_config(check, "another case: Luong-dot, GRU, H = 8", configured("luong-dot", nn::CellKind::gru, 4, 8));
  check_answer(check);
  return check.verdict();
}
