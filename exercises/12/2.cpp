// Exercise 12.2 — your answer (the task: exercises/12/2.hpp). Check it with `scripts/exercise 12.2`.
#include "exercises/12/2.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

double unk_share(const std::vector<data::TranslationExample>& test, const data::Vocabulary& source) {
  (void)test;
  (void)source;
  throw exercise::Todo("the share of <unk> in the test sources");
}

std::size_t parameters_per_source_word(const models::Seq2seqConfig& config) {
  (void)config;
  throw exercise::Todo("the parameters of one source word");
}

std::size_t parameters_per_target_word(const models::Seq2seqConfig& config) {
  (void)config;
  throw exercise::Todo("the parameters of one target word");
}

double bleu_ceiling(const std::vector<data::TranslationExample>& test, const data::Vocabulary& target) {
  (void)test;
  (void)target;
  throw exercise::Todo("BLEU of the references read through the vocabulary");
}

}  // namespace yours
