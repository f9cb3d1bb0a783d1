// Vocabularies: the mapping between tokens (here mostly single characters) and the integer ids a model embeds and
// predicts, with the four special tokens every sequence-to-sequence model of the course uses (padding, start and end of
// sequence, unknown), a JSON form stored in checkpoints' metadata, and the UTF-8 splitting that turns a text into
// characters. Used by the dates task and the attention chapters (the encoder-decoder of docs/02-encoder.md onward).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace attend::data {

// The characters (Unicode code points, each as its UTF-8 bytes) of `text`, in order. Throws std::invalid_argument
// "not valid UTF-8 at byte N" for a malformed sequence (bad lead byte, truncated sequence, overlong form, surrogates).
// N is the 0-based offset of the first byte of the offending sequence; the message then says what is wrong with it.
std::vector<std::string> utf8_characters(const std::string& text);

// Tokens ↔ ids. Ids are dense, 0 .. size()-1, in the order tokens were added; the four specials come first.
class Vocabulary {
 public:
  static constexpr std::int64_t pad_id = 0, sos_id = 1, eos_id = 2, unk_id = 3;

  Vocabulary();  // the four specials only, in this order: "<pad>", "<sos>", "<eos>", "<unk>"

  std::int64_t add(const std::string& token);  // the token's id, adding it if new
  bool contains(const std::string& token) const;
  std::int64_t id(const std::string& token) const;  // unk_id when absent
  const std::string& token(std::int64_t id) const;  // throws std::out_of_range naming the id and the size
  std::size_t size() const;
  const std::vector<std::string>& tokens() const;  // index = id

  std::vector<std::int64_t> encode(const std::vector<std::string>& tokens) const;  // id() of each; no sos/eos added
  // The tokens of `ids` up to (not including) the first eos_id; pad and sos ids are skipped. Any other id outside
  // the vocabulary throws std::out_of_range (as token() does).
  std::vector<std::string> decode(const std::vector<std::int64_t>& ids) const;

  nlohmann::json to_json() const;  // a JSON array of the tokens, index = id
  // Throws std::invalid_argument naming the problem: not an array of strings, specials missing or out of place, a
  // duplicate.
  static Vocabulary from_json(const nlohmann::json& json);

 private:
  std::vector<std::string> tokens_;                    // id → token
  std::unordered_map<std::string, std::int64_t> ids_;  // token → id
};

}  // namespace attend::data
