// Exercise 9.2 — a solution (the task: exercises/09/2.hpp).
//
// Why it works: the keys are the annotations, as for the dot score, so DotScore's score of the same keys is s_jᵀ h_i
// for every i in one batched product; multiplying by the constant 1/√H records one more node, whose backward
// multiplies the gradient by the same constant, so gradcheck agrees without a backward function of our own.
// Why it changes the picture: for states in (−1, 1)^H, s_jᵀ h_i can reach ±H, and after softmax a difference of a few
// units between two scores already puts nearly all the weight on one position. Dividing by √H shrinks every
// difference by √H (8 for H = 64): the softmax of the scaled scores is the softmax of the old ones at temperature √H,
// flatter. In the check's trainings the dot decoder's mean largest weight is 0.6 to 0.7 and the scaled one's 0.15 to
// 0.2, a heatmap whose weight is spread over several characters. The scaled decoder also learns more slowly at first
// (in a run of 300 steps with H = 32, four seeds, its held-out loss was more than twice the dot decoder's): training
// can lengthen the states to sharpen the weights again, but that takes steps. The Transformer scales its dot products
// for the same reason: large ones push softmax where its gradients are tiny (chapter 14).
#include "exercises/09/2.hpp"

#include <algorithm>
#include <cmath>

namespace yours {

using namespace attend;
using models::Keys;
using models::ScoreKind;

namespace {

// e_ij = s_jᵀ h_i / √H, split like every score: keys(h) once per batch, score(s_j, keys) at every step.
template <class T>
class ScaledDotScore : public models::Score<T> {
 public:
  explicit ScaledDotScore(std::size_t H) : H_(H) {}
  using models::Score<T>::score;
  Keys<T> keys(const Variable<T>& annotations) override { return Keys<T>(annotations, ScoreKind::dot); }  // h_i
  Variable<T> score(const Variable<T>& query, const Keys<T>& keys) override {
    // (9.2) divided by √H: DotScore's s_jᵀ h_i for every i, times the constant 1/√H
    return dot_.score(query, keys) * (1.0 / std::sqrt(static_cast<double>(H_)));
  }
  ScoreKind kind() const override { return ScoreKind::dot; }
  void visit(nn::ModuleVisitor<T>&) override {}  // no parameters

 private:
  std::size_t H_;
  models::DotScore<T> dot_;
};

}  // namespace

template <class T>
std::unique_ptr<models::Score<T>> make_scaled_dot_score(std::size_t H) {
  return std::make_unique<ScaledDotScore<T>>(H);
}
template std::unique_ptr<models::Score<float>> make_scaled_dot_score<float>(std::size_t);
template std::unique_ptr<models::Score<double>> make_scaled_dot_score<double>(std::size_t);

double mean_largest_weight(const std::vector<models::Hypothesis>& outputs) {
  double sum = 0;
  std::size_t rows = 0;
  for (const models::Hypothesis& output : outputs) {
    for (const std::vector<float>& alpha_j : output.attention) {
      sum += *std::max_element(alpha_j.begin(), alpha_j.end());  // max_i α_ij
      ++rows;
    }
  }
  return sum / static_cast<double>(rows);
}

}  // namespace yours
