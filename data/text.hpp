// Text for the translation task (docs/12-translation.md): the normalisation every sentence goes through before it is
// cut into tokens, word and character tokenisers, and the display form of a tokenised output. Unicode is handled by
// utf8proc (normal forms, case mapping, character categories); the policy itself is ours and is this:
//   1. The text must be valid UTF-8 (std::invalid_argument naming the byte otherwise).
//   2. Lower-cased code point by code point (Unicode simple case mapping), then put in NFC, so that "é" written as one
//      code point or as "e" + U+0301 is one token.
//   3. Whitespace is any space separator (U+0020, U+00A0, U+202F, U+3000, ...), line or paragraph separator or control
//      character; invisible format characters that only hint at line breaking are dropped (U+200B ZERO WIDTH SPACE,
//      U+00AD SOFT HYPHEN, U+2060 WORD JOINER, U+FEFF); U+200C/U+200D (ZWNJ/ZWJ), which change how Indic scripts
//      are written, are kept. The typographic apostrophe U+2019 becomes "'".
//   4. Words: every punctuation mark or symbol (Unicode categories P* and S*) is a token of its own ("¿", "?", "।",
//      "$"), except an apostrophe or hyphen between two letters or digits ("don't", "l'homme", "well-known") and a
//      "." or "," between two digits ("3.5", "1,000"), which stay inside their word.
//      Characters: every code point is a token, and each run of whitespace is the one token "▁" (U+2581), for scripts
//      written without spaces (Japanese).
#pragma once

#include <string>
#include <vector>

namespace attend::data {

enum class Tokenization { words, characters };

Tokenization tokenization_from_string(const std::string& name);  // "words" or "characters"; std::invalid_argument
std::string to_string(Tokenization tokenization);

// Steps 1–3 above: lower case, NFC, whitespace runs as one U+0020, no leading or trailing space.
std::string normalize_text(const std::string& text);

// normalize_text, then step 4.
std::vector<std::string> tokenize(const std::string& text, Tokenization tokenization);

// How many tokens are words: hold at least one letter or digit (punctuation does not count). Used for length limits.
std::size_t word_count(const std::vector<std::string>& tokens);

// Tokens as one line with `separator` between them: the form files and tests use ("¿ dónde está ?").
std::string join_tokens(const std::vector<std::string>& tokens, const std::string& separator = " ");

// Tokens as one line for people: words joined by spaces with closing punctuation attached to the word before it and
// opening punctuation ("¿", "(") to the word after; characters concatenated with "▁" as a space.
std::string detokenize(const std::vector<std::string>& tokens, Tokenization tokenization);

// FNV-1a 64 of the bytes as 16 hex digits: says whether a data file changed since a model was trained on it.
std::string fingerprint(const std::string& bytes);

}  // namespace attend::data
