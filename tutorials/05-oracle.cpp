// Chapter 5 — an oracle tells where to look (docs/05-oracle.md).
//
// Before anything is learned, a decoder is *told* where to look: an oracle hands it weights α_jt, how much output word
// j draws on source word t, and the context of step j is the weighted average of the annotations, c_j = Σ_t α_jt h_t.
// This program computes those contexts for "the European Economic Area" -> "la zone économique européenne", then the
// hard version (look at one word only: α one-hot), and shows why a model must compute a soft choice from scores it
// learns instead: the hard choice has no gradient with respect to the scores (checked against finite differences), the
// soft one has, and it tends to the hard one as the scores are scaled up; and a hand-set table of weights cannot follow
// the words when they change places. Deterministic; exits with status 1 if a check fails. --small changes nothing
// (the run is instant).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "models/attention.hpp"
#include "nn/recurrent.hpp"
#include "plot/svg.hpp"
#include "tutorials/common.hpp"

using namespace attend;            // Tensor, Tape, Variable, Rng, and nn::, models::, data::, plot::
using namespace attend::tutorial;  // this folder's helpers (common.hpp)

namespace {

// A (1, n) tensor holding v: one batch row of weights or scores.
Tensor<double> as_row(const std::vector<double>& v) {
  Tensor<double> t(Shape{1, v.size()});
  std::copy(v.begin(), v.end(), t.data());
  return t;
}

// Σ_t alpha_t h_t with plain doubles, no tape (for the finite differences).
std::vector<double> weighted_average(const std::vector<double>& alpha, const std::vector<std::vector<double>>& h) {
  std::vector<double> c(h[0].size(), 0.0);
  for (std::size_t t = 0; t < h.size(); ++t)
    for (std::size_t d = 0; d < c.size(); ++d) c[d] += alpha[t] * h[t][d];
  return c;
}

// softmax(β e) with plain doubles: exp(β e_t - m) / Σ_k exp(β e_k - m), m = max_k β e_k.
std::vector<double> softmax_of(const std::vector<double>& e, double beta) {
  const double m = beta * *std::max_element(e.begin(), e.end());
  std::vector<double> alpha(e.size());
  double total = 0;
  for (std::size_t t = 0; t < e.size(); ++t) total += alpha[t] = std::exp(beta * e[t] - m);
  for (double& a : alpha) a /= total;
  return alpha;
}

// The one-hot vector of argmax_t e_t (the first one on a tie).
std::vector<double> one_hot_argmax(const std::vector<double>& e) {
  std::vector<double> alpha(e.size(), 0.0);
  alpha[static_cast<std::size_t>(std::max_element(e.begin(), e.end()) - e.begin())] = 1.0;
  return alpha;
}

// The Jacobian ∂c_d/∂e_t read off the tape: one backward pass per component d of c, seeded with the unit vector of d.
std::vector<std::vector<double>> jacobian_from_tape(Tape<double>& tape, const Variable<double>& c,
                                                    const Variable<double>& e) {
  const std::size_t H = c.shape()[1];
  std::vector<std::vector<double>> J;
  for (std::size_t d = 0; d < H; ++d) {
    Tensor<double> seed(c.shape());
    seed.data()[d] = 1.0;
    tape.backward(c, seed);
    J.push_back(row_of(e.grad(), 0));
  }
  return J;
}

// `text` padded with spaces to `width` characters (UTF-8 aware, so that "é" and "β" count as one column).
std::string padded(const std::string& text, std::size_t width) {
  std::size_t characters = 0;
  for (const char ch : text) characters += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return text + std::string(width > characters ? width - characters : 0, ' ');
}

std::string lower(std::string word) {
  for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return word;
}

// [docs:annotations]
// The annotations h_t: chapter 2's GRU encoder (untrained, seed 5; its configuration encoder_config is in common.hpp)
// over the source, the words as ids 1..4.
Variable<double> annotations(Tape<double>& tape, nn::Encoder<double>& encoder, std::size_t T_x) {
  const Ids tokens(Shape{1, T_x}, {1, 2, 3, 4});
  return encoder(tape, tokens, {static_cast<std::int64_t>(T_x)}).outputs;  // h: (1, T_x, H)
}
// [docs:end]

// h_t as plain doubles, for the loops and finite differences below; prints each next to its word.
std::vector<std::vector<double>> plain_annotations(const Variable<double>& h, const std::vector<std::string>& source) {
  std::vector<std::vector<double>> h_plain;
  for (std::size_t t = 0; t < source.size(); ++t) {
    h_plain.push_back(row_of(h.value(), t));
    std::printf("  h_%zu = %s   %s\n", t + 1, vector_string(h_plain[t]).c_str(), source[t].c_str());
  }
  return h_plain;
}

// The oracle's weights and the contexts they give.
struct Oracle {
  std::vector<std::vector<double>> alpha;  // α_jt: (T_y, T_x)
  std::vector<Variable<double>> c;         // c_j: T_y of (1, H)
};

Oracle oracle(Tape<double>& tape, const Variable<double>& h, std::size_t T_y) {
  // [docs:oracle]
  // The oracle's weights α_jt: row j is output word j, column t source word t; every row sums to 1. French puts the
  // adjectives after the noun, so the rows run against the columns. "la" and "européenne" also glance at "Area":
  // their feminine form agrees with "zone".
  const std::vector<std::vector<double>> alpha{
      // the  European Economic  Area
      {0.7, 0.0, 0.0, 0.3},  // la
      {0.0, 0.0, 0.0, 1.0},  // zone
      {0.0, 0.0, 1.0, 0.0},  // économique
      {0.0, 0.8, 0.0, 0.2},  // européenne
  };
  std::vector<Variable<double>> c;
  for (std::size_t j = 0; j < T_y; ++j) {
    // (5.1)  c_j = Σ_t α_jt h_t: the weighted average of the annotations, (1, H)
    c.push_back(models::context(tape.constant(as_row(alpha[j])), h));
  }
  // [docs:end]
  return {alpha, c};
}

// Prints each c_j as its sum, checks (5.1) against a plain loop, and draws the weights.
void show_oracle(const tutorial::Options& options, const std::vector<std::string>& source,
                 const std::vector<std::string>& target, const Oracle& oracle,
                 const std::vector<std::vector<double>>& h_plain) {
  const std::vector<std::vector<double>>& alpha = oracle.alpha;
  const std::vector<Variable<double>>& c = oracle.c;
  const std::size_t T_x = source.size(), T_y = target.size(), H = h_plain[0].size();
  std::printf("\nthe oracle's weights and the contexts c_j = Σ_t α_jt h_t (5.1)\n");
  for (std::size_t j = 0; j < T_y; ++j) {
    std::string sum;
    for (std::size_t t = 0; t < T_x; ++t) {
      if (alpha[j][t] == 0) continue;
      char term[32];
      std::snprintf(term, sizeof term, "%s%.1f h_%zu", sum.empty() ? "" : " + ", alpha[j][t], t + 1);
      sum += term;
    }
    std::printf("  c_%zu = %s = %-18s %s\n", j + 1, vector_string(row_of(c[j].value(), 0)).c_str(), sum.c_str(),
                target[j].c_str());
  }
  double worst = 0;
  for (std::size_t j = 0; j < T_y; ++j) {
    for (std::size_t d = 0; d < H; ++d) {
      double c_jd = 0;  // (5.1) as a plain loop
      for (std::size_t t = 0; t < T_x; ++t) c_jd += alpha[j][t] * h_plain[t][d];
      worst = std::max(worst, std::abs(c_jd - c[j].value().at({0, d})));
    }
  }
  tutorial::check("(5.1) c_j from models::context vs the hand loop", worst, 1e-15);
  plot::HeatmapOptions heatmap;
  heatmap.title = "the oracle's alignment α_jt";
  heatmap.x_label = "source word t";
  heatmap.y_label = "output word j";
  tutorial::write_figure(options, "05-oracle-alignment.svg", plot::attention_svg(source, target, alpha, heatmap));
}

// (5.2)-(5.3): each output word looks at the one source word with the largest weight.
void hard_choice(Tape<double>& tape, const Variable<double>& h, const std::vector<std::string>& source,
                 const std::vector<std::string>& target, const std::vector<std::vector<double>>& alpha,
                 const std::vector<std::vector<double>>& h_plain) {
  const std::size_t T_x = source.size(), T_y = target.size(), H = h_plain[0].size();
  // [docs:hard]
  std::vector<Variable<double>> hard_c;
  std::vector<std::size_t> t_star;
  for (std::size_t j = 0; j < T_y; ++j) {
    // (5.2)  t*_j = argmax_t α_jt: the hard choice keeps only the word with the largest weight
    t_star.push_back(static_cast<std::size_t>(std::max_element(alpha[j].begin(), alpha[j].end()) - alpha[j].begin()));
    // (5.3)  c_j = Σ_t [t = t*_j] h_t = h_{t*_j}: the weights are one-hot
    std::vector<double> one_hot(T_x, 0.0);
    one_hot[t_star[j]] = 1.0;
    hard_c.push_back(models::context(tape.constant(as_row(one_hot)), h));
  }
  // [docs:end]
  std::printf("\nthe hard choice: each output word looks at one source word, c_j = h_t*\n");
  double worst = 0;
  for (std::size_t j = 0; j < T_y; ++j) {
    std::printf("  c_%zu = h_%zu = %s   %s <- %s\n", j + 1, t_star[j] + 1,
                vector_string(row_of(hard_c[j].value(), 0)).c_str(), padded(target[j], 11).c_str(),
                source[t_star[j]].c_str());
    for (std::size_t d = 0; d < H; ++d) {
      worst = std::max(worst, std::abs(hard_c[j].value().at({0, d}) - h_plain[t_star[j]][d]));
    }
  }
  tutorial::check("(5.3) hard c_j vs h_t* itself", worst, 0.0);
}

// Hand-set scores for one output word, the soft and the hard choice on the tape, and ∂c_d/∂e_jt of each.
struct Choices {
  std::vector<double> e_j;                          // the scores e_jt
  std::vector<std::vector<double>> J_soft, J_hard;  // ∂c_d/∂e_jt, (H, T_x)
};

Choices soft_and_hard(Tape<double>& tape, const Variable<double>& h) {
  // [docs:scores]
  // Scores e_jt for the last output word, "européenne": how well each source word fits (hand-set here; chapter 6
  // computes them). The soft choice turns them into weights with a softmax, the hard choice with an argmax.
  const std::vector<double> e_j{-0.5, 1.5, 0.2, 0.9};
  const Variable<double> e = tape.leaf(as_row(e_j));  // a leaf: we want ∂c/∂e
  // (5.4)  α_jt = exp(e_jt) / Σ_k exp(e_jk): the soft choice; every word keeps some weight
  const Variable<double> soft_c_j = models::context(softmax(e, 1), h);
  // (5.5)  α_jt = [t = argmax_k e_jk]: the hard choice. The one-hot vector is computed from e's values, so on the
  // tape it is a constant: no path leads from c back to e.
  const Variable<double> hard_c_j = models::context(tape.constant(as_row(one_hot_argmax(e_j))), h);
  const std::vector<std::vector<double>> J_soft = jacobian_from_tape(tape, soft_c_j, e);  // ∂c_d/∂e_jt, (H, T_x)
  const std::vector<std::vector<double>> J_hard = jacobian_from_tape(tape, hard_c_j, e);
  // [docs:end]
  return {e_j, J_soft, J_hard};
}

// The two Jacobians by central differences, against the tape's.
void check_jacobians(const Choices& choices, const std::vector<std::vector<double>>& h_plain, double eps) {
  const std::vector<double>& e_j = choices.e_j;
  const std::vector<std::vector<double>>& J_soft = choices.J_soft;
  const std::vector<std::vector<double>>& J_hard = choices.J_hard;
  const std::size_t T_x = h_plain.size(), H = h_plain[0].size();
  // [docs:finite-differences]
  // The same Jacobians by central differences: ∂c_d/∂e_t ≈ (c_d(e + ε u_t) - c_d(e - ε u_t)) / 2ε, u_t a unit vector
  double worst_soft = 0, worst_hard = 0;
  for (std::size_t t = 0; t < T_x; ++t) {
    std::vector<double> e_plus = e_j, e_minus = e_j;
    e_plus[t] += eps;
    e_minus[t] -= eps;
    const auto soft_plus = weighted_average(softmax_of(e_plus, 1), h_plain);
    const auto soft_minus = weighted_average(softmax_of(e_minus, 1), h_plain);
    const auto hard_plus = weighted_average(one_hot_argmax(e_plus), h_plain);
    const auto hard_minus = weighted_average(one_hot_argmax(e_minus), h_plain);
    for (std::size_t d = 0; d < H; ++d) {
      worst_soft = std::max(worst_soft, std::abs(J_soft[d][t] - (soft_plus[d] - soft_minus[d]) / (2 * eps)));
      worst_hard = std::max(worst_hard, std::abs(J_hard[d][t] - (hard_plus[d] - hard_minus[d]) / (2 * eps)));
    }
  }
  // [docs:end]
  std::printf("\nscores for \"européenne\"          e_j = %s\n", vector_string(e_j).c_str());
  std::printf("the soft choice's weights  softmax(e_j) = %s\n", vector_string(softmax_of(e_j, 1)).c_str());
  std::printf("  ∂c_d/∂e_jt from the tape   soft (5.4)                        hard (5.5)\n");
  for (std::size_t d = 0; d < H; ++d) {
    std::printf("  d = %zu                      %s   %s\n", d + 1, vector_string(J_soft[d]).c_str(),
                vector_string(J_hard[d]).c_str());
  }
  tutorial::check("(5.4) soft: tape's ∂c/∂e vs finite differences", worst_soft, 1e-8);
  tutorial::check("(5.5) hard: tape's ∂c/∂e (zero) vs finite differences", worst_hard, 0.0);
}

// c_j1 as one score moves: a step for the hard choice, smooth for the soft one (drawn for three values of β).
void sweep(const tutorial::Options& options, const std::vector<double>& e_j,
           const std::vector<std::vector<double>>& h_plain, double eps) {
  // [docs:sweep]
  // One score swept across the others: component d = 1 of c_j as e_j1 (the score of "the") moves, all else fixed.
  auto hard_at = [&](double e_1) {
    std::vector<double> scores = e_j;
    scores[0] = e_1;
    return weighted_average(one_hot_argmax(scores), h_plain)[0];
  };
  auto soft_at = [&](double e_1, double beta) {
    std::vector<double> scores = e_j;
    scores[0] = e_1;
    return weighted_average(softmax_of(scores, beta), h_plain)[0];
  };
  // [docs:end]
  std::printf("\nsweeping e_j1 (the score of \"the\"); component d = 1 of c and its slope by finite differences\n");
  std::printf("  %6s %10s %14s %10s %14s\n", "e_j1", "hard c_1", "hard dc_1/de", "soft c_1", "soft dc_1/de");
  for (const double e_1 : {-1.0, 0.0, 1.0, 1.4, 1.5, 1.6, 2.0, 3.0}) {
    std::printf("  %6.2f %10.3f %14.4g %10.3f %14.4g%s\n", e_1, hard_at(e_1),
                (hard_at(e_1 + eps) - hard_at(e_1 - eps)) / (2 * eps) + 0.0, soft_at(e_1, 1),
                (soft_at(e_1 + eps, 1) - soft_at(e_1 - eps, 1)) / (2 * eps),
                e_1 == 1.5 ? "   <- tie with e_j2: the argmax jumps" : "");
  }
  std::vector<plot::Series> curves{
      {"hard (argmax)", {}, {}}, {"soft, β = 1", {}, {}}, {"soft, β = 5", {}, {}}, {"soft, β = 20", {}, {}}};
  for (int k = 0; k <= 80; ++k) {
    const double e_1 = -1.0 + 0.05 * k;
    for (auto& curve : curves) curve.x.push_back(e_1);
    curves[0].y.push_back(hard_at(e_1));
    curves[1].y.push_back(soft_at(e_1, 1));
    curves[2].y.push_back(soft_at(e_1, 5));
    curves[3].y.push_back(soft_at(e_1, 20));
  }
  plot::LineChartOptions chart;
  chart.title = "c_j1 as the score of \"the\" moves (e_j2 = 1.5)";
  chart.x_label = "e_j1";
  chart.y_label = "c_j1";
  tutorial::write_figure(options, "05-hard-vs-soft.svg", plot::line_chart_svg(curves, chart));
}

// (5.6): the softmax of β e tends to the hard choice as β grows; its weight off t*, against the closed form.
void limit(Tape<double>& tape, const Variable<double>& h, const std::vector<double>& e_j,
           const std::vector<std::vector<double>>& h_plain, const std::vector<std::string>& source) {
  const std::size_t T_x = source.size(), H = h_plain[0].size();
  const std::size_t t_max = static_cast<std::size_t>(std::max_element(e_j.begin(), e_j.end()) - e_j.begin());
  const std::vector<double> c_hard = weighted_average(one_hot_argmax(e_j), h_plain);
  std::printf("\nthe softmax of scaled scores tends to the hard choice (t* = %zu, \"%s\")\n", t_max + 1,
              source[t_max].c_str());
  std::printf("       β    Σ_t≠t* α_jt    closed form  max|c - h_t*|       max|∂c/∂e|\n");
  double worst_closed_form = 0, worst_at_largest = 0;
  // [docs:limit]
  for (const double beta : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
    const Variable<double> e_beta = tape.leaf(as_row(e_j));
    // (5.6)  α_jt(β) = exp(β e_jt) / Σ_k exp(β e_jk): β → ∞ gives the one-hot of argmax_t e_jt
    const Variable<double> alpha_beta = softmax(e_beta * beta, 1);
    const Variable<double> c_beta = models::context(alpha_beta, h);
    // the weight left on the other words, and its closed form S / (1 + S) with S = Σ_t≠t* exp(-β (e_jt* - e_jt))
    double rest = 0, S = 0;
    for (std::size_t t = 0; t < T_x; ++t) {
      if (t == t_max) continue;
      rest += alpha_beta.value().data()[t];
      S += std::exp(-beta * (e_j[t_max] - e_j[t]));
    }
    // [docs:end]
    worst_closed_form = std::max(worst_closed_form, std::abs(rest - S / (1 + S)) / (S / (1 + S)));
    double gap = 0, slope = 0;
    for (std::size_t d = 0; d < H; ++d) gap = std::max(gap, std::abs(c_beta.value().data()[d] - c_hard[d]));
    for (const auto& row : jacobian_from_tape(tape, c_beta, e_beta))
      for (const double v : row) slope = std::max(slope, std::abs(v));
    if (beta == 100.0) {
      const std::vector<double> one_hot = one_hot_argmax(e_j);
      for (std::size_t t = 0; t < T_x; ++t)
        worst_at_largest = std::max(worst_at_largest, std::abs(alpha_beta.value().data()[t] - one_hot[t]));
    }
    std::printf("  %6.0f %14.3e %14.3e %14.3e %16.3e\n", beta, rest, S / (1 + S), gap, slope);
  }
  tutorial::check("(5.6) weight off t*: softmax vs closed form S/(1+S), relative", worst_closed_form, 1e-12);
  tutorial::check("(5.6) softmax(100 e) vs the one-hot hard choice", worst_at_largest, 1e-12);
}

// (5.7): a fixed table of weights fails on a second sentence with the words in other places; weights computed from
// the words do not.
void reordering(const std::vector<std::string>& source, const std::vector<std::string>& target,
                const std::vector<std::vector<double>>& alpha) {
  const std::size_t T_x = source.size(), T_y = target.size();
  // [docs:reordering]
  // A second sentence with the same words in other places: "the area is European" -> "la zone est européenne".
  const std::vector<std::string> source_2{"the", "area", "is", "European"};
  const std::vector<std::string> target_2{"la", "zone", "est", "européenne"};
  // The word each output word translates: what an oracle knows, and what a model must find out from the words.
  const std::map<std::string, std::string> translates{
      {"la", "the"}, {"zone", "area"}, {"économique", "economic"}, {"est", "is"}, {"européenne", "european"}};
  // The weight that row j of the weights puts on the source word that y_j translates.
  auto weight_on_translation = [&](const std::vector<std::string>& x, const std::vector<std::string>& y,
                                   const std::vector<std::vector<double>>& weights) {
    std::vector<double> share(y.size(), 0.0);
    for (std::size_t j = 0; j < y.size(); ++j)
      for (std::size_t t = 0; t < x.size(); ++t)
        if (lower(x[t]) == translates.at(y[j])) share[j] += weights[j][t];
    return share;
  };
  // (5.7)  e_jt = β [x_t translates y_j]: scores computed from the words themselves, not from their positions
  auto from_the_words = [&](const std::vector<std::string>& x, const std::vector<std::string>& y, double beta) {
    std::vector<std::vector<double>> weights;
    for (std::size_t j = 0; j < y.size(); ++j) {
      std::vector<double> e_row(x.size());
      for (std::size_t t = 0; t < x.size(); ++t) e_row[t] = lower(x[t]) == translates.at(y[j]) ? 1.0 : 0.0;
      weights.push_back(softmax_of(e_row, beta));
    }
    return weights;
  };
  const double beta = 5;
  const auto fixed_1 = weight_on_translation(source, target, alpha);      // the oracle's table on its own sentence
  const auto fixed_2 = weight_on_translation(source_2, target_2, alpha);  // the same table on sentence 2
  const auto words_1 = weight_on_translation(source, target, from_the_words(source, target, beta));
  const auto words_2 = weight_on_translation(source_2, target_2, from_the_words(source_2, target_2, beta));
  // [docs:end]
  std::printf("\nthe weight on the word being translated, for each output word j\n");
  std::printf("  %-52s %s\n", "the oracle's table, on sentence 1", vector_string(fixed_1).c_str());
  std::printf("  %-52s %s\n", "the same table, on sentence 2 \"the area is European\"", vector_string(fixed_2).c_str());
  std::printf("  %-52s %s\n", "weights from the words (5.7), on sentence 1", vector_string(words_1).c_str());
  std::printf("  %-52s %s\n", "weights from the words (5.7), on sentence 2", vector_string(words_2).c_str());
  double worst = 0;
  const double closed_form = std::exp(beta) / (std::exp(beta) + static_cast<double>(T_x - 1));
  for (std::size_t j = 0; j < T_y; ++j) {
    worst = std::max({worst, std::abs(words_1[j] - closed_form), std::abs(words_2[j] - closed_form)});
  }
  tutorial::check("(5.7) from the words vs e^β/(e^β + T_x - 1), both sentences", worst, 1e-15);
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv);
  const std::vector<std::string> source{"the", "European", "Economic", "Area"};
  const std::vector<std::string> target{"la", "zone", "économique", "européenne"};
  const std::size_t T_x = source.size(), T_y = target.size(), E = 4, H = 4;
  std::printf("Chapter 5: an oracle tells where to look\n");
  std::printf("  \"the European Economic Area\" -> \"la zone économique européenne\"");
  std::printf(" (T_x = %zu, T_y = %zu, H = %zu)\n\n", T_x, T_y, H);

