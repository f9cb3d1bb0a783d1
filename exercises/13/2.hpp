// Exercise 13.2 — without the position embedding (docs/13-visual-attention.md, "Exercises").
//
// (13.1) gives each annotation its place: a_i = W_p h_i + b_p + P_i. Take P_i away and a_i depends on the pixels x_i
// of patch i only; the score (13.3) e_ti = v_aᵀ tanh(W_a s_{t−1} + U_a a_i) then depends on i only through x_i.
//
// 1. remove_positions: set the image encoder's position embedding P (L, A) to zero — the encoder is a PatchEncoder
//    or a ConvEncoder (models/captioner.hpp); every other parameter stays as it is. The check calls it after every
//    optimizer step of a small training, as the chapter's exercise says.
// 2. same_weights: predict, for a captioner whose positions were removed, whether grid positions i and j get the same
//    weight, α_ti = α_tj, at every step t whatever the model's other weights, from the image's patches (1, L, P)
//    alone (models::extract_patches; patch i's pixels are patches.data()[i·P … i·P + P − 1]). The check measures it
//    with the library on an image that holds the same digit image twice, and on others.
// Then the check trains a small captioner three times with P and three times with P removed after every step (8×32
// images of 2–3 digits, a 1×7 grid of 8×8 patches at stride 4, 600 steps of 16 images) and measures (13.8): does the
// attention still go from left to right?
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>

#include "models/captioner.hpp"

namespace yours {

// P ← 0 in model's image encoder (patches or conv), nothing else changed.
void remove_positions(attend::models::Captioner<float>& model);
void remove_positions(attend::models::Captioner<double>& model);

// Your prediction: without positions, α_ti = α_tj at every step t, whatever the other weights? (i, j < L.)
bool same_weights(const attend::Tensor<double>& patches, std::size_t i, std::size_t j);

}  // namespace yours
