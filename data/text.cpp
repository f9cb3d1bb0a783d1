// Normalisation and tokenisation of sentences (text.hpp), on utf8proc.
#include "data/text.hpp"

#include <utf8proc.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "data/vocabulary.hpp"

namespace attend::data {

namespace {

const char* const space_token = "\xE2\x96\x81";  // "▁" U+2581

std::int32_t code_point(const std::string& character) {
  utf8proc_int32_t c = -1;
  utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(character.data()),
                   static_cast<utf8proc_ssize_t>(character.size()), &c);
  return c;
}

void append(std::string& text, std::int32_t c) {
  utf8proc_uint8_t bytes[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(c, bytes);
  text.append(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(n));
}

bool is_space(std::int32_t c) {
  const utf8proc_category_t category = utf8proc_category(c);
  return category == UTF8PROC_CATEGORY_ZS || category == UTF8PROC_CATEGORY_ZL || category == UTF8PROC_CATEGORY_ZP ||
         category == UTF8PROC_CATEGORY_CC;
}

bool is_dropped(std::int32_t c) { return c == 0x200B || c == 0x00AD || c == 0x2060 || c == 0xFEFF; }

// Letters, marks (accents, Indic vowel signs) and numbers: what words are made of.
bool is_word_character(std::int32_t c) {
  const utf8proc_category_t category = utf8proc_category(c);
  return (category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_NO) || c == 0x200C || c == 0x200D;
}

bool is_digit(std::int32_t c) { return utf8proc_category(c) == UTF8PROC_CATEGORY_ND; }

bool is_punctuation_or_symbol(std::int32_t c) {
  const utf8proc_category_t category = utf8proc_category(c);
  return category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_SO;
}

// A mark that stays inside its word when it joins two word characters: apostrophes and hyphens anywhere, "." and
// "," between digits.
bool joins(std::int32_t before, std::int32_t mark, std::int32_t after) {
  if (!is_word_character(before) || !is_word_character(after)) return false;
  if (mark == '\'' || mark == '-' || mark == 0x2010) return true;
  return (mark == '.' || mark == ',') && is_digit(before) && is_digit(after);
}

// Characters that attach to the token before (closing) or after (opening) them in detokenize.
bool is_opening(const std::string& token) {
  const std::int32_t c = token.empty() ? -1 : code_point(token);
  const utf8proc_category_t category = utf8proc_category(c);
  return category == UTF8PROC_CATEGORY_PS || category == UTF8PROC_CATEGORY_PI || c == 0x00BF || c == 0x00A1;  // ¿ ¡
}

bool is_closing(const std::string& token) {
  static const std::vector<std::string> closing = {".", ",", "!", "?", ";", ":", "।", "、", "。", "…", "%"};
  for (const auto& c : closing) {
    if (token == c) return true;
  }
  const utf8proc_category_t category = utf8proc_category(token.empty() ? -1 : code_point(token));
  return category == UTF8PROC_CATEGORY_PE || category == UTF8PROC_CATEGORY_PF;
}

}  // namespace

Tokenization tokenization_from_string(const std::string& name) {
  if (name == "words") return Tokenization::words;
  if (name == "characters") return Tokenization::characters;
  throw std::invalid_argument("unknown tokenization \"" + name + "\" (expected words or characters)");
}

std::string to_string(Tokenization tokenization) {
  return tokenization == Tokenization::words ? "words" : "characters";
}

std::string normalize_text(const std::string& text) {
  // 1-3: validate, lower-case, map spaces and drop invisible hints (one U+0020 per whitespace run, none at the ends)
  std::string lowered;
  bool pending_space = false;
  for (const std::string& character : utf8_characters(text)) {
    std::int32_t c = code_point(character);
    if (is_dropped(c)) continue;
    if (is_space(c)) {
      pending_space = !lowered.empty();
      continue;
    }
    if (pending_space) lowered += ' ';
    pending_space = false;
    if (c == 0x2019) c = '\'';
    append(lowered, utf8proc_tolower(c));
  }
  // NFC after lower-casing, so that the result is in NFC whatever the case mapping produced
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> composed(
      utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(lowered.c_str())), &std::free);
  if (!composed) throw std::invalid_argument("normalize_text: utf8proc could not put the text in NFC");
  return reinterpret_cast<const char*>(composed.get());
}

std::vector<std::string> tokenize(const std::string& text, Tokenization tokenization) {
  const std::vector<std::string> characters = utf8_characters(normalize_text(text));
  std::vector<std::int32_t> points;
  for (const auto& c : characters) points.push_back(code_point(c));
  std::vector<std::string> tokens;
  if (tokenization == Tokenization::characters) {
    for (std::size_t i = 0; i < characters.size(); ++i)
      tokens.push_back(points[i] == ' ' ? space_token : characters[i]);
    return tokens;
  }
  std::string word;
  const auto flush = [&] {
    if (!word.empty()) tokens.push_back(word);
    word.clear();
  };
  for (std::size_t i = 0; i < characters.size(); ++i) {
    const std::int32_t c = points[i];
    if (c == ' ') {
      flush();
    } else if (is_punctuation_or_symbol(c) &&
               !(i > 0 && i + 1 < characters.size() && joins(points[i - 1], c, points[i + 1]))) {
      flush();
      tokens.push_back(characters[i]);
    } else {
      word += characters[i];
    }
  }
  flush();
  return tokens;
}

std::size_t word_count(const std::vector<std::string>& tokens) {
  std::size_t count = 0;
  for (const auto& token : tokens) {
    for (const auto& character : utf8_characters(token)) {
      if (is_word_character(code_point(character))) {
        ++count;
        break;
      }
    }
  }
  return count;
}

std::string fingerprint(const std::string& bytes) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const unsigned char byte : bytes) hash = (hash ^ byte) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::string join_tokens(const std::vector<std::string>& tokens, const std::string& separator) {
  std::string text;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (k > 0) text += separator;
    text += tokens[k];
  }
  return text;
}

std::string detokenize(const std::vector<std::string>& tokens, Tokenization tokenization) {
  std::string text;
  if (tokenization == Tokenization::characters) {
    for (const auto& token : tokens) text += token == space_token ? std::string(" ") : token;
    return text;
  }
  bool glue_next = true;  // no space before the first token, nor after an opening mark
  for (const auto& token : tokens) {
    if (!glue_next && !is_closing(token)) text += ' ';
    text += token;
    glue_next = is_opening(token);
  }
  return text;
}

}  // namespace attend::data
