// Exercise 10.1 — a bidirectional encoder under both decoders (docs/10-attention-fixes-the-bottleneck.md,
// "Exercises").
//
// Bahdanau et al. read the source in both directions. With config.bidirectional = true every annotation is
// h_i = [h→_i; h←_i], 2H numbers, and the vanilla decoder's one context becomes c = [h→_Tx; h←_1]: h→_Tx read the
// source from x_1 to x_Tx and ends on x_Tx, h←_1 read it from x_Tx back to x_1 and ends on x_1. So c holds both ends
// of the string, and on the copy task y_1 = x_1 no longer has to travel through all T_x encoder steps. Write:
//   bidirectional          a copy of a Seq2seqConfig whose encoder reads both ways (nothing else changed);
//   fixed_context          the vanilla decoder's c from the annotations of a padded batch (B, S, D·H) and the
//                          sources' lengths: h_Tx for one direction (D = 1), [h→_Tx; h←_1] for two (D = 2);
//   first_symbol_accuracy  the share of examples whose first output symbol is right: the largest of the logits at
//                          output step j = 1 (Seq2seq::forward with teacher forcing) is the target's y_1.
// The check compares fixed_context with the decoder's own c (SourceMemory::context) on a one-source batch of the
// chapter's copy task, then trains the chapter's vanilla model scaled down (H = 16, sources of 5 to 10 symbols,
// 400 steps, in double) with a one-direction and with a bidirectional encoder, from three seeds, and asks your
// first_symbol_accuracy whether c = [h→_Tx; h←_1] gets the first symbol right more often than c = h_Tx.
// (The chapter's question at full size, exact match at 40 symbols after 2,000 steps, is `scripts/run 10` with
// config.bidirectional = true set in train_both: minutes, not seconds.)
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstdint>
#include <vector>

#include "models/sequences.hpp"

namespace yours {

// config with config.bidirectional = true, every other field as it was.
attend::models::Seq2seqConfig bidirectional(const attend::models::Seq2seqConfig& config);
// c for every source of the batch, (B, D·H): annotations (B, S, D·H) are the encoder's outputs h_i (exactly 0 at the
// padded positions i > T_x of a source), lengths[b] the T_x of source b, directions D (1 or 2).
attend::Tensor<double> fixed_context(const attend::Tensor<double>& annotations,
                                     const std::vector<std::int64_t>& lengths, std::size_t directions);
// The share of `examples` whose teacher-forced step-1 argmax equals target[0], in [0, 1].
double first_symbol_accuracy(attend::models::Seq2seq<double>& model,
                             const std::vector<attend::models::sequences::Example>& examples);

}  // namespace yours
