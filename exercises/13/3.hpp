// Exercise 13.3 — longer strings than any seen in training (docs/13-visual-attention.md, "Exercises").
//
// Train the captioner on short strings only and test it on longer ones. Two things can fail: the attention (does
// step t still look one digit further right than step t − 1?) and the end token (does the caption stop where the
// image's digits stop, or where the training captions always stopped?).
//
// 1. failures: measure both on a set of images and the captions the model wrote for them (outputs[n] for images[n],
//    greedy, models::decode). Return {the share of captions that end too early — the model wrote the end token
//    (finished) after fewer digits than images[n].digits holds —, the share whose attention does not go from left to
//    right — the mean column (13.8) m_t = Σ_i α_ti · column(i) of the digit tokens t = 1 … n
//    (outputs[n].attention[t−1], the end token's row left out) does not increase strictly from each token to the next}.
//    column(i) is config.pixel_column of position i's grid column, i mod config.grid_columns(); a caption of fewer than
//    two digit tokens counts as going left to right.
// 2. fails_first: your prediction, "the end token" or "the attention": which fails on strings one digit longer than
//    any seen in training?
// The check trains three small captioners (8×48 images, a 1×11 grid of 8×8 patches at stride 4, 600 steps of 16
// images of 2–3 digits) and measures your failures on 2–3, 4 and 5 digits.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <string>
#include <vector>

#include "data/digits.hpp"
#include "models/captioner.hpp"

namespace yours {

// {share ending too early, share not going left to right (13.8)} over the images.
std::vector<double> failures(const attend::models::CaptionerConfig& config,
                             const std::vector<attend::models::Hypothesis>& outputs,
                             const std::vector<attend::data::Composed>& images);

// "the end token" or "the attention".
std::string fails_first();

}  // namespace yours
