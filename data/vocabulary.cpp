// Vocabularies and UTF-8 splitting (data/vocabulary.hpp). UTF-8 is read by utf8proc, the library's one decoder
// (text.cpp and plot/svg.cpp use it too), which accepts only the well-formed byte sequences of the Unicode standard
// (table 3-7): overlong forms, surrogates and code points above U+10FFFF are refused, and the error says which.
#include "data/vocabulary.hpp"

#include <utf8proc.h>

#include <array>
#include <stdexcept>

namespace attend::data {

namespace {

const std::array<std::string, 4> special_tokens = {"<pad>", "<sos>", "<eos>", "<unk>"};

// Why the bytes at text[i] are not a UTF-8 character, once utf8proc has refused them: for the error message only.
const char* utf8_problem(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  if (lead >= 0x80 && lead < 0xC0) return "continuation byte without a lead byte";
  if (lead == 0xC0 || lead == 0xC1) return "overlong form";
  if (lead >= 0xF5) return "byte cannot start a character";
  const std::size_t length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  for (std::size_t k = 1; k < length; ++k) {
    if (i + k >= text.size() || (byte(k) & 0xC0) != 0x80) return "truncated sequence";
  }
  if ((lead == 0xE0 && byte(1) < 0xA0) || (lead == 0xF0 && byte(1) < 0x90)) return "overlong form";
  return lead == 0xED ? "surrogate" : "beyond U+10FFFF";
}

}  // namespace

std::vector<std::string> utf8_characters(const std::string& text) {
  std::vector<std::string> characters;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  std::size_t i = 0;
  while (i < text.size()) {
    utf8proc_int32_t code = -1;
    const utf8proc_ssize_t length = utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(text.size() - i), &code);
    if (length <= 0 || code < 0) {
      throw std::invalid_argument("not valid UTF-8 at byte " + std::to_string(i) + " (" + utf8_problem(text, i) + ")");
    }
    characters.push_back(text.substr(i, static_cast<std::size_t>(length)));
    i += static_cast<std::size_t>(length);
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

}  // namespace attend::data
