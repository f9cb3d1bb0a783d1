// The check of exercise 11.2 (exercises/11/2.hpp): the six configurations against the reference's; the scores of one
// training step of each model counted by the chapter's CountingScore against your (11.1); the multiplications and tanh
// of one e_ij counted in plain loops (which must give the library's e_ij) against yours; and the ranking against those
// counts.
#include "exercises/11/2.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#define yours reference
#include "exercises/11/2.hpp"
#undef yours
#include "exercises/11/counting_score.hpp"
#include "exercises/check.hpp"
#include "models/batch.hpp"

using namespace attend;
using namespace attend::models;

namespace {

Seq2seqConfig chapter_config() {
  Seq2seqConfig config;
  config.source_vocab_size = config.target_vocab_size = 24;
  config.hidden_size = 64;
  config.embedding_dim = 32;
  config.seed = 11;
  return config;
}

// "vanilla", "bahdanau", "luong-dot", …, "bahdanau-general".
std::string name_of(const Seq2seqConfig& config) { return config.decoder_name(); }

void check_configs(exercise::Check& check) {
  Seq2seqConfig lstm = chapter_config();
  lstm.cell = nn::CellKind::lstm;
  lstm.attention_size = 10;
  for (const auto& [name, base] : {std::pair<std::string, Seq2seqConfig>{"the chapter's GRU, H = 64", chapter_config()},
                                   {"another case: an LSTM with attention size 10", lstm}}) {
    check.run(name + ": the six decoders", [&, name = name, base = base] {
      const std::vector<Seq2seqConfig> yours = yours::decoder_configs(base),
                                       expected = reference::decoder_configs(base);
      std::string differ;
      for (std::size_t d = 0; d < std::min(yours.size(), expected.size()); ++d) {
        if (yours[d].to_json() != expected[d].to_json() && differ.empty()) {
          differ = "the " + std::to_string(d + 1) + "th: yours " + yours[d].to_json().dump();
        }
      }
      check.that(yours.size() == 6 && differ.empty(),
                 name + ": vanilla, bahdanau, luong-general, luong-dot, luong-concat, bahdanau with general",
                 std::to_string(yours.size()) + " configurations" + (differ.empty() ? "" : "; " + differ));
    });
  }
}

// The scores one training step's forward pass asks for, counted.
std::size_t counted_scores(const Seq2seqConfig& config, std::size_t B, std::size_t T_x, std::size_t T_y) {
  Seq2seq<float> model(config);
  std::unique_ptr<Score<float>>* slot = exercise::score_slot(model);
  if (slot == nullptr) return 0;
  auto counting = std::make_unique<exercise::CountingScore>(std::move(*slot));
  exercise::CountingScore* counter = counting.get();
  *slot = std::move(counting);
  const std::vector<std::vector<std::int64_t>> sources(B, std::vector<std::int64_t>(T_x, 5));
  const std::vector<std::vector<std::int64_t>> targets(B, std::vector<std::int64_t>(T_y - 1, 6));
  Tape<float> tape;
  model.loss(tape, make_batch(sources, targets));
  return counter->evaluations;
}

void check_counts(exercise::Check& check) {
  for (const Seq2seqConfig& config : reference::decoder_configs(chapter_config())) {
    check.run(name_of(config) + ": counted scores", [&] {
      for (const auto& [T_x, T_y] : {std::pair<std::size_t, std::size_t>{8, 12}, {32, 12}, {16, 3}}) {
        const std::string name = name_of(config) + (T_y == 12 ? "" : ", another case") +
                                 ": B = 4, T_x = " + std::to_string(T_x) + ", T_y = " + std::to_string(T_y);
        check.near(name + ": N_scores (11.1) = the CountingScore's count",
                   double(yours::scores_per_step(config, 4, T_x, T_y)), double(counted_scores(config, 4, T_x, T_y)),
                   0.0);
      }
    });
  }
}

// One step's e_ij for all i by plain loops, the keys and the query's part computed first (chapter 6's "once"); the
// multiplications and tanh of the per-(i, j) part counted. Returns the worst difference from the library's e_ij.
struct Counted {
  std::size_t multiplications = 0, tanh = 0;
  double worst = 0;
};

// Row r of a matrix times x, from column `first` on (the part of the row that x covers).
double row_times(const Tensor<double>& W, std::size_t r, const std::vector<double>& x, std::size_t first = 0) {
  double sum = 0;
  for (std::size_t k = 0; k < x.size(); ++k) sum += W.at({r, first + k}) * x[k];
  return sum;
}

Counted by_loops(Score<double>& score, const std::vector<double>& s, const std::vector<std::vector<double>>& h) {
  Counted counted;
  std::vector<double> e(h.size());
  const auto dot_with = [&](const std::vector<double>& a, const std::vector<double>& b) {
    double sum = 0;
    for (std::size_t k = 0; k < a.size(); ++k, ++counted.multiplications) sum += a[k] * b[k];
    return sum;
  };
  if (auto* additive = dynamic_cast<AdditiveScore<double>*>(&score)) {
    const std::size_t A = additive->v_a.value.shape()[1];
    std::vector<double> query(A);  // W_a s: once per step
    for (std::size_t a = 0; a < A; ++a) query[a] = row_times(additive->W_a.value, a, s);
    for (std::size_t i = 0; i < h.size(); ++i) {
      std::vector<double> hidden(A), v(A);
      for (std::size_t a = 0; a < A; ++a) {  // the key U_a h_i: once per h_i
        hidden[a] = std::tanh(query[a] + row_times(additive->U_a.value, a, h[i]));
        v[a] = additive->v_a.value.at({0, a});
      }
      counted.tanh += A;
      e[i] = dot_with(v, hidden);
    }
  } else if (auto* concat = dynamic_cast<ConcatScore<double>*>(&score)) {
    const std::size_t A = concat->v_a.value.shape()[1], Q = s.size();
    std::vector<double> query(A);
    for (std::size_t a = 0; a < A; ++a) query[a] = row_times(concat->W_a.value, a, s);
    for (std::size_t i = 0; i < h.size(); ++i) {
      std::vector<double> hidden(A), v(A);
      for (std::size_t a = 0; a < A; ++a) {
        hidden[a] = std::tanh(query[a] + row_times(concat->W_a.value, a, h[i], Q));
        v[a] = concat->v_a.value.at({0, a});
      }
      counted.tanh += A;
      e[i] = dot_with(v, hidden);
    }
  } else if (auto* general = dynamic_cast<GeneralScore<double>*>(&score)) {
    for (std::size_t i = 0; i < h.size(); ++i) {
      std::vector<double> key(s.size());  // W_a h_i: once per h_i
      for (std::size_t q = 0; q < s.size(); ++q) key[q] = row_times(general->W_a.value, q, h[i]);
      e[i] = dot_with(s, key);
    }
  } else {
    for (std::size_t i = 0; i < h.size(); ++i) e[i] = dot_with(s, h[i]);
  }
  // the library's e_ij for the same query and annotations
  Tape<double> tape;
  Tensor<double> annotations(Shape{1, h.size(), h[0].size()}), query(Shape{1, s.size()});
  for (std::size_t i = 0; i < h.size(); ++i) {
    for (std::size_t k = 0; k < h[i].size(); ++k) annotations.at({0, i, k}) = h[i][k];
  }
  for (std::size_t k = 0; k < s.size(); ++k) query.at({0, k}) = s[k];
  const Tensor<double> library = score.score(tape.constant(query), score.keys(tape.constant(annotations))).value();
  for (std::size_t i = 0; i < h.size(); ++i)
    counted.worst = std::max(counted.worst, std::abs(e[i] - library.at({0, i})));
  return counted;
}

// Counted work per score of the config's score function, at T_x = 5.
Counted per_score(const Seq2seqConfig& config) {
  Seq2seq<double> model(config);
  Rng rng(3);
  const std::size_t K = (config.bidirectional ? 2 : 1) * config.hidden_size, T_x = 5;
  std::vector<double> s(config.hidden_size);
  std::vector<std::vector<double>> h(T_x, std::vector<double>(K));
  for (double& x : s) x = rng.uniform(-1.0, 1.0);
  for (auto& h_i : h) {
    for (double& x : h_i) x = rng.uniform(-1.0, 1.0);
  }
  Counted counted = by_loops(**exercise::score_slot(model), s, h);
  counted.multiplications /= T_x;
  counted.tanh /= T_x;
  return counted;
}

void check_work(exercise::Check& check) {
  std::vector<std::pair<std::string, Seq2seqConfig>> cases;
  for (const Seq2seqConfig& config : reference::decoder_configs(chapter_config())) {
    if (config.decoder != DecoderKind::vanilla) cases.push_back({name_of(config) + ", H = 64", config});
  }
  for (const std::string name : {"bahdanau", "luong-concat"}) {
    Seq2seqConfig config = chapter_config();
    config.set_decoder(name);
    config.attention_size = 24;
    cases.push_back({"another case: " + name + ", attention size 24, H = 64", config});
  }
  Seq2seqConfig general = chapter_config();
  general.set_decoder("luong-general");
  general.bidirectional = true;
  cases.push_back({"another case: luong-general, bidirectional (K = 2H), H = 64", general});
  for (const auto& [name, config] : cases) {
    check.run(name + ": work per score", [&, name = name, config = config] {
      const Counted counted = per_score(config);
      const auto [multiplications, tanh] = yours::work_per_score(config);
      check.that(counted.worst <= 1e-12 && multiplications == counted.multiplications && tanh == counted.tanh,
                 name + ": {multiplications, tanh} per e_ij, keys precomputed",
                 "yours {" + std::to_string(multiplications) + ", " + std::to_string(tanh) + "}, counted {" +
                     std::to_string(counted.multiplications) + ", " + std::to_string(counted.tanh) +
                     "} (the loops' e_ij = the library's to " + exercise::number(counted.worst) + ")");
    });
  }
}

void check_ranking(exercise::Check& check) {
  check.run("the ranking", [&] {
    std::vector<std::string> yours = yours::ranking(), sorted = yours, kinds{"additive", "concat", "dot", "general"};
    std::sort(sorted.begin(), sorted.end());
    // the counted work of each kind at A = H = 64: tanh first, then multiplications
    const auto work = [](const std::string& kind) {
      Seq2seqConfig config = chapter_config();
      config.set_decoder(kind == "additive" ? "bahdanau" : "luong-" + kind);
      const Counted counted = per_score(config);
      return std::make_pair(counted.tanh, counted.multiplications);
    };
    bool ordered = sorted == kinds;
    for (std::size_t k = 0; ordered && k + 1 < yours.size(); ++k) ordered = work(yours[k]) <= work(yours[k + 1]);
    std::string listed;
    for (const std::string& kind : yours) listed += (listed.empty() ? "" : ", ") + kind;
    check.that(ordered, "the four scores from the least work per e_ij to the most (a tanh above a multiplication)",
               "yours: " + listed);
  });
}

}  // namespace

int main() {
  exercise::Check check("11.2", "six decoders: the same number of scores, not the same work");
  check_configs(check);
  check_counts(check);
  check_work(check);
  check_ranking(check);
  return check.verdict();
}
