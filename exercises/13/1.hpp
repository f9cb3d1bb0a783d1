// Exercise 13.1 — annotations linear in the pixels (docs/13-visual-attention.md, "Exercises").
//
// With config.patch_hidden = 0 the patch encoder has no hidden layer, and (13.1) becomes a_i = W_p x_i + b_p + P_i:
// linear in the pixels x_i of patch i. The context (13.5) is then W_p applied to one averaged patch,
//   c_t = Σ_i α_ti a_i = W_p x̄_t + (Σ_i α_ti) b_p + Σ_i α_ti P_i,   x̄_t = Σ_i α_ti x_i,
// so all that step t sees of the digit it looks at is a linear function of (blurred) pixels.
//
// 1. context_from_mean_patch: compute c_t that way — the weighted mean patch x̄_t first, then one product with W_p,
//    plus b_p and the weighted positions — from the parameters of a captioner built with patch_hidden = 0. The check
//    compares it with the c_t of the library's decoder step (13.5).
// 2. linear_classifier: compare with a linear read-out of single digits. Train z = W x + b on the single 8×8 training
//    digits (x: the 64 intensities / 16; labels 0–9): nn::Linear(64, 10) drawn from Rng(1), cross_entropy, 300 steps
//    of Adam (η = 0.01) on all training digits at once; return the label it gives each test digit. The check prints
//    which digits it confuses.
// Then the check trains small captioners (8×32 images of 2–3 digits, a 1×7 grid of 8×8 patches at stride 4, 600 steps
// of 16 images), three with patch_hidden = 0 and three with a hidden layer of K = 64, and compares their exact match.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <vector>

#include "data/digits.hpp"
#include "models/captioner.hpp"

namespace yours {

// c_t (A numbers) = W_p x̄_t + (Σ_i α_i) b_p + Σ_i α_i P_i with x̄_t = Σ_i α_i x_i, for one image's patches (1, L, P)
// (models::extract_patches) and one step's weights alpha (L numbers), from model's PatchEncoder (patch_hidden = 0).
std::vector<double> context_from_mean_patch(const attend::models::Captioner<double>& model,
                                            const attend::Tensor<double>& patches, const std::vector<double>& alpha);

// The label (0–9) the linear classifier z = W x + b trained on `train` gives each digit of `test`.
std::vector<int> linear_classifier(const attend::data::DigitImages& train, const attend::data::DigitImages& test);

}  // namespace yours
