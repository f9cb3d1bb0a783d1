// Exercise 5.1 — another oracle, and the bag of annotations (docs/05-oracle.md, "Exercises").
//
// The oracle's table α_jt (row j: output word j, column t: source word t; every row sums to 1) gives the contexts
// c_j = Σ_t α_jt h_t of (5.1). Change two of its rows: the row of "la" (j = 1) becomes one-hot on "the" (t = 1), and
// the row of "européenne" (j = 4) becomes uniform, α_4t = 1/T_x = 0.25 on each of the four words. Write
//   - contexts: (5.1) for every row of a table, with models::context on h's tape;
//   - changed_table: a table (the chapter's oracle's is passed in) with those two rows changed and the others kept;
//   - changed_steps: your prediction, made before running anything, of the steps j whose context c_j changes;
//   - bag_of_annotations: the mean (1/T_x) Σ_t h_t of the annotations, with attend's mean (no weights at all).
// The check tests that uniform weights give exactly that mean, at every step j: a "bag of annotations", which needs
// no oracle, but hands every output word the same vector.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>
#include <vector>

#include "models/attention.hpp"

namespace yours {

// (5.1) for every row j of alpha (T_y rows of T_x weights): c_j = Σ_t α_jt h_t, each (1, H), recorded on h's tape.
// h: (1, T_x, H).
std::vector<attend::Variable<double>> contexts(const std::vector<std::vector<double>>& alpha,
                                               const attend::Variable<double>& h);
// alpha (T_y ≥ 4 rows of T_x weights) with row 1 one-hot on t = 1 and row 4 uniform; every other row as it was.
std::vector<std::vector<double>> changed_table(const std::vector<std::vector<double>>& alpha);
// Your prediction: the steps j (counted from 1, increasing) whose context changes when the chapter's oracle's table
// is changed this way.
std::vector<std::size_t> changed_steps();
// (1/T_x) Σ_t h_t for h: (1, T_x, H), as (1, H), with attend's mean.
attend::Variable<double> bag_of_annotations(const attend::Variable<double>& h);

}  // namespace yours
