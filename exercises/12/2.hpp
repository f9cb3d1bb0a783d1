// Exercise 12.2 — min_count 1, 2 or 5: vocabularies, <unk>, parameters, and what BLEU can reach
// (docs/12-translation.md, "Exercises").
//
// data::build_vocabulary keeps the training tokens seen at least min_count times; every other token reads as <unk>,
// in the training pairs and in the test sentences. Changing min_count from 2 to 1 or to 5 changes the vocabularies
// V_x and V_y, the share of <unk> in the test sources, the size of the model (a row of the embeddings and of the output
// layer per word) and so its time per step, and BLEU. Write:
//   unk_share                   the share of the test sources' tokens that the source vocabulary reads as <unk>;
//   parameters_per_source_word  how many parameters one more word of V_x adds to a model of this configuration;
//   parameters_per_target_word  how many one more word of V_y adds (where does a target word appear in the model?);
//   bleu_ceiling                corpus BLEU (12.5) of the best outputs a model with this target vocabulary could write:
//                               each test sentence's first reference, its words outside the vocabulary read as
//                               "<unk>" (encode, then decode), scored against all the sentence's references.
// The check compares each with the reference solution and with the library (parameter_count of models one word apart),
// and measures on Spanish → English (every 10th pair of the file, 300 test sentences) with three split seeds how the
// <unk> share and the ceiling move as min_count goes 1 → 2 → 5. (A trained model's BLEU at each min_count is the
// chapter's program with make_corpus's min_count changed: minutes a model.)
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>
#include <vector>

#include "data/pairs.hpp"
#include "data/vocabulary.hpp"
#include "models/seq2seq.hpp"

namespace yours {

double unk_share(const std::vector<attend::data::TranslationExample>& test, const attend::data::Vocabulary& source);
std::size_t parameters_per_source_word(const attend::models::Seq2seqConfig& config);
std::size_t parameters_per_target_word(const attend::models::Seq2seqConfig& config);
double bleu_ceiling(const std::vector<attend::data::TranslationExample>& test, const attend::data::Vocabulary& target);

}  // namespace yours
