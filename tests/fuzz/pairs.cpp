// Fuzz target `pairs`: the translation task's input path on arbitrary bytes — data/pairs.hpp read_pair_file
// (through a scratch file, bad lines refused and skipped) and data/text.hpp on the raw bytes as one text:
// normalize_text, tokenize into words and characters, detokenize.
// Invalid UTF-8 must give std::invalid_argument, never undefined behaviour. A finding is a crash, hang, leak or
// sanitizer report, another exception, and any of these broken promises:
//   - read_pair_file: the strict read (bad lines refused) and the lenient one (skipped and counted, columns swapped)
//     agree — when the strict one succeeds the lenient one has the same pairs, swapped, and skipped none; every pair
//     is two valid UTF-8 sentences without TAB or newline, neither blank; lines, bytes and fingerprint describe the
//     file; a refused file gets a message that names it;
//   - data::utf8_characters splits text exactly where utf8proc does (pairs.cpp validates lines with utf8proc,
//     text.cpp with utf8_characters: a disagreement would let a line through that tokenisation then rejects);
//   - normalize_text returns what it documents: no leading, trailing or double space, no control character, and it
//     is idempotent (normalising the result changes nothing);
//   - word tokens are non-empty and space-free and concatenate to the normal form without its spaces; character
//     tokens are the normal form's code points, and detokenize puts the normal form back (unless it holds "▁");
//   - detokenize of any token list, valid UTF-8 or not, only inserts spaces between tokens (words) or turns "▁" into
//     a space (characters).
#include "data/pairs.hpp"

#include <algorithm>
#include <cstdio>

#include "data/text.hpp"
#include "tests/fuzz/fuzz.hpp"

using namespace attend::data;
using attend::fuzz::check;
using attend::fuzz::finding;
using attend::fuzz::printable;

namespace {

const std::string space_token = "\xE2\x96\x81";  // "▁" U+2581

std::optional<PairFile> read(const std::string& path, bool skip_bad_lines, std::size_t source_column) {
  PairReadOptions options;
  options.skip_bad_lines = skip_bad_lines;
  options.source_column = source_column;
  try {
    return read_pair_file(path, options);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    check(what.rfind(path + ":", 0) == 0,
          "read_pair_file: a message that does not start with the file: " + printable(what));
    return std::nullopt;
  }
}

// Lines as read_pair_file counts them: after a BOM, pieces between '\n', a final piece without '\n' included.
std::size_t count_lines(const std::string& content) {
  const std::size_t begin = content.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  if (begin >= content.size()) return 0;
  const auto newlines =
      static_cast<std::size_t>(std::count(content.begin() + static_cast<long>(begin), content.end(), '\n'));
  return newlines + (content.back() == '\n' ? 0 : 1);
}

bool blank(const std::string& sentence) { return sentence.find_first_not_of(' ') == std::string::npos; }

void check_file(const PairFile& file, const std::string& content) {
  check(file.bytes == content.size(), "read_pair_file: bytes differs from the file's size");
  check(file.fingerprint.size() == 16 && file.fingerprint.find_first_not_of("0123456789abcdef") == std::string::npos,
        "read_pair_file: the fingerprint is not 16 hex digits: " + printable(file.fingerprint));
  check(file.lines == count_lines(content), "read_pair_file: counted " + std::to_string(file.lines) +
                                                " lines, the file has " + std::to_string(count_lines(content)));
  check(!file.pairs.empty(), "read_pair_file returned no pair without throwing");
  check(file.pairs.size() + file.skipped <= file.lines, "read_pair_file: more pairs and skipped lines than lines");
  std::size_t previous_line = 0;
  for (const SentencePair& p : file.pairs) {
    check(p.line > previous_line && p.line <= file.lines, "read_pair_file: line numbers out of order or range");
    previous_line = p.line;
    for (const std::string* sentence : {&p.source, &p.target}) {
      check(!blank(*sentence), "read_pair_file: a blank sentence on line " + std::to_string(p.line));
      check(sentence->find_first_of("\t\n") == std::string::npos,
            "read_pair_file: a sentence holds a TAB or newline: " + printable(*sentence));
      check(attend::fuzz::utf8proc_characters(*sentence).has_value(),
            "read_pair_file: a sentence is not valid UTF-8: " + printable(*sentence));
    }
  }
}

void check_pair_file(const std::string& path, const std::string& content) {
  const std::optional<PairFile> strict = read(path, false, 1);
  const std::optional<PairFile> lenient = read(path, true, 2);
  if (strict) check_file(*strict, content);
  if (lenient) check_file(*lenient, content);
  if (!strict) return;
  check(lenient.has_value(), "read_pair_file refuses with skip_bad_lines a file it reads without");
  check(lenient->skipped == 0 && lenient->pairs.size() == strict->pairs.size(),
        "read_pair_file skipped lines of a file without bad lines");
  for (std::size_t k = 0; k < strict->pairs.size(); ++k) {
    const SentencePair &a = strict->pairs[k], &b = lenient->pairs[k];
    check(a.source == b.target && a.target == b.source && a.line == b.line,
          "read_pair_file: source column 2 is not column 1 swapped, at line " + std::to_string(a.line));
  }
}

// data::utf8_characters against utf8proc: the same verdict, and the same characters.
std::optional<std::vector<std::string>> checked_characters(const std::string& text) {
  const auto expected = attend::fuzz::utf8proc_characters(text);
  std::optional<std::vector<std::string>> characters;
  try {
    characters = utf8_characters(text);
  } catch (const std::invalid_argument&) {
  }
  check(characters.has_value() == expected.has_value(),
        std::string("utf8_characters ") + (characters ? "accepts" : "refuses") + " text that utf8proc " +
            (expected ? "accepts" : "refuses") + ": " + printable(text));
  check(!characters || *characters == *expected,
        "utf8_characters splits text otherwise than utf8proc: " + printable(text));
  return characters;
}

// The normal form `normal` of some text, as normalize_text documents it.
void check_normal_form(const std::string& normal) {
  check(normal.empty() || (normal.front() != ' ' && normal.back() != ' '),
        "normalize_text left a leading or trailing space: " + printable(normal));
  check(normal.find("  ") == std::string::npos, "normalize_text left a double space: " + printable(normal));
  check(std::none_of(normal.begin(), normal.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }),
        "normalize_text left a control character: " + printable(normal));
  check(checked_characters(normal).has_value(), "normalize_text returned invalid UTF-8: " + printable(normal));
  check(normalize_text(normal) == normal,
        "normalize_text is not idempotent: " + printable(normal) + " becomes " + printable(normalize_text(normal)));
}

