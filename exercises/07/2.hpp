// Exercise 7.2 — one more <pad> (docs/07-attention-weights.md, "Exercises").
//
// The chapter's padded batch holds "the European Economic Area" and "the Economic Area" (ids 1 2 3 4 and 1 3 4,
// lengths 4 and 3), padded with the id 0 to T_x = 4 positions. Pad both sentences with one more <pad>: T_x = 5, the
// lengths still 4 and 3. Write
//   - padded_step: for any T_x ≥ 4, the masked weights α_ij (7.4) and the context c_j (7.2) of that batch at step
//     j = 1 (s_0 = each sentence's own h_Tx, as in the chapter), with the chapter's encoder and score;
//   - unmasked_shrink: without the mask, every <pad> of a sentence gets the same score (its annotation is exactly 0),
//     the padding takes a share α_pad of the weight, and the unmasked context is the masked one times 1 − α_pad (the
//     chapter checks this for T_x = 4). Predict that factor from the sentence's real scores, the padding's score and
//     the number of <pad>s.
// Which of the chapter's printed numbers change with T_x = 5? Why does none of its checks break? The check runs your
// padded_step at T_x = 4, 5 and more, and compares your factor with the unmasked contexts the library computes.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>
#include <utility>
#include <vector>

#include "models/attention.hpp"
#include "nn/recurrent.hpp"

namespace yours {

// {α (2, T_x), c (2, H)} of the chapter's two sentences padded to T_x ≥ 4 positions, masked, at step j = 1.
std::pair<attend::Variable<double>, attend::Variable<double>> padded_step(attend::Tape<double>& tape,
                                                                          attend::nn::Encoder<double>& encoder,
                                                                          attend::models::AdditiveScore<double>& score,
                                                                          std::size_t T_x);
// 1 − α_pad: the total unmasked weight on the real words, for real scores e_ij, `pads` <pad>s each scored pad_score.
double unmasked_shrink(const std::vector<double>& real_scores, double pad_score, std::size_t pads);

}  // namespace yours
