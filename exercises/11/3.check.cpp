// The check of exercise 11.3 (exercises/11/3.hpp): the counted scores of a training step against (11.1) as T_y grows at
// T_x = 32 (and on a padded batch, against the shapes the decoder records), the model's loss unchanged by the counter;
// then causal self-attention against the chapter's equations with the mask by plain loops, its zeros, its row sums,
// gradcheck through the mask, and the reference solution.
#include "exercises/11/3.hpp"

#include <cmath>
#include <tuple>
#define yours reference
#include "exercises/11/3.hpp"
#undef yours
#include "autograd/gradcheck.hpp"
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

Seq2seqConfig configured(const std::string& decoder) {
  Seq2seqConfig config;
  config.source_vocab_size = config.target_vocab_size = 24;
  config.hidden_size = 16;
  config.embedding_dim = 8;
  config.set_decoder(decoder);
  config.seed = 11;
  return config;
}

// B sources of the given lengths and targets of T_y − 1 words (and the end token), random words from `seed`.
Batch batch_of(const std::vector<std::size_t>& lengths, std::size_t T_y, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<std::int64_t>> sources, targets;
  for (const std::size_t T_x : lengths) {
    sources.emplace_back(T_x), targets.emplace_back(T_y - 1);
    for (std::int64_t& id : sources.back()) id = 4 + static_cast<std::int64_t>(rng.next() % 20);
    for (std::int64_t& id : targets.back()) id = 4 + static_cast<std::int64_t>(rng.next() % 20);
  }
  return make_batch(sources, targets);
}

void check_counts(exercise::Check& check) {
  for (const std::string decoder : {"bahdanau", "luong-general", "vanilla"}) {
    for (const std::size_t T_y : {4, 8, 16, 32}) {
      if (decoder == std::string("vanilla") && T_y != 8) continue;
      const std::string name = std::string(decoder == "vanilla" ? "another case: " : "") + decoder +
                               ", B = 4, T_x = 32, T_y = " + std::to_string(T_y);
      check.run(name, [&] {
        Seq2seq<float> model(configured(decoder));
        const std::size_t expected = decoder == "vanilla" ? 0 : 4 * 32 * T_y;
        check.near(name + (decoder == "vanilla" ? ": no scores counted" : ": scores counted = (11.1) B·T_x·T_y"),
                   double(yours::count_scores(model, batch_of({32, 32, 32, 32}, T_y, T_y))), double(expected), 0.0);
      });
    }
  }
  check.run("another case: a padded batch", [&] {
    const Batch padded = batch_of({5, 32, 17, 9}, 8, 1);
    Seq2seq<float> model(configured("bahdanau"));
    Tape<float> tape;
    const double before = model.loss(tape, padded).value().item();
    std::size_t recorded = 0;  // the second route: the shapes of the weights forward() records, one α_j (B, S) a step
    for (const Variable<float>& alpha : model.forward(tape, padded).alpha) recorded += alpha.value().size();
    const std::size_t yours = yours::count_scores(model, padded);
    check.near("another case: sources of 5, 32, 17, 9 words, T_y = 8: your count = the recorded α_j's entries",
               double(yours), double(recorded), 0.0);
    Tape<float> again;
    check.near("another case: the loss with your counter in the score slot = the loss without it",
               model.loss(again, padded).value().item(), before, 0.0);
  });
}

std::vector<double> values(const Variable<double>& v) {
  return std::vector<double>(v.value().data(), v.value().data() + v.value().size());
}

