// The translation task's data (docs/12-translation.md): sentence-pair files in the Tatoeba/manythings format, read with
// errors that name the file and line; the sentences tokenised (text.hpp), filtered by length and split into training,
// validation and test sets by distinct source sentence, so that no test sentence was ever seen in training; and
// vocabularies built from the training split with a minimum count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/text.hpp"
#include "data/vocabulary.hpp"

namespace attend::data {

// One line of a pair file, as written (not normalised). `line` counts from 1.
struct SentencePair {
  std::string source;
  std::string target;
  std::size_t line = 0;
};

struct PairReadOptions {
  std::size_t source_column = 1;  // 1 or 2: which of the first two columns is the source
  bool skip_bad_lines = false;    // skip (and count) lines without a TAB, with an empty side, or not UTF-8
};

struct PairFile {
  std::vector<SentencePair> pairs;
  std::size_t lines = 0;    // lines read
  std::size_t skipped = 0;  // bad lines skipped (skip_bad_lines)
  std::size_t bytes = 0;
  std::string fingerprint;  // FNV-1a 64 of the file's bytes, 16 hex digits: says whether a file changed
};

// Reads `path`: UTF-8 (a BOM is skipped, CR LF accepted), one pair per line, `column 1<TAB>column 2`; more columns
// (manythings' attribution) are ignored, blank lines skipped. Throws std::invalid_argument "PATH: ..." when the file
// is missing, a directory, unreadable or holds no pair, and "PATH:LINE: ..." for the first bad line unless
// skip_bad_lines is set.
PairFile read_pair_file(const std::string& path, const PairReadOptions& options = {});

// Which column (1 or 2) `language` is in a file named X-Y.tsv (spa-eng.tsv: "spa" → 1, "eng" → 2); "1" and "2" are
// accepted for any file name. Throws std::invalid_argument naming the languages the file name gives.
std::size_t pair_column(const std::string& path, const std::string& language);

// A held-out source sentence with every translation the file gives for it.
struct TranslationExample {
  std::vector<std::string> source;
  std::vector<std::vector<std::string>> references;
};

struct TokenPair {
  std::vector<std::string> source;
  std::vector<std::string> target;
};

struct TranslationSplitOptions {
  std::uint64_t seed = 1;
  std::size_t train_size = 0;          // training pairs; 0: all that remain
  std::size_t validation_size = 1000;  // distinct source sentences
  std::size_t test_size = 2000;        // distinct source sentences
  std::size_t max_words = 0;           // keep pairs whose word-tokenised sides have at most this many words; 0: all
  Tokenization source_tokenization = Tokenization::words;
  Tokenization target_tokenization = Tokenization::words;
};

struct TranslationData {
  std::vector<TokenPair> train;  // in file order
  std::vector<TranslationExample> validation, test;
  std::size_t kept_pairs = 0;  // pairs within max_words
  std::size_t distinct_sources = 0;
};

// Tokenises every pair (text.hpp), keeps those within max_words, groups them by source sentence, and shuffles the
// distinct sources with Rng(seed): the first test_size go to test, the next validation_size to validation, the pairs of
// all others to train (a seeded sample of train_size of them when nonzero). Deterministic by seed. Throws
// std::invalid_argument when the held-out sizes leave no training pair.
TranslationData make_translation_data(const PairFile& file, const TranslationSplitOptions& options);

// The tokens of `sentences` that occur at least min_count times, most frequent first (ties in byte order), after
// the four specials. Everything else reads as <unk>.
Vocabulary build_vocabulary(const std::vector<std::vector<std::string>>& sentences, std::size_t min_count);

}  // namespace attend::data
