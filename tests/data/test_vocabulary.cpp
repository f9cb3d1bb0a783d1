// Vocabulary tests (data/vocabulary.hpp): the specials and their ids, adding and looking up tokens, encoding and
// decoding (stopping at <eos>, skipping <pad> and <sos>), the JSON round trip and every from_json error, and UTF-8
// splitting of accented and CJK text together with each kind of malformed sequence.
#include <boost/test/unit_test.hpp>

#include "data/vocabulary.hpp"
#include "tests/autograd/helpers.hpp"

using attend::data::utf8_characters;
using attend::data::Vocabulary;
using attend::testing::message_has;
using Strings = std::vector<std::string>;
using Ids = std::vector<std::int64_t>;

BOOST_AUTO_TEST_SUITE(vocabulary)

BOOST_AUTO_TEST_CASE(specials_come_first_with_fixed_ids) {
  const Vocabulary vocabulary;
  BOOST_TEST(vocabulary.size() == 4u);
  BOOST_TEST(vocabulary.tokens() == Strings({"<pad>", "<sos>", "<eos>", "<unk>"}), boost::test_tools::per_element());
  BOOST_TEST(vocabulary.id("<pad>") == Vocabulary::pad_id);
  BOOST_TEST(vocabulary.id("<sos>") == Vocabulary::sos_id);
  BOOST_TEST(vocabulary.id("<eos>") == Vocabulary::eos_id);
  BOOST_TEST(vocabulary.id("<unk>") == Vocabulary::unk_id);
  BOOST_TEST(vocabulary.token(Vocabulary::eos_id) == "<eos>");
}

