// BLEU tests (data/bleu.hpp): hand-worked cases, each with its arithmetic in a comment (a perfect match, Papineni's
// clipping example, a brevity penalty, the closest reference length and its tie rule, a zero precision, empty and
// very short outputs), the errors, and three corpora checked against NLTK's corpus_bleu: the numbers come from
// tests/data/fixtures/bleu_nltk.py run with Debian's python3-nltk 3.8 (CI does not run it).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>

#include "data/bleu.hpp"
#include "tests/autograd/helpers.hpp"

using attend::data::BleuScore;
using attend::data::corpus_bleu;
using attend::testing::message_has;
namespace data = attend::data;
using Tokens = std::vector<std::string>;
using Counts = std::vector<std::size_t>;

namespace {

// "a b c" → {"a", "b", "c"}; "" → {} (tokens joined by single spaces, as in the fixture script).
Tokens tokens(const std::string& text) {
  Tokens result;
  std::istringstream in(text);
  for (std::string token; in >> token;) result.push_back(token);
  return result;
}

// One output and its references, written as text.
struct Pair {
  std::string hypothesis;
  std::vector<std::string> references;
};

BleuScore bleu_of(const std::vector<Pair>& pairs, std::size_t max_order = 4) {
  std::vector<Tokens> hypotheses;
  std::vector<std::vector<Tokens>> references;
  for (const Pair& pair : pairs) {
    hypotheses.push_back(tokens(pair.hypothesis));
    references.emplace_back();
    for (const std::string& reference : pair.references) references.back().push_back(tokens(reference));
  }
  return corpus_bleu(hypotheses, references, max_order);
}

// The corpora of bleu_nltk.py (keep the two in step).
const std::vector<Pair> translations = {
    {"i'm not hungry .", {"i'm not hungry .", "i am not hungry ."}},
    {"where is the station ?", {"where is the train station ?", "where's the station ?"}},
    {"he is reading in the garden .", {"he's reading a book in the garden .", "he is reading a book in his garden ."}},
    {"thank you .", {"thanks .", "thank you .", "thank you very much ."}},
    {"the the cat is on the the mat .", {"the cat is on the mat .", "there is a cat on the mat ."}},
    {"tom wants go home .", {"tom wants to go home .", "tom would like to go home ."}},
    {"it is raining .", {"it's raining .", "it is raining outside ."}},
    {"we must talk about it .",
     {"we need to talk about what happened yesterday .", "we have to talk about yesterday .",
      "we must talk about what happened yesterday ."}},
    {"go !", {"go .", "go away !"}},
    {"my sister likes music .", {"my sister likes listening to music .", "my sister really loves music ."}},
};
const std::vector<Pair> characters = {
    {"é l ▁ e s t á ▁ a q u í", {"é l ▁ e s t á ▁ a q u í ▁ .", "e s t á ▁ a q u í"}},
    {"h e ▁ i s ▁ h e r e", {"h e ' s ▁ h e r e", "h e ▁ i s ▁ h e r e ▁ n o w"}},
    {"c a f é ▁ c o n ▁ l a i t", {"c a f é ▁ c o n ▁ l e c h e", "c a f é ▁ a u ▁ l a i t"}},
};
const std::vector<Pair> nltk_docstring = {
    {"It is a guide to action which ensures that the military always obeys the commands of the party",
     {"It is a guide to action that ensures that the military will forever heed Party commands",
      "It is the guiding principle which guarantees the military forces always being under the command of the Party",
      "It is the practical guide for the army always to heed the directions of the party"}},
    {"he read the book because he was interested in world history",
     {"he was interested in world history because he read the book"}},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(bleu)

BOOST_AUTO_TEST_CASE(perfect_match_scores_one) {
  // 6 tokens: m = t = (6, 5, 4, 3), every p_n = 1; c = r = 6, BP = exp(1 − 6/6) = 1; BLEU = 1.
  const BleuScore score = bleu_of({{"the cat sat on the mat", {"the cat sat on the mat"}}});
  BOOST_TEST(score.bleu == 1.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(score.matches == Counts({6, 5, 4, 3}), boost::test_tools::per_element());
  BOOST_TEST(score.totals == Counts({6, 5, 4, 3}), boost::test_tools::per_element());
  BOOST_TEST(score.precisions == std::vector<double>({1, 1, 1, 1}), boost::test_tools::per_element());
  BOOST_TEST(score.brevity_penalty == 1.0);
  BOOST_TEST(score.hypothesis_length == 6u);
  BOOST_TEST(score.reference_length == 6u);
}

BOOST_AUTO_TEST_CASE(counts_are_clipped_by_the_most_any_one_reference_holds) {
  // Papineni et al.'s example: "the" ×7. Reference 1 holds "the" twice, reference 2 once, so the count is clipped to
  // max(2, 1) = 2 (not 7, unclipped; not 3, the sum over references): p_1 = 2/7. "the the" is in neither: p_2 = 0/6,
  // so BLEU-4 = 0. With N = 1: c = 7, r = 7 (reference 2), BP = 1, BLEU = p_1 = 2/7.
  const std::vector<Pair> pairs = {
      {"the the the the the the the", {"the cat is on the mat", "there is a cat on the mat"}}};
  const BleuScore score = bleu_of(pairs);
  BOOST_TEST(score.matches == Counts({2, 0, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(score.totals == Counts({7, 6, 5, 4}), boost::test_tools::per_element());
  BOOST_TEST(score.precisions[0] == 2.0 / 7, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(score.bleu == 0.0);
  const BleuScore unigram = bleu_of(pairs, 1);
  BOOST_TEST(unigram.reference_length == 7u);
  BOOST_TEST(unigram.bleu == 2.0 / 7, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(short_output_pays_the_brevity_penalty) {
  // "the cat sat on the" against "the cat sat on the mat": every n-gram of the output is in the reference ("the" twice
  // in both), so m = t = (5, 4, 3, 2) and every p_n = 1; c = 5 < r = 6, BP = exp(1 − 6/5) = exp(−0.2) = 0.81873...,
  // and BLEU = BP. (NLTK: 0.8187307530779819.)
  const BleuScore score = bleu_of({{"the cat sat on the", {"the cat sat on the mat"}}});
  BOOST_TEST(score.matches == Counts({5, 4, 3, 2}), boost::test_tools::per_element());
  BOOST_TEST(score.hypothesis_length == 5u);
  BOOST_TEST(score.reference_length == 6u);
  BOOST_TEST(score.brevity_penalty == std::exp(-0.2), boost::test_tools::tolerance(1e-14));
  BOOST_TEST(score.bleu == std::exp(-0.2), boost::test_tools::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(reference_length_is_the_closest_one) {
  // Output of 4 tokens; references of 9, 5 and 2: the closest is 5 (neither the first, nor the shortest, nor the
  // longest), so r = 5 and BP = exp(1 − 5/4) = exp(−0.25). Clipped matches, each n-gram against the reference that
  // holds it most: "the", "dog", "barks", "loudly" all occur: 4/4; "the dog", "dog barks" but not "barks loudly": 2/3;
  // "the dog barks" but not "dog barks loudly": 1/2. BLEU-3 = exp(−0.25) · (1 · 2/3 · 1/2)^(1/3)
  // = exp(−0.25) · (1/3)^(1/3) = 0.53999... (NLTK with weights (1/3, 1/3, 1/3): 0.5399903034156615.)
  const BleuScore score =
      bleu_of({{"the dog barks loudly",
                {"the dog is barking very loudly at the mailman", "the dog barks very loudly", "dogs bark"}}},
              3);
  BOOST_TEST(score.reference_length == 5u);
  BOOST_TEST(score.matches == Counts({4, 2, 1}), boost::test_tools::per_element());
  BOOST_TEST(score.totals == Counts({4, 3, 2}), boost::test_tools::per_element());
  BOOST_TEST(score.brevity_penalty == std::exp(-0.25), boost::test_tools::tolerance(1e-14));
  BOOST_TEST(score.bleu == std::exp(-0.25) * std::cbrt(1.0 / 3), boost::test_tools::tolerance(1e-14));
  BOOST_TEST(score.bleu == 0.5399903034156615, boost::test_tools::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(a_tie_in_reference_length_goes_to_the_shorter) {
  // Output of 5 tokens; references of 3 and 7 are both 2 away: r = 3 (the shorter), c = 5 > 3, BP = 1. All the
  // output's n-grams are in the second reference, so BLEU = 1. Had the tie gone to 7: BP = exp(1 − 7/5) = 0.67.
  // The order of the references does not matter.
  const BleuScore score = bleu_of({{"he is reading a book", {"he reads .", "he is reading a book right now"}}});
  BOOST_TEST(score.reference_length == 3u);
  BOOST_TEST(score.brevity_penalty == 1.0);
  BOOST_TEST(score.bleu == 1.0, boost::test_tools::tolerance(1e-15));
  const BleuScore swapped = bleu_of({{"he is reading a book", {"he is reading a book right now", "he reads ."}}});
  BOOST_TEST(swapped.reference_length == 3u);
  BOOST_TEST(swapped.bleu == 1.0, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(no_match_of_one_order_gives_zero) {
  // The case above with N = 4: the one 4-gram, "the dog barks loudly", is in no reference, m_4 = 0, log p_4 = −∞, and
  // BLEU = 0 although p_1..p_3 are not (NLTK without smoothing: 7.2e-78, from its float_info.min stand-in for 0).
  const BleuScore score =
      bleu_of({{"the dog barks loudly",
                {"the dog is barking very loudly at the mailman", "the dog barks very loudly", "dogs bark"}}});
  BOOST_TEST(score.matches == Counts({4, 2, 1, 0}), boost::test_tools::per_element());
  BOOST_TEST(score.precisions == std::vector<double>({1.0, 2.0 / 3, 0.5, 0.0}), boost::test_tools::per_element());
  BOOST_TEST(score.brevity_penalty == std::exp(-0.25), boost::test_tools::tolerance(1e-14));
  BOOST_TEST(score.bleu == 0.0);
}

BOOST_AUTO_TEST_CASE(outputs_shorter_than_n_count_one_n_gram_as_in_nltk) {
  // "thank you ." has 3, 2, 1 and 0 n-grams of orders 1..4; like NLTK (max(1, ·) in modified_precision) it counts one
  // unmatched 4-gram: t = (3, 2, 1, 1), m = (3, 2, 1, 0), so even this perfect output scores 0 at N = 4, and 1 at
  // N = 3.
  const std::vector<Pair> pairs = {{"thank you .", {"thank you ."}}};
  const BleuScore score = bleu_of(pairs);
  BOOST_TEST(score.totals == Counts({3, 2, 1, 1}), boost::test_tools::per_element());
  BOOST_TEST(score.matches == Counts({3, 2, 1, 0}), boost::test_tools::per_element());
  BOOST_TEST(score.bleu == 0.0);
  BOOST_TEST(bleu_of(pairs, 3).bleu == 1.0, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(empty_output) {
  // Alone: c = 0, so BP = 0 and BLEU = 0 (no division by c); t = (1, 1, 1, 1) by the rule above, r = 2.
  const BleuScore alone = bleu_of({{"", {"hello ."}}});
  BOOST_TEST(alone.bleu == 0.0);
  BOOST_TEST(alone.brevity_penalty == 0.0);
  BOOST_TEST(alone.hypothesis_length == 0u);
  BOOST_TEST(alone.reference_length == 2u);
  BOOST_TEST(alone.totals == Counts({1, 1, 1, 1}), boost::test_tools::per_element());
  // Next to a perfect 6-token output: m = (6, 5, 4, 3), t = (6+1, 5+1, 4+1, 3+1); c = 6, r = 6 + 2 = 8,
  // BP = exp(1 − 8/6) = exp(−1/3); BLEU = exp(−1/3) · (6/7 · 5/6 · 4/5 · 3/4)^(1/4) = exp(−1/3) · (3/7)^(1/4)
  // = 0.57975... (NLTK: 0.5797502924354595).
  const BleuScore score = bleu_of({{"the cat sat on the mat", {"the cat sat on the mat"}}, {"", {"hello ."}}});
  BOOST_TEST(score.matches == Counts({6, 5, 4, 3}), boost::test_tools::per_element());
  BOOST_TEST(score.totals == Counts({7, 6, 5, 4}), boost::test_tools::per_element());
  BOOST_TEST(score.reference_length == 8u);
  BOOST_TEST(score.bleu == std::exp(-1.0 / 3) * std::pow(3.0 / 7, 0.25), boost::test_tools::tolerance(1e-14));
  BOOST_TEST(score.bleu == 0.5797502924354595, boost::test_tools::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(bad_arguments_throw_and_no_outputs_score_zero) {
  const std::vector<Tokens> two_outputs = {tokens("a b"), tokens("c")};
  BOOST_CHECK_EXCEPTION(corpus_bleu(two_outputs, {{tokens("a b")}}), std::invalid_argument,
                        message_has({"corpus_bleu", "2 hypotheses", "1 lists of references"}));
  BOOST_CHECK_EXCEPTION(corpus_bleu(two_outputs, {{tokens("a b")}, {}}), std::invalid_argument,
                        message_has({"corpus_bleu", "hypothesis 1 has no reference"}));
  BOOST_CHECK_EXCEPTION(corpus_bleu(two_outputs, {{tokens("a b")}, {tokens("c")}}, 0), std::invalid_argument,
                        message_has({"corpus_bleu", "max_order"}));
  const BleuScore none = corpus_bleu({}, {});
  BOOST_TEST(none.bleu == 0.0);
  BOOST_TEST(none.precisions == std::vector<double>({0, 0, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(none.totals == Counts({0, 0, 0, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(matches_nltk_on_translations_with_several_references) {
  // bleu_nltk.py, case "translations" (NLTK 3.8): clipping ("the the cat ... the the mat ."), closest-length ties
  // ("where is the station ?": 6 or 4 → 4), outputs shorter than 4 tokens, c = 50 < r = 51.
  const BleuScore score = bleu_of(translations);
  BOOST_TEST(score.matches == Counts({47, 32, 17, 5}), boost::test_tools::per_element());
  BOOST_TEST(score.totals == Counts({50, 40, 31, 23}), boost::test_tools::per_element());
  BOOST_TEST(score.hypothesis_length == 50u);
  BOOST_TEST(score.reference_length == 51u);
  BOOST_TEST(score.brevity_penalty == 0.9801986733067553, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(score.bleu == 0.5363532536160399, boost::test_tools::tolerance(1e-13));
  BOOST_TEST(bleu_of(translations, 1).bleu == 0.9213867529083499, boost::test_tools::tolerance(1e-13));
  BOOST_TEST(bleu_of(translations, 2).bleu == 0.8500080342223519, boost::test_tools::tolerance(1e-13));
  BOOST_TEST(bleu_of(translations, 3).bleu == 0.7295960371165743, boost::test_tools::tolerance(1e-13));
}

BOOST_AUTO_TEST_CASE(matches_nltk_on_character_tokens) {
  // bleu_nltk.py, case "characters" (NLTK 3.8): multi-byte UTF-8 tokens ("é", "▁"); c = r = 35, BP = 1.
  const BleuScore score = bleu_of(characters);
  BOOST_TEST(score.matches == Counts({35, 32, 29, 25}), boost::test_tools::per_element());
  BOOST_TEST(score.totals == Counts({35, 32, 29, 26}), boost::test_tools::per_element());
  BOOST_TEST(score.reference_length == 35u);
  BOOST_TEST(score.bleu == 0.9902427357425654, boost::test_tools::tolerance(1e-13));
}

BOOST_AUTO_TEST_CASE(matches_nltk_docstring_example) {
  // bleu_nltk.py, case "nltk_doc": the example of corpus_bleu's docstring, 0.5920... (the mean of the two sentence
  // scores would be 0.6223...: the counts are summed over the corpus before dividing).
  const BleuScore score = bleu_of(nltk_docstring);
  BOOST_TEST(score.matches == Counts({28, 19, 13, 8}), boost::test_tools::per_element());
  BOOST_TEST(score.totals == Counts({29, 27, 25, 23}), boost::test_tools::per_element());
  BOOST_TEST(score.bleu == 0.5920778868801042, boost::test_tools::tolerance(1e-13));
}

// The example of docs/reference/models.md, quoted from here so that it always compiles and works.
BOOST_AUTO_TEST_CASE(reference_example) {
  const std::vector<Tokens> outputs = {tokens("the cat sat on the mat .")};
  const std::vector<std::vector<Tokens>> references = {
      {tokens("the cat sat on the mat ."), tokens("a cat was sitting on the mat .")}};
  std::ostringstream out;
  // [docs:bleu-usage]
  // outputs[k]: the tokens of output k; references[k]: its reference translations, each a list of tokens
  const data::BleuScore score = data::corpus_bleu(outputs, references);
  out << "BLEU " << 100 * score.bleu << " (BP " << score.brevity_penalty << ")\n";
  // [docs:end]
  BOOST_TEST(out.str() == "BLEU 100 (BP 1)\n");
}

BOOST_AUTO_TEST_SUITE_END()
