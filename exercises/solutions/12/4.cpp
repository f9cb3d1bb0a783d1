// Exercise 12.4 — a solution (the task: exercises/12/4.hpp).
//
// Why it works: both tokenisations start from the same normalised text, so a sentence can go from one to the other
// through the text people read: detokenize, then tokenize the other way. The word tokens come back exactly, because
// tokenising what detokenize wrote gives the tokens it was given (the chapter checks this on every sentence). The
// characters need not: word tokens do not keep the spacing, so "2:30" (words 2 : 30) comes back as "2: 30": about
// one English sentence of the file in 170 has other characters than its word tokens' display form.
// Why a character BLEU is not comparable with a word BLEU: its 4-grams are four letters (or spaces) in a row, and any
// two English sentences share many of those ("the ", "ing ", "you ") whatever they mean. In the check, outputs that
// are another sentence's translation score 0 on words (no word 4-gram in common) and about 0.1 on characters; a
// character score measures spelling overlap, on a scale of its own, and counts every word as many n-grams as it has
// letters. Scored on words after detokenising, a character model's outputs can be compared with the chapter's.
#include "exercises/12/4.hpp"

#include "data/text.hpp"

namespace yours {

using namespace attend;

std::vector<std::string> words_to_characters(const std::vector<std::string>& words) {
  return data::tokenize(data::detokenize(words, data::Tokenization::words), data::Tokenization::characters);
}

std::vector<std::string> characters_to_words(const std::vector<std::string>& characters) {
  return data::tokenize(data::detokenize(characters, data::Tokenization::characters), data::Tokenization::words);
}

data::BleuScore character_bleu(const std::vector<std::vector<std::string>>& outputs,
                               const std::vector<std::vector<std::vector<std::string>>>& references) {
  std::vector<std::vector<std::string>> output_characters;
  std::vector<std::vector<std::vector<std::string>>> reference_characters;
  for (const std::vector<std::string>& output : outputs) output_characters.push_back(words_to_characters(output));
  for (const auto& sentence : references) {
    reference_characters.emplace_back();
    for (const std::vector<std::string>& reference : sentence) {
      reference_characters.back().push_back(words_to_characters(reference));
    }
  }
  return data::corpus_bleu(output_characters, reference_characters);
}

}  // namespace yours
