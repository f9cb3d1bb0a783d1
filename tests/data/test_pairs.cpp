// The translation task's data (data/text.hpp, data/pairs.hpp): normalisation (case, NFC, the many spaces of real
// files, invisible characters), word and character tokens, the display form; reading pair files with every error a
// file can have (each naming the file and the line) and skipping bad lines on request; the split by distinct source
// sentence (deterministic, disjoint, all references kept); vocabularies with a minimum count; and the real Tatoeba
// files in ../shared/data.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "data/pairs.hpp"
#include "data/text.hpp"
#include "tests/autograd/helpers.hpp"
#include "tests/needs_data.hpp"

using namespace attend::data;
using attend::testing::message_has;
using Strings = std::vector<std::string>;

namespace {

// A scratch folder, removed afterwards.
struct Scratch {
  std::string dir;
  Scratch() {
    char pattern[] = "/tmp/attend-pairs-XXXXXX";
    dir = mkdtemp(pattern);
  }
  ~Scratch() { (void)std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string write(const std::string& name, const std::string& contents) const {
    const std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
};

Strings words(const std::string& text) { return tokenize(text, Tokenization::words); }

// A small file: 6 distinct sources, "go ." with three translations.
const char* const small_file =
    "Go.\tVe.\nGo.\tVete.\nGo.\tVaya.\nHi.\tHola.\nRun!\t¡Corre!\nWho?\t¿Quién?\nWow!\t¡Órale!\nI won!\t¡He ganado!\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(pairs)

BOOST_AUTO_TEST_CASE(normalisation_lower_cases_composes_and_maps_spaces) {
  BOOST_TEST(normalize_text("Hello WORLD") == "hello world");
  BOOST_TEST(normalize_text("ÉCOLE Ñandú") == "école ñandú");
  // "e" + U+0301 COMBINING ACUTE ACCENT is composed into U+00E9 (NFC): one character, equal to the precomposed form
  BOOST_TEST(normalize_text("cafe\xCC\x81") == "caf\xC3\xA9");
  // U+00A0, U+202F (before French "?"), U+3000, tabs and runs of spaces: one U+0020; none at the ends
  BOOST_TEST(normalize_text("  a\xC2\xA0"
                            "b\xE2\x80\xAF?\t\xE3\x80\x80"
                            "c  ") == "a b ? c");
  // U+200B ZERO WIDTH SPACE and U+00AD SOFT HYPHEN vanish; U+200D ZERO WIDTH JOINER (Indic scripts) stays
  BOOST_TEST(normalize_text("ab\xE2\x80\x8B"
                            "c\xC2\xAD"
                            "d") == "abcd");
  BOOST_TEST(normalize_text("\xE0\xA4\x95\xE2\x80\x8D") == "\xE0\xA4\x95\xE2\x80\x8D");
  // the typographic apostrophe becomes "'"
  BOOST_TEST(normalize_text("Don\xE2\x80\x99t") == "don't");
  BOOST_TEST(normalize_text("") == "");
  BOOST_CHECK_EXCEPTION(normalize_text("ab\xFF"), std::invalid_argument, message_has({"not valid UTF-8", "byte 2"}));
}

BOOST_AUTO_TEST_CASE(words_split_off_punctuation_but_keep_apostrophes_hyphens_and_numbers) {
  BOOST_TEST(words("¿Dónde está la biblioteca?") == Strings({"¿", "dónde", "está", "la", "biblioteca", "?"}),
             boost::test_tools::per_element());
  BOOST_TEST(
      words("I don't know, Tom's well-known.") == Strings({"i", "don't", "know", ",", "tom's", "well-known", "."}),
      boost::test_tools::per_element());
  BOOST_TEST(
      words("L\xE2\x80\x99homme a 3.5 kg, 1,000 $!") == Strings({"l'homme", "a", "3.5", "kg", ",", "1,000", "$", "!"}),
      boost::test_tools::per_element());
  // quotes at a word's edge are tokens; a hyphen or dot not between two word characters too
  BOOST_TEST(words("'Yes' - \"no\"... (maybe)") ==
                 Strings({"'", "yes", "'", "-", "\"", "no", "\"", ".", ".", ".", "(", "maybe", ")"}),
             boost::test_tools::per_element());
  // Hindi: vowel signs and the virama stay in their word, the danda "।" is punctuation
  BOOST_TEST(words("मैं ठीक हूँ।") == Strings({"मैं", "ठीक", "हूँ", "।"}), boost::test_tools::per_element());
  BOOST_TEST(words(" \t ").empty());
}

BOOST_AUTO_TEST_CASE(characters_are_code_points_with_a_space_token) {
  BOOST_TEST(
      tokenize("私は 学生です。", Tokenization::characters) == Strings({"私", "は", "▁", "学", "生", "で", "す", "。"}),
      boost::test_tools::per_element());
  BOOST_TEST(tokenize("AB  c", Tokenization::characters) == Strings({"a", "b", "▁", "c"}),
             boost::test_tools::per_element());
  BOOST_TEST(detokenize({"私", "は", "▁", "学"}, Tokenization::characters) == "私は 学");
  BOOST_TEST(to_string(tokenization_from_string("characters")) == "characters");
  BOOST_CHECK_EXCEPTION(tokenization_from_string("bytes"), std::invalid_argument,
                        message_has({"\"bytes\"", "words or characters"}));
}

BOOST_AUTO_TEST_CASE(word_count_ignores_punctuation) {
  BOOST_TEST(word_count(words("¿Dónde está, la biblioteca?")) == 4u);
  BOOST_TEST(word_count(words("3.5 kg!")) == 2u);
  BOOST_TEST(word_count({}) == 0u);
}

BOOST_AUTO_TEST_CASE(detokenize_attaches_punctuation_for_display) {
  BOOST_TEST(detokenize(words("¿Dónde está la biblioteca?"), Tokenization::words) == "¿dónde está la biblioteca?");
  BOOST_TEST(detokenize(words("I think so, (maybe) Tom."), Tokenization::words) == "i think so, (maybe) tom.");
  BOOST_TEST(detokenize({}, Tokenization::words) == "");
  BOOST_TEST(join_tokens(words("¿Dónde está?")) == "¿ dónde está ?");
  BOOST_TEST(join_tokens({"a", "b"}, "") == "ab");
  BOOST_TEST(join_tokens({}) == "");
}

BOOST_AUTO_TEST_CASE(reads_pairs_in_either_direction) {
  Scratch scratch;
  const std::string path = scratch.write("eng-spa.tsv", small_file);
  const PairFile forward = read_pair_file(path);
  BOOST_TEST(forward.pairs.size() == 8u);
  BOOST_TEST(forward.lines == 8u);
  BOOST_TEST(forward.skipped == 0u);
  BOOST_TEST(forward.pairs[4].source == "Run!");
  BOOST_TEST(forward.pairs[4].target == "¡Corre!");
  BOOST_TEST(forward.pairs[4].line == 5u);
  PairReadOptions options;
  options.source_column = 2;
  const PairFile backward = read_pair_file(path, options);
  BOOST_TEST(backward.pairs[4].source == "¡Corre!");
  BOOST_TEST(backward.pairs[4].target == "Run!");
  BOOST_TEST(backward.fingerprint == forward.fingerprint);
  BOOST_TEST(forward.fingerprint.size() == 16u);
  BOOST_TEST(read_pair_file(scratch.write("other.tsv", std::string(small_file) + "A.\tB.\n")).fingerprint !=
             forward.fingerprint);
}

BOOST_AUTO_TEST_CASE(bom_crlf_blank_lines_and_extra_columns) {
  Scratch scratch;
  // BOM, CR LF endings, a blank line, manythings' third (attribution) column, no newline at the end
  const std::string path = scratch.write(
      "x.tsv", "\xEF\xBB\xBFGo.\tVe.\r\n\r\nHi.\tHola.\tCC-BY 2.0 (France) Attribution: tatoeba.org\r\nOk.\tVale.");
  const PairFile file = read_pair_file(path);
  BOOST_REQUIRE(file.pairs.size() == 3u);
  BOOST_TEST(file.pairs[0].source == "Go.");
  BOOST_TEST(file.pairs[1].target == "Hola.");
  BOOST_TEST(file.pairs[1].line == 3u);
  BOOST_TEST(file.pairs[2].target == "Vale.");
}

BOOST_AUTO_TEST_CASE(file_errors_name_the_file) {
  Scratch scratch;
  BOOST_CHECK_EXCEPTION(read_pair_file(scratch.dir + "/missing.tsv"), std::invalid_argument,
                        message_has({"missing.tsv", "cannot open", "No such file"}));
  BOOST_CHECK_EXCEPTION(read_pair_file(scratch.dir), std::invalid_argument,
                        message_has({scratch.dir, "is a directory"}));
  BOOST_CHECK_EXCEPTION(read_pair_file(scratch.write("empty.tsv", "")), std::invalid_argument,
                        message_has({"empty.tsv", "empty file"}));
  BOOST_CHECK_EXCEPTION(read_pair_file(scratch.write("blank.tsv", "\n\n  \n")), std::invalid_argument,
                        message_has({"blank.tsv", "no sentence pairs"}));
  PairReadOptions options;
  options.source_column = 3;
  BOOST_CHECK_EXCEPTION(read_pair_file(scratch.write("a.tsv", small_file), options), std::invalid_argument,
                        message_has({"source column must be 1 or 2"}));
}

BOOST_AUTO_TEST_CASE(bad_lines_name_file_and_line_or_are_skipped_and_counted) {
  Scratch scratch;
  const std::string no_tab = scratch.write("no-tab.tsv", "Go.\tVe.\nHi. Hola.\nOk.\tVale.\n");
  BOOST_CHECK_EXCEPTION(read_pair_file(no_tab), std::invalid_argument, message_has({"no-tab.tsv:2: ", "no TAB"}));
  const std::string bad_utf8 = scratch.write("latin1.tsv", "Go.\tVe.\nOk.\tVale.\nNi\xF1o.\tBoy.\n");
  BOOST_CHECK_EXCEPTION(read_pair_file(bad_utf8), std::invalid_argument,
                        message_has({"latin1.tsv:3: ", "not valid UTF-8 at byte 3"}));
  const std::string empty_side = scratch.write("empty-side.tsv", "Go.\tVe.\n \tVale.\n");
  BOOST_CHECK_EXCEPTION(read_pair_file(empty_side), std::invalid_argument,
                        message_has({"empty-side.tsv:2: ", "empty sentence"}));
  PairReadOptions skip;
  skip.skip_bad_lines = true;
  const PairFile file =
      read_pair_file(scratch.write("mixed.tsv", "Go.\tVe.\nbad\nNi\xF1o.\tx\nOk.\tVale.\n\tx\n"), skip);
  BOOST_TEST(file.pairs.size() == 2u);
  BOOST_TEST(file.skipped == 3u);
  BOOST_TEST(file.pairs[1].line == 4u);
  // nothing but bad lines: an error that says how many were skipped
  BOOST_CHECK_EXCEPTION(read_pair_file(scratch.write("all-bad.tsv", "a\nb\n"), skip), std::invalid_argument,
                        message_has({"all-bad.tsv", "no sentence pairs", "2 bad lines skipped"}));
}

BOOST_AUTO_TEST_CASE(columns_from_the_file_name) {
  BOOST_TEST(pair_column("data/tatoeba/spa-eng.tsv", "spa") == 1u);
  BOOST_TEST(pair_column("data/tatoeba/spa-eng.tsv", "eng") == 2u);
  BOOST_TEST(pair_column("anything.txt", "2") == 2u);
  BOOST_CHECK_EXCEPTION(pair_column("data/spa-eng.tsv", "fra"), std::invalid_argument,
                        message_has({"\"fra\"", "spa (column 1)", "eng (column 2)"}));
  BOOST_CHECK_EXCEPTION(pair_column("data/pairs.tsv", "spa"), std::invalid_argument,
                        message_has({"pairs.tsv", "does not say which language", "1 or 2"}));
}

BOOST_AUTO_TEST_CASE(split_by_distinct_source_keeps_all_references) {
  Scratch scratch;
  const PairFile file = read_pair_file(scratch.write("eng-spa.tsv", small_file));
  TranslationSplitOptions options;
  options.test_size = 2;
  options.validation_size = 1;
  const TranslationData data = make_translation_data(file, options);
  BOOST_TEST(data.kept_pairs == 8u);
  BOOST_TEST(data.distinct_sources == 6u);
  BOOST_TEST(data.test.size() == 2u);
  BOOST_TEST(data.validation.size() == 1u);
  // every source is in exactly one split; the training pairs of a source are all its pairs
  std::multiset<std::string> seen;
  for (const auto& e : data.test) seen.insert(join_tokens(e.source));
  for (const auto& e : data.validation) seen.insert(join_tokens(e.source));
  std::set<std::string> train_sources;
  for (const auto& p : data.train) train_sources.insert(join_tokens(p.source));
  for (const auto& s : train_sources) seen.insert(s);
  BOOST_TEST(seen.size() == 6u);
  BOOST_TEST(std::set<std::string>(seen.begin(), seen.end()).size() == 6u);
  std::size_t pairs_of_held_out = 0;
  for (const auto* split : {&data.test, &data.validation}) {
    for (const auto& e : *split) pairs_of_held_out += e.references.size();
  }
  BOOST_TEST(data.train.size() + pairs_of_held_out == 8u);
  // "go ." keeps its three translations wherever it went
  bool found = false;
  for (const auto* split : {&data.test, &data.validation}) {
    for (const auto& e : *split) {
      if (join_tokens(e.source) == "go .") {
        found = true;
        BOOST_TEST(e.references.size() == 3u);
      }
    }
  }
  if (!found)
    BOOST_TEST(std::count_if(data.train.begin(), data.train.end(),
                             [](const TokenPair& p) { return join_tokens(p.source) == "go ."; }) == 3);
  // same seed, same split; training pairs stay in file order
  const TranslationData again = make_translation_data(file, options);
  BOOST_TEST(join_tokens(again.test[0].source) == join_tokens(data.test[0].source));
  BOOST_TEST(join_tokens(again.test[1].source) == join_tokens(data.test[1].source));
  BOOST_TEST(again.train.size() == data.train.size());
}

BOOST_AUTO_TEST_CASE(seeds_change_the_split) {
  Scratch scratch;
  std::string contents;
  for (int i = 0; i < 200; ++i) contents += "sentence " + std::to_string(i) + ".\tfrase " + std::to_string(i) + ".\n";
  const PairFile file = read_pair_file(scratch.write("eng-spa.tsv", contents));
  TranslationSplitOptions options;
  options.test_size = 20;
  options.validation_size = 10;
  const TranslationData one = make_translation_data(file, options);
  options.seed = 2;
  const TranslationData two = make_translation_data(file, options);
  std::set<std::string> a, b;
  for (const auto& e : one.test) a.insert(join_tokens(e.source));
  for (const auto& e : two.test) b.insert(join_tokens(e.source));
  BOOST_TEST(a.size() == 20u);
  BOOST_TEST((a != b));
  // a training sample of 50 pairs, none of them held out
  options.train_size = 50;
  const TranslationData sample = make_translation_data(file, options);
  BOOST_TEST(sample.train.size() == 50u);
  for (const auto& p : sample.train) BOOST_TEST(b.count(join_tokens(p.source)) == 0u);
}

BOOST_AUTO_TEST_CASE(max_words_filters_word_sides_only) {
  Scratch scratch;
  const std::string path = scratch.write(
      "eng-jpn.tsv",
      "One two three.\t一二三。\nOne two three four five.\t一二三四五。\nA b.\tあいうえおかきくけこさしすせそ。\n");
  TranslationSplitOptions options;
  options.test_size = 0;
  options.validation_size = 0;
  options.max_words = 3;
  options.target_tokenization = Tokenization::characters;
  const TranslationData data = make_translation_data(read_pair_file(path), options);
  // the five-word English sentence goes; the long Japanese one stays (a character side has no word limit)
  BOOST_TEST(data.kept_pairs == 2u);
  BOOST_TEST(data.train[1].target.size() == 16u);
  // held-out sizes that leave nothing to train on
  options.test_size = 1;
  options.validation_size = 1;
  BOOST_CHECK_EXCEPTION(make_translation_data(read_pair_file(path), options), std::invalid_argument,
                        message_has({"2 distinct source sentences of at most 3 words", "1 test and 1 validation"}));
}

BOOST_AUTO_TEST_CASE(vocabulary_with_minimum_count) {
  const std::vector<Strings> sentences = {{"b", "a", "c"}, {"a", "b"}, {"a", "d", "d"}};
  // counts: a 3, b 2, d 2, c 1 → most frequent first, ties in byte order
  const Vocabulary all = build_vocabulary(sentences, 1);
  BOOST_TEST(all.tokens() == Strings({"<pad>", "<sos>", "<eos>", "<unk>", "a", "b", "d", "c"}),
             boost::test_tools::per_element());
  const Vocabulary frequent = build_vocabulary(sentences, 2);
  BOOST_TEST(frequent.size() == 7u);
  BOOST_TEST(frequent.id("c") == Vocabulary::unk_id);
  BOOST_TEST(frequent.encode({"a", "zebra", "d"}) == std::vector<std::int64_t>({4, Vocabulary::unk_id, 6}),
             boost::test_tools::per_element());
  // through JSON (as in a checkpoint) and back: the same ids
  BOOST_TEST(Vocabulary::from_json(frequent.to_json()).tokens() == frequent.tokens(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(real_tatoeba_spanish_english, *attend::test::needs_data({"tatoeba/spa-eng.tsv"})) {
  const std::string path = attend::test::data_file("tatoeba/spa-eng.tsv");
  PairReadOptions options;
  options.source_column = pair_column(path, "spa");
  const PairFile file = read_pair_file(path, options);
  BOOST_TEST(file.pairs.size() == 118964u);  // every line (data README)
  BOOST_TEST(file.skipped == 0u);
  TranslationSplitOptions split;
  split.max_words = 10;
  const TranslationData data = make_translation_data(file, split);
  BOOST_TEST(data.test.size() == 2000u);
  BOOST_TEST(data.validation.size() == 1000u);
  BOOST_TEST(data.kept_pairs > 100000u);
  std::set<std::string> held_out;
  std::size_t references = 0;
  for (const auto* s : {&data.test, &data.validation}) {
    for (const auto& e : *s) {
      held_out.insert(join_tokens(e.source));
      references += e.references.size();
      BOOST_TEST(word_count(e.source) <= 10u);
    }
  }
  BOOST_TEST(held_out.size() == 3000u);
  BOOST_TEST(references > 3000u);  // some sources have several translations
  for (const auto& p : data.train) {
    if (held_out.count(join_tokens(p.source)) != 0)
      BOOST_FAIL("training source " << join_tokens(p.source) << " is held out");
  }
  const Vocabulary target = build_vocabulary(
      [&] {
        std::vector<Strings> sentences;
        for (const auto& p : data.train) sentences.push_back(p.target);
        return sentences;
      }(),
      2);
  BOOST_TEST(target.contains("library"));
  BOOST_TEST(target.id(".") == 4);  // the most frequent English token
}

BOOST_AUTO_TEST_SUITE_END()
