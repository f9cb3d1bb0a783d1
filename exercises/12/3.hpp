// Exercise 12.3 — beam widths and the length penalty α (docs/12-translation.md, "Exercises").
//
// Beam search keeps the k most probable partial outputs at each step (by log p), sets one aside as finished when the
// end token is among the k best candidates of a step, and stops a sentence's search at the first step whose best
// candidate is the end token. Only then does (12.6), s(y) = log p(y | x) / |y|^α with |y| counting the end token,
// choose among the outputs finished so far. models::decode can hand you each source's search tree
// (SearchOptions::trees; models/search.hpp, SearchTree and SearchNode): for every step, the nodes it kept, best first,
// each with its token, its summed log p, the place of its parent among the previous step's nodes, and whether it
// finished (its token is then the end token). Write:
//   best_of_tree  the output decode() returns for that tree with length penalty α: tokens y_1 … y_n (the end token
//                 left out), log_prob, score = log_prob / |y|^α (|y| = n + 1) and finished; of equal scores, the node
//                 that comes first (by step, then by place). When no node finished (the search hit the maximum
//                 length), the best of the last step's nodes, with |y| = n (no end token).
// The check holds it to decode() itself, then uses it on three small trained models (Spanish → English pairs of at
// most 4 words, E = H = 16) to score every α from a single search per width: where does a wider beam stop raising the
// mean log p(y | x), and how far does α move the output length c/r? (BLEU itself needs the chapter's budget:
// `scripts/run 12` with translate()'s SearchOptions changed.)
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include "models/search.hpp"

namespace yours {

attend::models::Hypothesis best_of_tree(const attend::models::SearchTree& tree, double alpha);

}  // namespace yours
