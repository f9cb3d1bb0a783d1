// Vocabularies and UTF-8 splitting (models/vocabulary.hpp). The UTF-8 decoder follows the well-formed byte sequences
// of the Unicode standard (table 3-7), so that overlong forms, surrogates and code points above U+10FFFF are rejected.
#include "models/vocabulary.hpp"

#include <array>
#include <stdexcept>

namespace attend::models {

namespace {

const std::array<std::string, 4> special_tokens = {"<pad>", "<sos>", "<eos>", "<unk>"};

[[noreturn]] void throw_utf8(std::size_t offset, const char* reason) {
  throw std::invalid_argument("not valid UTF-8 at byte " + std::to_string(offset) + " (" + reason + ")");
}

}  // namespace

std::vector<std::string> utf8_characters(const std::string& text) {
  std::vector<std::string> characters;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    // Sequence length from the lead byte, and the allowed range of the second byte (narrower than 80..BF for E0
    // and F0, which would otherwise allow overlong forms, ED, which would allow surrogates, and F4, which would
    // allow code points above U+10FFFF).
    std::size_t length = 1;
    unsigned char second_low = 0x80, second_high = 0xBF;
    if (lead < 0x80) {
      length = 1;
    } else if (lead < 0xC0) {
      throw_utf8(i, "continuation byte without a lead byte");
    } else if (lead < 0xC2) {
      throw_utf8(i, "overlong form");
    } else if (lead < 0xE0) {
      length = 2;
    } else if (lead < 0xF0) {
      length = 3;
      if (lead == 0xE0) second_low = 0xA0;
      if (lead == 0xED) second_high = 0x9F;
    } else if (lead < 0xF5) {
      length = 4;
      if (lead == 0xF0) second_low = 0x90;
      if (lead == 0xF4) second_high = 0x8F;
    } else {
      throw_utf8(i, "byte cannot start a character");
    }
    for (std::size_t k = 1; k < length; ++k) {
      if (i + k >= text.size()) throw_utf8(i, "truncated sequence");
      const auto byte = static_cast<unsigned char>(text[i + k]);
      if (byte < 0x80 || byte > 0xBF) throw_utf8(i, "truncated sequence");
      if (k == 1 && byte < second_low) throw_utf8(i, "overlong form");
      if (k == 1 && byte > second_high) throw_utf8(i, lead == 0xED ? "surrogate" : "beyond U+10FFFF");
    }
    characters.push_back(text.substr(i, length));
    i += length;
  }
  return characters;
}

Vocabulary::Vocabulary() {
  for (const auto& special : special_tokens) add(special);
}

std::int64_t Vocabulary::add(const std::string& token) {
  const auto found = ids_.find(token);
  if (found != ids_.end()) return found->second;
  const auto new_id = static_cast<std::int64_t>(tokens_.size());
  tokens_.push_back(token);
  ids_.emplace(token, new_id);
  return new_id;
}

bool Vocabulary::contains(const std::string& token) const { return ids_.count(token) != 0; }

std::int64_t Vocabulary::id(const std::string& token) const {
  const auto found = ids_.find(token);
  return found == ids_.end() ? unk_id : found->second;
}

const std::string& Vocabulary::token(std::int64_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size()) {
    throw std::out_of_range("Vocabulary::token: id " + std::to_string(id) +
                            " is out of range for a vocabulary of size " + std::to_string(tokens_.size()));
  }
  return tokens_[static_cast<std::size_t>(id)];
}

std::size_t Vocabulary::size() const { return tokens_.size(); }

const std::vector<std::string>& Vocabulary::tokens() const { return tokens_; }

std::vector<std::int64_t> Vocabulary::encode(const std::vector<std::string>& tokens) const {
  std::vector<std::int64_t> ids;
  ids.reserve(tokens.size());
  for (const auto& token : tokens) ids.push_back(id(token));
  return ids;
}

std::vector<std::string> Vocabulary::decode(const std::vector<std::int64_t>& ids) const {
  std::vector<std::string> tokens;
  for (const std::int64_t id : ids) {
    if (id == eos_id) break;
    if (id == pad_id || id == sos_id) continue;
    tokens.push_back(token(id));
  }
  return tokens;
}

nlohmann::json Vocabulary::to_json() const { return nlohmann::json(tokens_); }

Vocabulary Vocabulary::from_json(const nlohmann::json& json) {
  const std::string where = "Vocabulary::from_json: ";
  if (!json.is_array()) {
    throw std::invalid_argument(where + "expected a JSON array of strings, got " + std::string(json.type_name()));
  }
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (!json[i].is_string()) {
      throw std::invalid_argument(where + "element " + std::to_string(i) + " is a " + json[i].type_name() +
                                  ", not a string");
    }
  }
  for (std::size_t i = 0; i < special_tokens.size(); ++i) {
    if (i >= json.size()) {
      throw std::invalid_argument(where + "special token \"" + special_tokens[i] + "\" missing (expected at index " +
                                  std::to_string(i) + ", the array has " + std::to_string(json.size()) + " elements)");
    }
    const auto& found = json[i].get_ref<const std::string&>();
    if (found != special_tokens[i]) {
      throw std::invalid_argument(where + "special token \"" + special_tokens[i] + "\" expected at index " +
                                  std::to_string(i) + ", found \"" + found + "\"");
    }
  }
  // The specials are in place; add the rest, refusing any token seen before (a special included).
  Vocabulary vocabulary;
  for (std::size_t i = special_tokens.size(); i < json.size(); ++i) {
    const auto& token = json[i].get_ref<const std::string&>();
    if (vocabulary.contains(token)) {
      throw std::invalid_argument(where + "duplicate token \"" + token + "\" at index " + std::to_string(i) +
                                  " (first at index " + std::to_string(vocabulary.id(token)) + ")");
    }
    vocabulary.add(token);
  }
  return vocabulary;
}

}  // namespace attend::models
