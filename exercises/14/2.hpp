// Exercise 14.2 — the Transformer without positions (docs/14-transformer.md, "Exercises").
//
// Without (14.5)'s P[p] the encoder's input is x_p = √D · E[token_p], and the permutation test says what follows:
// self-attention (14.2)–(14.4), the feed-forward network and LN treat the source's positions as a set, so reordering
// the source reorders the encoder's output and changes nothing else; the decoder's cross-attention then averages over
// that set (14.3), where order does not count either.
//
// 1. remove_source_positions: the check builds the dates model with learned positions (PositionKind::learned, a table
//    src_pos of max_positions × D on the source side and tgt_pos on the target side); make it a model without source
//    positions by setting src_pos to zero. Nothing else changes: the target side keeps its positions.
// 2. same_output: predict, for such a model whatever its other weights, whether two source texts (UTF-8, one token
//    per character, as the dates task reads them: data::utf8_characters) must get exactly the same output — the same
//    probabilities at every step, hence the same date. The check measures it on pairs of dates with the library; what
//    your function says is what the model gets wrong: of two sources it cannot tell apart, at most one can be right.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <string>

#include "models/transformer.hpp"

namespace yours {

// src_pos ← 0 in a model with learned positions; every other parameter as it was.
void remove_source_positions(attend::models::TransformerModel<double>& model);

// Your prediction: does a model without source positions give sources a and b the same output, whatever its weights?
bool same_output(const std::string& a, const std::string& b);

}  // namespace yours
