// Sentence-pair files, splits and vocabularies for the translation task (pairs.hpp).
#include "data/pairs.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "autograd/tensor.hpp"
#include "data/data_file.hpp"

namespace attend::data {

namespace {

// The 0-based offset of the first byte that is not part of valid UTF-8, or npos.
std::size_t invalid_utf8_at(const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + at),
                                                static_cast<utf8proc_ssize_t>(text.size() - at), &c);
    if (n <= 0) return at;
    at += static_cast<std::size_t>(n);
  }
  return std::string::npos;
}

}  // namespace

PairFile read_pair_file(const std::string& path, const PairReadOptions& options) {
  if (options.source_column != 1 && options.source_column != 2) {
    throw std::invalid_argument(path + ": the source column must be 1 or 2, not " +
                                std::to_string(options.source_column));
  }
  const std::string content = read_data_file(path, "a sentence-pair file");

  PairFile file;
  file.bytes = content.size();
  file.fingerprint = fingerprint(content);

  std::size_t begin = content.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (begin < content.size()) {
    std::size_t end = content.find('\n', begin);
    if (end == std::string::npos) end = content.size();
    std::string line = content.substr(begin, end - begin);
    begin = end + 1;
    ++file.lines;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
    const std::string where = path + ":" + std::to_string(file.lines) + ": ";
    std::string problem;
    const std::size_t bad_byte = invalid_utf8_at(line);
    const std::size_t tab = line.find('\t');
    std::string first, second;
    if (bad_byte != std::string::npos) {
      problem = "not valid UTF-8 at byte " + std::to_string(bad_byte + 1) + " of the line";
    } else if (tab == std::string::npos) {
      problem = "no TAB: expected two sentences, `column 1<TAB>column 2`";
    } else {
      first = line.substr(0, tab);
      const std::size_t next = line.find('\t', tab + 1);
      second = line.substr(tab + 1, next == std::string::npos ? std::string::npos : next - tab - 1);
      if (first.find_first_not_of(' ') == std::string::npos || second.find_first_not_of(' ') == std::string::npos) {
        problem = "an empty sentence";
      }
    }
    if (!problem.empty()) {
      if (!options.skip_bad_lines) throw std::invalid_argument(where + problem);
      ++file.skipped;
      continue;
    }
    if (options.source_column == 1) {
      file.pairs.push_back({std::move(first), std::move(second), file.lines});
    } else {
      file.pairs.push_back({std::move(second), std::move(first), file.lines});
    }
  }
  if (file.pairs.empty()) {
    throw std::invalid_argument(path + (content.empty() ? ": empty file, no sentence pairs" : ": no sentence pairs") +
                                (file.skipped ? " (" + std::to_string(file.skipped) + " bad lines skipped)" : ""));
  }
  return file;
}

std::size_t pair_column(const std::string& path, const std::string& language) {
  if (language == "1" || language == "2") return language == "1" ? 1 : 2;
  const std::size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  name = name.substr(0, name.find('.'));
  const std::size_t dash = name.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == name.size() ||
      name.find('-', dash + 1) != std::string::npos) {
    throw std::invalid_argument(path + ": the file name does not say which language is in which column (as " +
                                "spa-eng.tsv does); name the column instead, 1 or 2, not \"" + language + "\"");
  }
  const std::string first = name.substr(0, dash), second = name.substr(dash + 1);
  if (language == first) return 1;
  if (language == second) return 2;
  throw std::invalid_argument(path + ": \"" + language + "\" is not one of the file's languages, " + first +
                              " (column 1) and " + second + " (column 2)");
}

TranslationData make_translation_data(const PairFile& file, const TranslationSplitOptions& options) {
  TranslationData data;
  // tokenised pairs within the length limit, grouped by source sentence in order of first appearance
  std::vector<TokenPair> pairs;
  std::vector<std::size_t> group_of;
  std::vector<std::vector<std::size_t>> groups;
  std::unordered_map<std::string, std::size_t> group_index;
  for (const SentencePair& p : file.pairs) {
    TokenPair tokens{tokenize(p.source, options.source_tokenization), tokenize(p.target, options.target_tokenization)};
    if (tokens.source.empty() || tokens.target.empty()) continue;
    // the word limit applies to sides cut into words (a character-tokenised side has no words to count)
    const auto too_long = [&](const std::vector<std::string>& side, Tokenization tokenization) {
      return options.max_words > 0 && tokenization == Tokenization::words && word_count(side) > options.max_words;
    };
    if (too_long(tokens.source, options.source_tokenization) || too_long(tokens.target, options.target_tokenization)) {
      continue;
    }
    const auto [at, added] = group_index.emplace(join_tokens(tokens.source), groups.size());
    if (added) groups.emplace_back();
    groups[at->second].push_back(pairs.size());
    pairs.push_back(std::move(tokens));
  }
  data.kept_pairs = pairs.size();
  data.distinct_sources = groups.size();
  if (options.test_size + options.validation_size >= groups.size()) {
    throw std::invalid_argument(
        "the data has " + std::to_string(groups.size()) + " distinct source sentences" +
        (options.max_words ? " of at most " + std::to_string(options.max_words) + " words" : "") + "; " +
        std::to_string(options.test_size) + " test and " + std::to_string(options.validation_size) +
        " validation sentences leave none to train on");
  }
  // the distinct sources shuffled (Fisher–Yates): test first, then validation, then training
  std::vector<std::size_t> order(groups.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  Rng rng(options.seed);
  for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.next() % (i + 1)]);
  const auto held_out = [&](std::size_t group) {
    TranslationExample example;
    example.source = pairs[groups[group].front()].source;
    for (std::size_t k : groups[group]) {
      if (std::find(example.references.begin(), example.references.end(), pairs[k].target) ==
          example.references.end()) {
        example.references.push_back(pairs[k].target);
      }
    }
    return example;
  };
  for (std::size_t i = 0; i < options.test_size; ++i) data.test.push_back(held_out(order[i]));
  for (std::size_t i = options.test_size; i < options.test_size + options.validation_size; ++i) {
    data.validation.push_back(held_out(order[i]));
  }
  std::vector<std::size_t> train;
  for (std::size_t i = options.test_size + options.validation_size; i < order.size(); ++i) {
    for (std::size_t k : groups[order[i]]) train.push_back(k);
  }
  if (options.train_size > 0 && options.train_size < train.size()) {
    for (std::size_t i = train.size() - 1; i > 0; --i) std::swap(train[i], train[rng.next() % (i + 1)]);
    train.resize(options.train_size);
  }
  std::sort(train.begin(), train.end());  // file order
  for (std::size_t k : train) data.train.push_back(pairs[k]);
  return data;
}

Vocabulary build_vocabulary(const std::vector<std::vector<std::string>>& sentences, std::size_t min_count) {
  std::map<std::string, std::size_t> counts;  // ordered: ties come out in byte order
  for (const auto& sentence : sentences) {
    for (const auto& token : sentence) ++counts[token];
  }
  std::vector<std::pair<std::string, std::size_t>> kept;
  for (const auto& [token, count] : counts) {
    if (count >= std::max<std::size_t>(min_count, 1)) kept.emplace_back(token, count);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  Vocabulary vocabulary;
  for (const auto& [token, count] : kept) vocabulary.add(token);  // a token spelled like a special is that special
  return vocabulary;
}

}  // namespace attend::data
