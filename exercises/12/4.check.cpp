// The check of exercise 12.4 (exercises/12/4.hpp): your conversions against the library's word and character splits
// of the same Spanish → English test sentences (every reference back to its words, and through characters and back),
// against the reference solution and on sentences by hand; then outputs that are wrong on purpose, each test sentence
// given another one's translation (three shifts), scored on words and with your character_bleu; and the word score of
// right outputs sent through characters and back, against their word score.
#include "exercises/12/4.hpp"

#define yours reference
#include "exercises/12/4.hpp"
#undef yours
#include "data/text.hpp"
#include "exercises/12/spanish_data.hpp"
#include "exercises/check.hpp"

using namespace attend;

namespace {

using Tokens = std::vector<std::string>;

std::string joined(const Tokens& tokens) {
  std::string text;
  for (const std::string& token : tokens) text += (text.empty() ? "" : " ") + token;
  return "\"" + text + "\"";
}

void check_by_hand(exercise::Check& check) {
  for (const std::string text :
       {"¿Dónde está la biblioteca?", "Don't trust him.", "It costs 1,000 yen, or 3.5 dollars."}) {
    check.run(text, [&] {
      const Tokens words = data::tokenize(text, data::Tokenization::words);
      const Tokens characters = data::tokenize(text, data::Tokenization::characters);
      const Tokens yours = yours::words_to_characters(words);
      check.that(yours == characters, "\"" + text + "\": the characters of its word tokens = its characters",
                 "yours " + joined(yours));
      check.that(yours::characters_to_words(characters) == words,
                 "\"" + text + "\": the words of its character tokens = its word tokens",
                 "yours " + joined(yours::characters_to_words(characters)));
    });
  }
  check.run("another case: \"I arrived at 2:30.\"", [&] {
    const std::string text = "I arrived at 2:30.";
    const Tokens words = data::tokenize(text, data::Tokenization::words);
    const Tokens yours = yours::words_to_characters(words), expected = reference::words_to_characters(words);
    check.that(
        yours == expected,
        "another case: \"I arrived at 2:30.\": the characters of the words i arrived at 2 : 30 . = those of their "
        "display form (which need not be the text's)",
        "yours " + joined(yours) + ", expected " + joined(expected));
  });
}

// The test sentences of the two splits of the same pairs: every 10th pair of the file, no word limit (a limit would
// count the words of the English side only when it is cut into words), 300 test sentences.
std::pair<data::TranslationData, data::TranslationData> splits() {
  const data::PairFile few = exercise::spanish_pairs(10);
  data::TranslationSplitOptions split;
  split.validation_size = 0;
  split.test_size = 300;
  const data::TranslationData words = data::make_translation_data(few, split);
  split.target_tokenization = data::Tokenization::characters;
  return {words, data::make_translation_data(few, split)};
}

void check_splits(exercise::Check& check, const data::TranslationData& words, const data::TranslationData& chars) {
  check.run("the test references of the two splits", [&] {
    std::size_t references = 0, back = 0, round_trip = 0, as_reference = 0, same_sources = 0;
    for (std::size_t k = 0; k < words.test.size(); ++k) {
      same_sources += words.test[k].source == chars.test[k].source;
      for (std::size_t r = 0; r < words.test[k].references.size(); ++r) {
        const Tokens& w = words.test[k].references[r];
        ++references;
        back += yours::characters_to_words(chars.test[k].references[r]) == w;
        round_trip += yours::characters_to_words(yours::words_to_characters(w)) == w;
        as_reference += yours::words_to_characters(w) == reference::words_to_characters(w);
      }
    }
    const std::string n = std::to_string(references);
    check.that(same_sources == words.test.size(), "the word split and the character split hold the same test sources",
               std::to_string(same_sources) + " of " + std::to_string(words.test.size()));
    check.that(back == references, "the character references of the split, turned into words = the word split's",
               std::to_string(back) + " of " + n);
    check.that(round_trip == references, "every word reference → characters → words = itself",
               std::to_string(round_trip) + " of " + n);
    check.that(as_reference == references, "every word reference → characters = the reference solution's",
               std::to_string(as_reference) + " of " + n);
  });
}

// Each test sentence given the first translation of the sentence `shift` places on: outputs that are wrong on purpose.
void check_shift(exercise::Check& check, const data::TranslationData& words, std::size_t shift) {
  const std::string name = "shift " + std::to_string(shift);
  check.run(name, [&] {
    std::vector<Tokens> outputs;
    std::vector<std::vector<Tokens>> references;
    for (std::size_t k = 0; k < words.test.size(); ++k) {
      outputs.push_back(words.test[(k + shift) % words.test.size()].references.front());
      references.push_back(words.test[k].references);
    }
    const data::BleuScore on_words = data::corpus_bleu(outputs, references);
    const data::BleuScore on_characters = yours::character_bleu(outputs, references);
    check.near(name + ": character BLEU = the reference's", on_characters.bleu,
               reference::character_bleu(outputs, references).bleu, 1e-15);
    check.that(on_words.bleu <= 0.01 && on_characters.bleu >= 0.05,
               name + ": another sentence's translation scores at most 0.01 on words and at least 0.05 on characters",
               "words " + exercise::number(on_words.bleu) + " (p_4 " + exercise::number(on_words.precisions[3]) +
                   "), characters " + exercise::number(on_characters.bleu) + " (p_4 " +
                   exercise::number(on_characters.precisions[3]) + ")");
  });
}

// Right outputs this time, each sentence's first reference: scored on words directly, and after a trip through
// characters (as a character model's outputs would be scored on words).
void check_back_to_words(exercise::Check& check, const data::TranslationData& words) {
  check.run("outputs through characters and back", [&] {
    std::vector<Tokens> outputs, back;
    std::vector<std::vector<Tokens>> references;
    for (const data::TranslationExample& example : words.test) {
      outputs.push_back(example.references.front());
      references.push_back(example.references);
      back.push_back(yours::characters_to_words(yours::words_to_characters(outputs.back())));
    }
    check.near("the first references, to characters and back: word BLEU = their word BLEU",
               data::corpus_bleu(back, references).bleu, data::corpus_bleu(outputs, references).bleu, 0.0);
  });
}

}  // namespace

int main() {
  exercise::Check check("12.4", "BLEU on characters, and back to words");
  check_by_hand(check);
  std::pair<data::TranslationData, data::TranslationData> split;
  check.run("the data: tatoeba/spa-eng.tsv", [&] { split = splits(); });
  if (split.first.test.empty()) return check.verdict();
  check_splits(check, split.first, split.second);
  for (const std::size_t shift : {1, 2, 3}) check_shift(check, split.first, shift);
  check_back_to_words(check, split.first);
  return check.verdict();
}