// A and Z of (11.4)–(11.6) with the causal mask, by plain loops: A_pr = exp(q_p · k_r / √d_k) / Σ_{u ≤ p} exp(…) for
// r ≤ p, 0 above; z_p = Σ_r A_pr v_r.
std::pair<std::vector<double>, std::vector<double>> by_hand(const Tensor<double>& X, const Tensor<double>& W_Q,
                                                            const Tensor<double>& W_K, const Tensor<double>& W_V) {
  const std::size_t n = X.shape()[0], d_model = X.shape()[1], d_k = W_Q.shape()[1], d_v = W_V.shape()[1];
  const auto project = [&](const Tensor<double>& W, std::size_t p, std::size_t c) {
    double sum = 0;
    for (std::size_t m = 0; m < d_model; ++m) sum += X.at({p, m}) * W.at({m, c});
    return sum;
  };
  std::vector<double> A(n * n, 0.0), Z(n * d_v, 0.0);
  for (std::size_t p = 0; p < n; ++p) {
    double total = 0;
    for (std::size_t r = 0; r <= p; ++r) {
      double dot = 0;
      for (std::size_t c = 0; c < d_k; ++c) dot += project(W_Q, p, c) * project(W_K, r, c);
      A[p * n + r] = std::exp(dot / std::sqrt(static_cast<double>(d_k)));
      total += A[p * n + r];
    }
    for (std::size_t r = 0; r <= p; ++r) {
      A[p * n + r] /= total;
      for (std::size_t c = 0; c < d_v; ++c) Z[p * d_v + c] += A[p * n + r] * project(W_V, r, c);
    }
  }
  return {A, Z};
}

void check_causal(exercise::Check& check, const std::string& name, std::size_t n, std::size_t d_model, std::size_t d_k,
                  std::size_t d_v, std::uint64_t seed) {
  Rng rng(seed);
  const Tensor<double> X = rng.normal_tensor<double>({n, d_model}, 0, 1);
  const Tensor<double> W_Q = rng.normal_tensor<double>({d_model, d_k}, 0, 1);
  const Tensor<double> W_K = rng.normal_tensor<double>({d_model, d_k}, 0, 1);
  const Tensor<double> W_V = rng.normal_tensor<double>({d_model, d_v}, 0, 1);
  check.run(name + ": values", [&] {
    Tape<double> tape;
    const auto [A, Z] =
        yours::causal_self_attention(tape.constant(X), tape.constant(W_Q), tape.constant(W_K), tape.constant(W_V));
    const auto [A_hand, Z_hand] = by_hand(X, W_Q, W_K, W_V);
    double above = 0, worst_sum = 0;
    for (std::size_t p = 0; p < n; ++p) {
      double sum = 0;
      for (std::size_t r = 0; r < n; ++r) {
        sum += A.value().at({p, r});
        if (r > p) above = std::max(above, std::abs(A.value().at({p, r})));
      }
      worst_sum = std::max(worst_sum, std::abs(sum - 1));
    }
    check.near(name + ": A_pr = 0 for r > p, exactly (the largest |A_pr| above the diagonal)", above, 0.0, 0.0);
    check.near(name + ": row p of A sums to 1 over r ≤ p (the largest |Σ_r A_pr − 1|)", worst_sum, 0.0, 1e-14);
    check.near(name + ": (11.5) A = the masked softmax by plain loops", values(A), A_hand, 1e-12);
    check.near(name + ": (11.6) Z = A V by plain loops", values(Z), Z_hand, 1e-12);
  });
  check.run(name + ": gradient", [&] {
    const GradcheckResult result = gradcheck(
        [](Tape<double>&, const std::vector<Variable<double>>& in) {
          return yours::causal_self_attention(in[0], in[1], in[2], in[3]).second;
        },
        {X, W_Q, W_K, W_V});
    check.that(result.passed, name + ": gradcheck of Z with respect to X, W_Q, W_K and W_V",
               result.passed ? "largest |analytic − numeric| " + exercise::number(result.worst_abs_error) + " over " +
                                   std::to_string(result.checked) + " elements"
                             : result.message);
  });
  check.run(name + ": the reference", [&] {
    Tape<double> tape;
    const auto args = std::make_tuple(tape.constant(X), tape.constant(W_Q), tape.constant(W_K), tape.constant(W_V));
    const Variable<double> Z = std::apply(yours::causal_self_attention, args).second;
    const Variable<double> expected = std::apply(reference::causal_self_attention, args).second;
    check.near(name + ": Z = the reference solution's", values(Z), values(expected), 1e-12);
  });
}

}  // namespace

int main() {
  exercise::Check check("11.3", "T_y grows: the counted scores; self-attention with a causal mask");
  check_counts(check);
  check_causal(check, "the chapter's n = 4, d_model = 3, d_k = d_v = 2", 4, 3, 2, 2, 11);
  check_causal(check, "another case: n = 1", 1, 3, 2, 2, 12);
  check_causal(check, "another case: n = 7, d_model = 5, d_k = 3, d_v = 4", 7, 5, 3, 4, 13);
  return check.verdict();
}
