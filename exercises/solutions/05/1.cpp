// Exercise 5.1 — a solution (the task: exercises/05/1.hpp).
//
// Only c_1 and c_4 change: (5.1) computes each c_j from its own row α_j alone, so a row that stays the same gives the
// same context. c_1 becomes h_1 itself (a one-hot row picks one annotation, (5.3)), and c_4 becomes the mean of the
// annotations: with α_4t = 1/T_x, Σ_t α_4t h_t = (1/T_x) Σ_t h_t. Here 1/T_x = 0.25 is exact in binary, so the two
// agree to the last bit. The uniform row needs no oracle, and that is what it costs: if every row is uniform, every
// output word gets the same vector, the bag of annotations, whatever it is writing. That is chapter 3's single context
// vector again (an average of the h_t instead of h_Tx): the bottleneck, with no "where to look" left in it. The bag
// does not even change when the annotations are listed in another order; only the h_t themselves, through the
// encoder's recurrence, still carry the word order.
#include "exercises/05/1.hpp"

namespace yours {

using namespace attend;

std::vector<Variable<double>> contexts(const std::vector<std::vector<double>>& alpha, const Variable<double>& h) {
  Tape<double>& tape = h.tape();
  std::vector<Variable<double>> c;
  for (const std::vector<double>& row : alpha) {
    // (5.1)  c_j = Σ_t α_jt h_t: the weights as a constant (1, T_x) row, then one batched product
    c.push_back(models::context(tape.constant(Tensor<double>(Shape{1, row.size()}, row)), h));
  }
  return c;
}

std::vector<std::vector<double>> changed_table(const std::vector<std::vector<double>>& alpha) {
  std::vector<std::vector<double>> changed = alpha;
  const std::size_t T_x = alpha[0].size();
  changed[0].assign(T_x, 0.0);  // "la": one-hot on "the"
  changed[0][0] = 1.0;
  changed[3].assign(T_x, 1.0 / static_cast<double>(T_x));  // "européenne": uniform
  return changed;
}

std::vector<std::size_t> changed_steps() { return {1, 4}; }

Variable<double> bag_of_annotations(const Variable<double>& h) {
  return mean(h, 1);  // (1, T_x, H) → (1, H): the average over the source positions
}

}  // namespace yours
