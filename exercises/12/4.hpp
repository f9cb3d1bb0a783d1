// Exercise 12.4 — BLEU on characters, and back to words (docs/12-translation.md, "Exercises").
//
// With split.target_tokenization = data::Tokenization::characters the English side is cut into characters, every
// space one token "▁" (data/text.hpp), and BLEU (12.2)–(12.5) scores character n-grams: n = 1 … 4
// letters in a row, not words. Write the two conversions and the character score:
//   words_to_characters   the character tokens of a sentence given as word tokens: the text people read
//                         (data::detokenize(words, data::Tokenization::words)) cut into characters (data::tokenize);
//   characters_to_words   the way back: data::detokenize(characters, data::Tokenization::characters), cut into words;
//   character_bleu        corpus BLEU of outputs and references given as word tokens, both scored on characters.
// The check holds your conversions to the library's character split of the same sentences and to the word split, then
// scores outputs that are wrong on purpose (each test sentence given another sentence's translation) on words and on
// characters, with three shifts: what does a character 4-gram match, that a word 4-gram does not? Detokenising the
// character outputs and cutting them into words gives back the word tokens, so a character model can be scored on
// words like the chapter's.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <string>
#include <vector>

#include "data/bleu.hpp"

namespace yours {

std::vector<std::string> words_to_characters(const std::vector<std::string>& words);
std::vector<std::string> characters_to_words(const std::vector<std::string>& characters);
// outputs[k]: the words of output k; references[k]: the references of output k, each as words.
attend::data::BleuScore character_bleu(const std::vector<std::vector<std::string>>& outputs,
                                       const std::vector<std::vector<std::vector<std::string>>>& references);

}  // namespace yours
