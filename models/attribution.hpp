// Gradient attribution: how much the log-probability of each output token depends on each input position, read from
// the tape — beside the attention weights, which need not say the same (Jain & Wallace 2019, "Attention is not
// Explanation"). For output token j of a fixed output y and input positions i with features x_i (a source token's
// embedding):
//   gradient × input       a_ji = ‖∂ log p(y_j | y_<j, x)/∂x_i ⊙ x_i‖₂
//   integrated gradients   a_ji = Σ_f (x − x')_if · (1/m) Σ_{k=1..m} ∂ log p(y_j | y_<j, x'_k)/∂x_if,
//                          x'_k = x' + (k − ½)/m · (x − x')   (Sundararajan et al. 2017, the midpoint rule)
// from a baseline x' (the padding token's embedding at every position: zeros for these models). Integrated
// gradients are complete: Σ_i a_ji → log p(y_j | y_<j, x) − log p(y_j | y_<j, x') as m grows.
// API: docs/reference/models.md.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/tape.hpp"
#include "models/captioner.hpp"
#include "models/search.hpp"
#include "models/seq2seq.hpp"
#include "models/transformer.hpp"
#include "runtime/context.hpp"

namespace attend::models {

// What is attributed: for inputs X (N, S, F) on the tape (a leaf) and an output position j_n for each row, row n's
// log-probabilities at its own position, log p(· | y_<j_n, X[n]) as (N, V) — one output layer's row a copy, not the
// J · V of every position. Row n must depend on X[n] alone (a model in evaluation mode).
template <class T>
using LogProbsOf = std::function<Variable<T>(Tape<T>&, const Variable<T>& X, const std::vector<std::size_t>& at)>;

// A model's inputs for attribution: x (S, F), the baseline x' of the same shape, and the function of them (which holds
// a reference to the model: the inputs must not outlive it).
template <class T>
struct AttributionInputs {
  Tensor<T> x, baseline;
  LogProbsOf<T> log_probs;
  std::vector<std::int64_t> outputs;  // y_1 … y_J, the tokens whose log-probabilities are attributed
  // Asked before each forward and backward pass (64 rows, or J when more); false stops it with AttributionStopped.
  // Empty: always wanted.
  std::function<bool()> wanted;
};

// Thrown when AttributionInputs::wanted says the attribution is no longer wanted (the client that asked left).
struct AttributionStopped : std::runtime_error {
  AttributionStopped() : std::runtime_error("attribution stopped: no longer wanted") {}
};

// The tokens whose log-probabilities make up a search's output: its tokens, then the end token when it finished.
std::vector<std::int64_t> scored_tokens(const Hypothesis& output);

// Seq2seq: x the source's embeddings (S, E), the baseline the padding embedding at every position; `output` the
// tokens after <sos> (the output's tokens, then <eos> when the search ended it), of which the first `count` are
// attributed (count ≤ output.size()).
template <class T>
AttributionInputs<T> attribution_inputs(Seq2seq<T>& model, const std::vector<std::int64_t>& source,
                                        const std::vector<std::int64_t>& output, std::size_t count);

// The Transformer: x the source tokens' embeddings E[ids] (S, D) — before the √D scale and the positions, which stay
// as they are — the baseline the padding token's E row at every position; `output` as for Seq2seq.
template <class T>
AttributionInputs<T> attribution_inputs(TransformerModel<T>& model, const std::vector<std::int64_t>& source,
                                        const std::vector<std::int64_t>& output, std::size_t count);

// The captioner: x the image's pixels (H·W, 1), row by row, whose gradient flows through every patch that holds a
// pixel (or the conv encoder's first layer); the baseline a blank image (0 everywhere: the digits' background);
// `output` as for Seq2seq. Throws std::invalid_argument unless `image` is (H, W) of the model's configuration.
template <class T>
AttributionInputs<T> attribution_inputs(Captioner<T>& model, const Tensor<T>& image,
                                        const std::vector<std::int64_t>& output, std::size_t count);

// ∂ log p(y_j | y_<j, x)/∂x for every output token, (J, S, F), and log p(y_j | y_<j, x), (J): one forward and one
// backward pass over J copies of x, copy j seeded at its token j alone. The tape gets `context` (its precision).
template <class T>
struct OutputGradients {
  Tensor<T> gradients;
  std::vector<double> log_probs;
};
template <class T>
OutputGradients<T> output_gradients(const AttributionInputs<T>& inputs, const Context& context = {});

enum class AttributionMethod { gradient_times_input, integrated_gradients, attention_rollout };
// "gradient_times_input", "integrated_gradients", "attention_rollout".
const char* to_string(AttributionMethod method);

template <class T>
struct Attribution {
  AttributionMethod method = AttributionMethod::gradient_times_input;
  std::size_t steps = 0;  // integrated gradients: m
  Tensor<T> values;       // (J, S): a_ji as above (integrated gradients: signed)
  Tensor<T> rows;         // (J, S): |a_ji| / Σ_i |a_ji|, each row summing to 1 (all zeros when a_j is)
  // Integrated gradients: log p(y_j | y_<j, x) − log p(y_j | y_<j, x'), what row j of `values` sums to as m grows.
  std::vector<double> change;
};

template <class T>
Attribution<T> gradient_times_input(const AttributionInputs<T>& inputs, const Context& context = {});
// Throws std::invalid_argument when steps is 0. Evaluates the gradients at m points, a few at a time.
template <class T>
Attribution<T> integrated_gradients(const AttributionInputs<T>& inputs, std::size_t steps, const Context& context = {});

// Gradient × input, then integrated gradients with `steps` points, of a Seq2seq's or a TransformerModel's output
// (its scored_tokens) for `input` (source tokens), or a Captioner's for an image (H, W); the model is put in
// evaluation mode. Empty when the output has no token.
template <class T, class Model, class Input>
std::vector<Attribution<T>> gradient_attributions(Model& model, const Input& input, const Hypothesis& output,
                                                  std::size_t steps, const Context& context = {},
                                                  const std::function<bool()>& wanted = {});

// Attention rollout (Abnar & Zuidema 2020) through an encoder-decoder, from one input's weights (batch 1): each encoder
// layer's self-attention averaged over its heads with the residual path, Â_l = ½(A_l + I), rolled out as
// R = Â_L ⋯ Â_1 (S, S) — how much each encoder output draws on each input token — and output token j's row the last
// decoder layer's cross-attention row (heads averaged) times R: (J, S), each row summing to 1 (values = rows). The
// first J rows of the cross-attention; throws std::invalid_argument when the weights have no layers, fewer rows, or
// shapes that do not chain.
template <class T>
Attribution<T> attention_rollout(const nn::AttentionWeights<T>& weights, std::size_t J);

// Spearman's rank correlation of two rows of n values (ties get their mean rank): 1 when they order the positions
// alike, −1 when reversed; 0 when either row is constant (no order to compare) or n < 2.
double rank_correlation(const float* a, const float* b, std::size_t n);

}  // namespace attend::models
