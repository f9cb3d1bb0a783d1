// Exercise 9.2 — the scaled dot score (docs/09-luong.md, "Exercises").
//
// Divide the dot score (9.2) by the square root of the vectors' size, as the Transformer will:
//   e_ij = s_jᵀ h_i / √H
// Write it as a score a decoder can use: a class derived from models::Score<T>, in your file, whose keys(h) are the
// annotations h themselves (as DotScore's are), whose score(s_j, keys) is e_ij above for every i at once, (B, S), and
// whose kind() is ScoreKind::dot. make_scaled_dot_score<T>(H) returns one (the starter has the class and the two
// explicit instantiations, float for training and double for the gradient check). Then the measurement the heatmaps
// compare, how close to one-hot a decoder's weights are:
//   mean_largest_weight: the mean, over every row of every hypothesis's attention (Hypothesis::attention[j], the
//                        weights α_ij of one output token), of that row's largest weight max_i α_ij.
// The check tests your score against DotScore's divided by √H, by gradcheck and inside a decoder's step; then it puts
// your score in place of luong-dot's (decoder->score can be replaced before training), trains both decoders the same
// way, scaled down (E = 12, H = 24, 200 steps of 32 dates, seeds 1–3), decodes 100 test dates with each, and compares
// their mean largest weights. The chapter's heatmaps say dot's weights are nearly one-hot because s_jᵀ h_i can reach
// ±H: does the scaled score soften them?
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <memory>
#include <vector>

#include "models/attention.hpp"
#include "models/search.hpp"

namespace yours {

// A new score e_ij = s_jᵀ h_i / √H for states and annotations of size H.
template <class T>
std::unique_ptr<attend::models::Score<T>> make_scaled_dot_score(std::size_t H);
// The mean of max_i α_ij over every attention row of every output.
double mean_largest_weight(const std::vector<attend::models::Hypothesis>& outputs);

}  // namespace yours