  // ---- The annotations ----------------------------------------------------------------------------------------------
  Rng rng(5);
  nn::Encoder<double> encoder(encoder_config(T_x, E, H), rng);
  Tape<double> tape;
  const Variable<double> h = annotations(tape, encoder, T_x);  // (1, T_x, H)
  const std::vector<std::vector<double>> h_plain = plain_annotations(h, source);

  // ---- The oracle's weights and the contexts (5.1); the hard choice (5.2)-(5.3) -------------------------------------
  const Oracle weights = oracle(tape, h, T_y);
  show_oracle(options, source, target, weights, h_plain);
  hard_choice(tape, h, source, target, weights.alpha, h_plain);

  // ---- Soft and hard choices from scores (5.4)-(5.5), and their gradients -------------------------------------------
  const double eps = 1e-6;
  const Choices choices = soft_and_hard(tape, h);
  check_jacobians(choices, h_plain, eps);
  sweep(options, choices.e_j, h_plain, eps);

  // ---- The soft choice tends to the hard one (5.6) ------------------------------------------------------------------
  limit(tape, h, choices.e_j, h_plain, source);

  // ---- Weights from the words, not the positions (5.7) --------------------------------------------------------------
  reordering(source, target, weights.alpha);
  return tutorial::exit_status();
}