void check_tokens(const std::string& text, const std::string& normal) {
  const std::vector<std::string> words = tokenize(text, Tokenization::words);
  std::string without_spaces = normal;
  without_spaces.erase(std::remove(without_spaces.begin(), without_spaces.end(), ' '), without_spaces.end());
  for (const auto& w : words)
    check(!w.empty() && w.find(' ') == std::string::npos, "a word token is empty or has a space");
  check(join_tokens(words, "") == without_spaces,
        "the word tokens do not make up the normal form: " + printable(normal));

  const std::vector<std::string> characters = tokenize(text, Tokenization::characters);
  check(characters.size() == utf8_characters(normal).size(),
        "not one character token per code point: " + printable(normal));
  if (normal.find(space_token) == std::string::npos) {
    check(detokenize(characters, Tokenization::characters) == normal,
          "detokenize does not undo character tokens: " + printable(normal));
  }
}

// Every input text: invalid UTF-8 is refused with std::invalid_argument by every function that reads it.
void check_text(const std::string& text) {
  if (!checked_characters(text)) {
    for (const auto& f : {+[](const std::string& t) { normalize_text(t); },
                          +[](const std::string& t) { tokenize(t, Tokenization::words); },
                          +[](const std::string& t) { tokenize(t, Tokenization::characters); }}) {
      try {
        f(text);
      } catch (const std::invalid_argument&) {
        continue;
      }
      finding("invalid UTF-8 was not refused: " + printable(text));
    }
    return;
  }
  const std::string normal = normalize_text(text);
  check_normal_form(normal);
  check_tokens(text, normal);
}

// The input cut at newlines as a token list, whatever its bytes: detokenize only glues tokens together. Tokens never
// start with a space nor are empty (tokenize makes none such), and without them where a space was inserted is plain.
void check_detokenize(const std::string& text) {
  std::vector<std::string> tokens;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    if (end > begin && text[begin] != ' ') tokens.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  const std::string words = detokenize(tokens, Tokenization::words);
  std::size_t at = 0;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (k > 0 && words.compare(at, 1, " ") == 0) ++at;
    check(words.compare(at, tokens[k].size(), tokens[k]) == 0,
          "detokenize (words) did more than put spaces between tokens: " + printable(text));
    at += tokens[k].size();
  }
  check(at == words.size(), "detokenize (words) added more than spaces: " + printable(text));

  std::string expected;
  for (const auto& t : tokens) expected += t == space_token ? " " : t;
  check(detokenize(tokens, Tokenization::characters) == expected,
        "detokenize (characters) changed a token: " + printable(text));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static attend::fuzz::ScratchFile scratch("pairs.tsv");
  const std::string text(reinterpret_cast<const char*>(data), size);
  check_pair_file(scratch.write(data, size), text);
  check_text(text);
  check_detokenize(text);
  return 0;
}
