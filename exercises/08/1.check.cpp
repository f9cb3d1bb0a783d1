// The check of exercise 8.1 (exercises/08/1.hpp): s_0, c_j and s_j by hand for a bidirectional encoder, against the
// library's encode() and decoder->step() with teacher forcing over a whole date (double, so to 1e-10), on the sizes the
// task names and on others (A ≠ H, a one-character source); then the predicted dependence of each half of h_i on each
// character x_k, against the annotations the library computes when x_k is changed.
#include "exercises/08/1.hpp"

#include <cmath>
#define yours reference
#include "exercises/08/1.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/dates_data.hpp"

using namespace attend;

namespace {

std::vector<double> values(const Tensor<double>& t, std::size_t first, std::size_t count) {
  return std::vector<double>(t.data() + first, t.data() + first + count);
}

// A bidirectional Bahdanau model in double, untrained: the equations hold for any weights.
models::Seq2seqConfig bidirectional(std::size_t E, std::size_t H, std::size_t A, std::uint64_t seed) {
  models::Seq2seqConfig config = exercise::date_model_config("bahdanau", E, H, seed);
  config.bidirectional = true;
  config.attention_size = A;
  return config;
}

struct Case {
  std::string name, source, target;
  std::size_t E, H, A;
  std::uint64_t seed;
};

// The library's walk through a whole date with teacher forcing: s_0 from encode(), then y_{j−1}, s_{j−1}, c_j and s_j
// of every step from decoder->step(). Each function of yours is then given the library's inputs of that step, so that
// one mistake is not counted twice.
struct Walk {
  Tensor<double> h;  // (1, T_x, 2H)
  std::vector<double> s_0;
  std::vector<std::int64_t> y_prev;
  std::vector<std::vector<double>> s_prev, c_j, s_j;
};

Walk library_walk(models::Seq2seq<double>& model, const Case& c) {
  auto& decoder = dynamic_cast<models::BahdanauDecoder<double>&>(*model.decoder);
  const std::vector<std::int64_t> x = exercise::date_source_ids(c.source), y = exercise::date_target_ids(c.target);
  Tape<double> tape;
  const models::Batch one = models::make_batch({x}, {y});
  const models::Encoded<double> encoded = model.encode(tape, one.source, one.source_lengths);
  Walk walk;
  walk.h = encoded.memory.annotations.value();
  walk.s_0 = values(encoded.state.h[0].value(), 0, c.H);
  models::DecoderState<double> state = encoded.state;
  for (std::size_t j = 1; j <= y.size() + 1; ++j) {
    walk.y_prev.push_back(j == 1 ? data::Vocabulary::sos_id : y[j - 2]);
    walk.s_prev.push_back(values(state.h[0].value(), 0, c.H));
    const models::DecoderStep<double> step = decoder.step(Ids(Shape{1}, {walk.y_prev.back()}), state, encoded.memory);
    walk.c_j.push_back(values(step.context.value(), 0, 2 * c.H));
    walk.s_j.push_back(values(step.state.h[0].value(), 0, c.H));
    state = step.state;
  }
  return walk;
}

std::vector<double> joined(const std::vector<std::vector<double>>& rows) {
  std::vector<double> all;
  for (const std::vector<double>& row : rows) all.insert(all.end(), row.begin(), row.end());
  return all;
}

void walk(exercise::Check& check, const Case& c) {
  models::Seq2seq<double> model(bidirectional(c.E, c.H, c.A, c.seed));
  const auto& decoder = dynamic_cast<const models::BahdanauDecoder<double>&>(*model.decoder);
  const Walk w = library_walk(model, c);
  const std::string steps = " (steps 1.." + std::to_string(w.y_prev.size()) + " one after the other)";
  check.run(c.name + ": s_0", [&] {
    check.near(c.name + ": s_0 = tanh(W_b [h→_Tx; h←_1] + b_b)", yours::initial_state(decoder, w.h), w.s_0, 1e-10);
  });
  check.run(c.name + ": c_j", [&] {
    std::vector<std::vector<double>> c_j;
    for (const std::vector<double>& s_prev : w.s_prev) c_j.push_back(yours::context(decoder, w.h, s_prev));
    check.near(c.name + ": (8.1)–(8.3) c_j = Σ_i α_ij h_i, 2H numbers a step" + steps, joined(c_j), joined(w.c_j),
               1e-10);
  });
  check.run(c.name + ": s_j", [&] {
    std::vector<std::vector<double>> s_j;
    for (std::size_t j = 0; j < w.y_prev.size(); ++j) {
      s_j.push_back(yours::next_state(decoder, w.y_prev[j], w.s_prev[j], w.c_j[j]));
    }
    check.near(c.name + ": (8.4) s_j = f(s_{j−1}, [E y_{j−1}; c_j])" + steps, joined(s_j), joined(w.s_j), 1e-10);
  });
}

// For every i and k of the source: which halves of h_i change when x_k is replaced by another character.
void dependence(exercise::Check& check, const std::string& name, const std::string& source) {
  models::Seq2seq<double> model(bidirectional(6, 5, 0, 3));
  const std::vector<std::int64_t> x = exercise::date_source_ids(source);
  const data::Vocabulary& vocabulary = exercise::date_vocabularies().source;
  const std::size_t T_x = x.size(), H = 5;
  const auto annotations = [&](const std::vector<std::int64_t>& ids) {
    Tape<double> tape;
    const models::Batch one = models::make_batch({ids});
    return model.encode(tape, one.source, one.source_lengths).memory.annotations.value();
  };
  const Tensor<double> h = annotations(x);
  std::string mismatch;
  std::size_t agreed = 0;
  for (std::size_t k = 1; k <= T_x; ++k) {
    std::vector<std::int64_t> changed = x;
    changed[k - 1] = x[k - 1] == vocabulary.id("5") ? vocabulary.id("6") : vocabulary.id("5");
    const Tensor<double> h_changed = annotations(changed);
    for (std::size_t i = 1; i <= T_x; ++i) {
      bool moved[2] = {false, false};  // h→_i, h←_i
      for (std::size_t m = 0; m < 2 * H; ++m) moved[m / H] |= h.at({0, i - 1, m}) != h_changed.at({0, i - 1, m});
      const std::array<bool, 2> said = yours::sees(i, k);
      if (said[0] == moved[0] && said[1] == moved[1]) {
        ++agreed;
      } else if (mismatch.empty()) {
        const auto yes = [](bool b) { return std::string(b ? "yes" : "no"); };
        mismatch = "i = " + std::to_string(i) + ", k = " + std::to_string(k) + ": yours (h→ " + yes(said[0]) + ", h← " +
                   yes(said[1]) + "), measured (h→ " + yes(moved[0]) + ", h← " + yes(moved[1]) + ")";
      }
    }
  }
  check.that(mismatch.empty(), name + ": which halves of h_i move when x_k changes, for every i, k",
             mismatch.empty() ? "all " + std::to_string(agreed) + " pairs (i, k) as you said" : mismatch);
}

}  // namespace

int main() {
  exercise::Check check("8.1", "a bidirectional encoder: s_0, c_j and s_j by hand, and what h_i has seen");
  const Case cases[] = {
      {"\"Tuesday 22 June  2083\", E = 8, H = 8, A = H", "Tuesday 22 June  2083", "2083-06-22", 8, 8, 0, 1},
      {"another case: \"12/28/1953\", E = 4, H = 7, A = 5", "12/28/1953", "1953-12-28", 4, 7, 5, 2},
      {"another case: a one-character source \"7\"", "7", "2007-07-07", 5, 6, 3, 3},
  };
  for (const Case& c : cases) walk(check, c);
  check.run("\"12/28/1953\": dependence", [&] { dependence(check, "\"12/28/1953\"", "12/28/1953"); });
  check.run("another case: \"1ER FÉVR. 1931\": dependence",
            [&] { dependence(check, "another case: \"1ER FÉVR. 1931\"", "1ER FÉVR. 1931"); });
  return check.verdict();
}
