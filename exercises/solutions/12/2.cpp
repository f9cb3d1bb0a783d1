// Exercise 12.2 — a solution (the task: exercises/12/2.hpp).
//
// Why it works: a source word is one row of the source embedding, E numbers. A target word is a row of the target
// embedding (E) and a row of the output layer, F weights and a bias, with F = H + A + E for the vanilla and Bahdanau
// decoders and H for Luong's: at the chapter's sizes 385 parameters per English word against 64 per Spanish one, which
// is why V_y, not V_x, sets the model's size and the output layer's share of the time per step. <unk> is the id
// Vocabulary::id returns for a token it lacks. The ceiling scores what a perfect model could write at best: the
// reference itself, with each word it cannot spell replaced by <unk>, which never matches (12.2).
// What the check measures: min_count 1 keeps every training word, so V_y is the largest and <unk> comes only from
// words never seen in training; 5 drops the rare ones, the <unk> share of the test sources grows several times over
// and the ceiling falls. A smaller vocabulary trains faster and has fewer rare rows to learn from one or two
// examples, but caps BLEU lower: the chapter's min_count 2 is a compromise between the two.
#include "exercises/12/2.hpp"

#include "data/bleu.hpp"

namespace yours {

using namespace attend;

double unk_share(const std::vector<data::TranslationExample>& test, const data::Vocabulary& source) {
  std::size_t tokens = 0, unknown = 0;
  for (const data::TranslationExample& example : test) {
    for (const std::string& token : example.source) {
      ++tokens;
      unknown += source.id(token) == data::Vocabulary::unk_id;
    }
  }
  return tokens ? static_cast<double>(unknown) / static_cast<double>(tokens) : 0.0;
}

std::size_t parameters_per_source_word(const models::Seq2seqConfig& config) {
  return config.embedding_dim;  // a row of the source embedding
}

std::size_t parameters_per_target_word(const models::Seq2seqConfig& config) {
  const std::size_t H = config.hidden_size, A = (config.bidirectional ? 2 : 1) * H, E = config.embedding_dim;
  const std::size_t F = config.decoder == models::DecoderKind::luong ? H : H + A + E;  // what W_o reads
  return E + F + 1;  // a row of the target embedding, a row of W_o and its bias
}

double bleu_ceiling(const std::vector<data::TranslationExample>& test, const data::Vocabulary& target) {
  std::vector<std::vector<std::string>> best;
  std::vector<std::vector<std::vector<std::string>>> references;
  for (const data::TranslationExample& example : test) {
    best.push_back(target.decode(target.encode(example.references.front())));  // unknown words: "<unk>"
    references.push_back(example.references);
  }
  return data::corpus_bleu(best, references).bleu;
}

}  // namespace yours
