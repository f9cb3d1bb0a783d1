// Exercise 12.5 — Hindi → English with half the training pairs, and how many pairs a better score would take
// (docs/12-translation.md, "Exercises").
//
// The Hindi model learns its 2,350 training pairs by heart and translates new sentences poorly (training BLEU 84,
// test BLEU 10.5). Is the data the limit? Train it on half of its training pairs and on all of them, and compare.
// Write:
//   with_training_pairs  the split options that keep `pairs` training pairs (TranslationSplitOptions::train_size; the
//                        test sentences stay those of the full split), the rest unchanged;
//   pairs_needed         "at this rate": with BLEU b_1 from n_1 pairs and b_2 from n_2 pairs, and BLEU growing by the
//                        same amount each time the pairs are multiplied by n_2 / n_1 (a straight line in log n), the
//                        number of pairs at which BLEU reaches `bleu`.
// The check holds the split to the full one, pairs_needed to exact cases, then trains the chapter's Hindi model scaled
// down (E = H = 16, 300 steps of 32, one vocabulary from all the training pairs so that the losses compare) from
// three seeds on half the pairs and on all of them, and compares each model's loss on 300 of its own training pairs
// and on the 300 test sentences. (The chapter's BLEU at both sizes is `scripts/run 12` with hindi_split.train_size
// set: then pairs_needed says what it would take to reach the Spanish model's test BLEU of 25.4.)
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>

#include "data/pairs.hpp"

namespace yours {

attend::data::TranslationSplitOptions with_training_pairs(const attend::data::TranslationSplitOptions& split,
                                                          std::size_t pairs);
double pairs_needed(double pairs_1, double bleu_1, double pairs_2, double bleu_2, double bleu);

}  // namespace yours