BOOST_AUTO_TEST_CASE(add_contains_id_and_unknown) {
  Vocabulary vocabulary;
  BOOST_TEST(vocabulary.add("a") == 4);
  BOOST_TEST(vocabulary.add("é") == 5);
  BOOST_TEST(vocabulary.add("a") == 4);  // already there: same id, no growth
  BOOST_TEST(vocabulary.add("<eos>") == Vocabulary::eos_id);
  BOOST_TEST(vocabulary.size() == 6u);
  BOOST_TEST(vocabulary.contains("é"));
  BOOST_TEST(!vocabulary.contains("b"));
  BOOST_TEST(vocabulary.id("é") == 5);
  BOOST_TEST(vocabulary.id("b") == Vocabulary::unk_id);
  BOOST_TEST(vocabulary.token(5) == "é");
  BOOST_TEST(vocabulary.encode({"a", "b", "é"}) == Ids({4, Vocabulary::unk_id, 5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(token_out_of_range_names_id_and_size) {
  Vocabulary vocabulary;
  vocabulary.add("a");
  BOOST_CHECK_EXCEPTION(vocabulary.token(5), std::out_of_range, message_has({"id 5", "size 5"}));
  BOOST_CHECK_EXCEPTION(vocabulary.token(-1), std::out_of_range, message_has({"id -1", "size 5"}));
}

BOOST_AUTO_TEST_CASE(decode_stops_at_eos_and_skips_pad_and_sos) {
  Vocabulary vocabulary;
  const std::int64_t a = vocabulary.add("a"), b = vocabulary.add("b");
  const Ids ids = {Vocabulary::sos_id, a, Vocabulary::pad_id, b, Vocabulary::unk_id, Vocabulary::eos_id, a, b};
  BOOST_TEST(vocabulary.decode(ids) == Strings({"a", "b", "<unk>"}), boost::test_tools::per_element());
  BOOST_TEST(vocabulary.decode({Vocabulary::eos_id, a}).empty());
  BOOST_TEST(vocabulary.decode({a, b}) == Strings({"a", "b"}), boost::test_tools::per_element());
  BOOST_CHECK_THROW(vocabulary.decode({a, 9}), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(json_round_trip) {
  Vocabulary vocabulary;
  for (const char* token : {"2", "0", "-", "日", "ß"}) vocabulary.add(token);
  const nlohmann::json json = vocabulary.to_json();
  BOOST_TEST(json.is_array());
  BOOST_TEST(json.dump() == R"(["<pad>","<sos>","<eos>","<unk>","2","0","-","日","ß"])");
  const Vocabulary restored = Vocabulary::from_json(nlohmann::json::parse(json.dump()));
  BOOST_TEST(restored.tokens() == vocabulary.tokens(), boost::test_tools::per_element());
  BOOST_TEST(restored.id("日") == 7);
  BOOST_TEST(restored.id("x") == Vocabulary::unk_id);
}

BOOST_AUTO_TEST_CASE(from_json_errors) {
  using nlohmann::json;
  BOOST_CHECK_EXCEPTION(Vocabulary::from_json(json::object()), std::invalid_argument,
                        message_has({"array of strings", "object"}));
  BOOST_CHECK_EXCEPTION(Vocabulary::from_json(json::parse(R"(["<pad>","<sos>","<eos>","<unk>",3])")),
                        std::invalid_argument, message_has({"element 4", "not a string"}));
  BOOST_CHECK_EXCEPTION(Vocabulary::from_json(json::parse(R"(["<pad>","<sos>"])")), std::invalid_argument,
                        message_has({"\"<eos>\"", "missing", "index 2"}));
  BOOST_CHECK_EXCEPTION(Vocabulary::from_json(json::parse(R"(["<pad>","<eos>","<sos>","<unk>"])")),
                        std::invalid_argument, message_has({"\"<sos>\"", "index 1", "found \"<eos>\""}));
  BOOST_CHECK_EXCEPTION(Vocabulary::from_json(json::parse(R"(["<pad>","<sos>","<eos>","<unk>","a","b","a"])")),
                        std::invalid_argument, message_has({"duplicate", "\"a\"", "index 6", "index 4"}));
  BOOST_CHECK_EXCEPTION(Vocabulary::from_json(json::parse(R"(["<pad>","<sos>","<eos>","<unk>","<pad>"])")),
                        std::invalid_argument, message_has({"duplicate", "\"<pad>\"", "index 4"}));
}

BOOST_AUTO_TEST_CASE(utf8_characters_of_valid_text) {
  BOOST_TEST(utf8_characters("").empty());
  BOOST_TEST(utf8_characters("May 9") == Strings({"M", "a", "y", " ", "9"}), boost::test_tools::per_element());
  BOOST_TEST(utf8_characters("août") == Strings({"a", "o", "û", "t"}), boost::test_tools::per_element());
  BOOST_TEST(utf8_characters("März") == Strings({"M", "ä", "r", "z"}), boost::test_tools::per_element());
  BOOST_TEST(utf8_characters("日本") == Strings({"日", "本"}), boost::test_tools::per_element());
  BOOST_TEST(utf8_characters("\xF0\x9F\x98\x80!") == Strings({"\xF0\x9F\x98\x80", "!"}),  // U+1F600, 4 bytes
             boost::test_tools::per_element());
  BOOST_TEST(utf8_characters("\xF4\x8F\xBF\xBF").size() == 1u);  // U+10FFFF, the last code point
}

BOOST_AUTO_TEST_CASE(utf8_characters_rejects_malformed_sequences) {
  const auto fails_at = [](const std::string& text, std::size_t byte, const std::string& reason) {
    BOOST_TEST_CONTEXT("text of " << text.size() << " bytes, expecting byte " << byte) {
      BOOST_CHECK_EXCEPTION(utf8_characters(text), std::invalid_argument,
                            message_has({"not valid UTF-8 at byte " + std::to_string(byte), reason}));
    }
  };
  fails_at("ab\x80", 2, "continuation byte");          // continuation byte with no lead
  fails_at("a\xFF", 1, "cannot start");                // never valid
  fails_at("\xF5\x80\x80\x80", 0, "cannot start");     // would be above U+10FFFF
  fails_at("ao\xC3", 2, "truncated");                  // end of text inside a sequence
  fails_at("a\xE6\x97x", 1, "truncated");              // a 3-byte sequence cut by an ASCII byte
  fails_at("\xC0\xAF", 0, "overlong");                 // '/' in 2 bytes
  fails_at("x\xE0\x80\xAF", 1, "overlong");            // '/' in 3 bytes
  fails_at("\xF0\x80\x80\xAF", 0, "overlong");         // '/' in 4 bytes
  fails_at("ok\xED\xA0\x80", 2, "surrogate");          // U+D800
  fails_at("\xF4\x90\x80\x80", 0, "beyond U+10FFFF");  // U+110000
}

BOOST_AUTO_TEST_SUITE_END()
