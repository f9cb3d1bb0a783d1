// Dates-task tests (data/dates.hpp): the calendar, ISO text, the formats (every one renders, writes the examples of
// the issue, keeps accents right in every casing), the parser on hand-written texts, and the property the task rests
// on: every generated source has exactly one reading, the generated date, in at most 40 code points, over tens of
// thousands of examples that use every format. Then splits (deterministic, disjoint by date), alphabets and scores.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <map>
#include <set>

#include "data/dates.hpp"
#include "data/vocabulary.hpp"
#include "tests/autograd/helpers.hpp"

using attend::Rng;
using attend::data::utf8_characters;
using attend::testing::message_has;
using namespace attend::data::dates;

namespace attend::data::dates {
// Lets Boost.Test print a Date (and a vector of them) in a failure message.
std::ostream& operator<<(std::ostream& out, const Date& date) { return out << to_iso(date); }
}  // namespace attend::data::dates

namespace {

using Dates = std::vector<Date>;

// The number of a format from its name (fails the test when there is no such format).
std::size_t format_named(const std::string& name) {
  for (std::size_t f = 0; f < format_count(); ++f) {
    if (format_name(f) == name) return f;
  }
  BOOST_FAIL("no format named \"" << name << "\"");
  return 0;
}

// Every text `draws` renders of `date` in `format` produce (the random choices differ from draw to draw).
std::set<std::string> renders(const Date& date, std::size_t format, int draws, std::uint64_t seed = 1) {
  Rng rng(seed);
  std::set<std::string> texts;
  for (int i = 0; i < draws; ++i) texts.insert(render(date, format, rng));
  return texts;
}

// A uniformly random date of 1900..2099.
Date random_date(Rng& rng) {
  const int year = 1900 + static_cast<int>(rng.next() % 200);
  const int month = 1 + static_cast<int>(rng.next() % 12);
  const int day = 1 + static_cast<int>(rng.next() % static_cast<std::uint64_t>(days_in_month(year, month)));
  return {year, month, day};
}

bool uses_two_digit_year(std::size_t format) {
  const std::string& name = format_name(format);
  return name.find("YY") != std::string::npos && name.find("YYYY") == std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dates)

BOOST_AUTO_TEST_CASE(days_in_month_follows_gregorian_leap_years) {
  BOOST_TEST(days_in_month(1900, 2) == 28);  // divisible by 100, not by 400
  BOOST_TEST(days_in_month(2000, 2) == 29);  // divisible by 400
  BOOST_TEST(days_in_month(2096, 2) == 29);
  BOOST_TEST(days_in_month(2018, 2) == 28);
  BOOST_TEST(days_in_month(2018, 4) == 30);
  BOOST_TEST(days_in_month(2018, 12) == 31);
  BOOST_CHECK_EXCEPTION(days_in_month(2018, 13), std::invalid_argument, message_has({"month 13"}));
}

BOOST_AUTO_TEST_CASE(is_valid_checks_range_and_calendar) {
  BOOST_TEST(is_valid({1900, 1, 1}));
  BOOST_TEST(is_valid({2099, 12, 31}));
  BOOST_TEST(is_valid({2000, 2, 29}));
  BOOST_TEST(!is_valid({2018, 2, 30}));
  BOOST_TEST(!is_valid({1900, 2, 29}));
  BOOST_TEST(!is_valid({2100, 1, 1}));
  BOOST_TEST(!is_valid({1899, 12, 31}));
  BOOST_TEST(!is_valid({2018, 0, 9}));
  BOOST_TEST(!is_valid({2018, 13, 9}));
  BOOST_TEST(!is_valid({2018, 5, 0}));
  BOOST_TEST(!is_valid({2018, 4, 31}));
}

BOOST_AUTO_TEST_CASE(iso_round_trip_and_rejections) {
  BOOST_TEST(to_iso({2018, 5, 9}) == "2018-05-09");
  BOOST_TEST(to_iso({1900, 12, 31}) == "1900-12-31");
  // Every date of the range survives the round trip; there are 73,049 of them.
  std::size_t count = 0;
  for (int year = 1900; year <= 2099; ++year) {
    for (int month = 1; month <= 12; ++month) {
      for (int day = 1; day <= days_in_month(year, month); ++day, ++count) {
        const Date date{year, month, day};
        const auto back = from_iso(to_iso(date));
        if (!back || *back != date) BOOST_FAIL("round trip of " << to_iso(date));
      }
    }
  }
  BOOST_TEST(count == 73049u);
  for (const char* bad :
       {"", "2018-5-09", "2018-05-9", "2018/05/09", " 2018-05-09", "2018-05-09 ", "2018-02-30", "2100-01-01",
        "1899-12-31", "2018-13-01", "2018-00-10", "+018-05-09", "2018-05-0a", "20180509", "09-05-2018"}) {
    BOOST_TEST(!from_iso(bad).has_value(), "from_iso accepted \"" << bad << "\"");
  }
}

BOOST_AUTO_TEST_CASE(every_format_renders_and_reads_back) {
  BOOST_TEST(format_count() >= 25u);
  std::set<std::string> names;
  for (std::size_t f = 0; f < format_count(); ++f) names.insert(format_name(f));
  BOOST_TEST(names.size() == format_count());  // names are distinct
  BOOST_CHECK_THROW(format_name(format_count()), std::out_of_range);

  // Each format, over many random dates: the text is not empty and the parser reads the date among its readings
  // (the parser must know everything the formats write, or the generator's ambiguity check would be blind).
  Rng rng(11);
  for (std::size_t f = 0; f < format_count(); ++f) {
    for (int i = 0; i < 300; ++i) {
      Date date = random_date(rng);
      if (uses_two_digit_year(f)) date.year = 1969 + static_cast<int>(rng.next() % 100);
      date.day = std::min(date.day, days_in_month(date.year, date.month));
      const std::string text = render(date, f, rng);
      const Dates readings = parse_readings(text);
      const bool read_back = !text.empty() && std::find(readings.begin(), readings.end(), date) != readings.end();
      if (!read_back) BOOST_FAIL("format " << f << " wrote \"" << text << "\", not read as " << date);
    }
  }
}

BOOST_AUTO_TEST_CASE(render_refuses_what_it_cannot_write) {
  Rng rng(1);
  const std::size_t two_digit = format_named("DD/MM/YY");
  BOOST_CHECK_EXCEPTION(render({1950, 5, 9}, two_digit, rng), std::invalid_argument,
                        message_has({"DD/MM/YY", "1950", "1969..2068"}));
  BOOST_TEST(render({1969, 5, 19}, two_digit, rng).find("69") != std::string::npos);
  BOOST_CHECK_EXCEPTION(render({2018, 2, 30}, 0, rng), std::invalid_argument, message_has({"2018-02-30"}));
  BOOST_CHECK_THROW(render({2018, 5, 9}, format_count(), rng), std::out_of_range);
  BOOST_CHECK_EXCEPTION(generate({2100, 1, 1}, rng), std::invalid_argument, message_has({"2100-01-01"}));
}

BOOST_AUTO_TEST_CASE(formats_write_the_forms_of_the_issue) {
  const Date may_9{2018, 5, 9};
  const auto writes = [](const std::set<std::string>& texts, const std::string& expected) {
    BOOST_TEST(texts.count(expected) == 1u, "\"" << expected << "\" never written");
  };
  writes(renders(may_9, format_named("weekday D month YYYY (en)"), 3000), "Saturday 09 May 2018");
  writes(renders(may_9, format_named("weekday, D month YYYY (en)"), 3000), "Saturday, 9 May 2018");
  writes(renders(may_9, format_named("the Dth of month, YYYY (en)"), 300), "the 9th of May, 2018");
  writes(renders(may_9, format_named("month D, YYYY (en)"), 300), "May 9, 2018");
  writes(renders(may_9, format_named("D de month de YYYY (es)"), 300), "9 de mayo de 2018");
  writes(renders(may_9, format_named("weekday, D de month de YYYY (es)"), 3000), "sábado, 9 de mayo de 2018");
  writes(renders(may_9, format_named("le D month YYYY (fr)"), 300), "le 9 mai 2018");
  writes(renders(may_9, format_named("D. month YYYY (de)"), 300), "9. Mai 2018");
  writes(renders(may_9, format_named("weekday, D. month YYYY (de)"), 3000), "SAMSTAG, 9. MAI 2018");
  writes(renders(may_9, format_named("YYYY-MM-DD (ISO 8601)"), 100), "2018-05-09");
  writes(renders(may_9, format_named("DD/MM/YYYY"), 100), "09/05/2018");
  writes(renders(may_9, format_named("M/D/YYYY"), 100), "5/9/2018");
  writes(renders(may_9, format_named("DD.MM.YY"), 100), "09.05.18");
  writes(renders(may_9, format_named("D month YY (en)"), 300), "9 May 18");
  // Ordinals and abbreviations.
  writes(renders({1999, 8, 1}, format_named("le D month YYYY (fr)"), 300), "le 1er août 1999");
  writes(renders({1999, 8, 1}, format_named("D de month de YYYY (es)"), 300), "1º de agosto de 1999");
  writes(renders({2018, 9, 22}, format_named("Dth month YYYY (en)"), 300), "22nd September 2018");
  writes(renders({2018, 9, 3}, format_named("month Dth, YYYY (en)"), 300), "Sep 3rd, 2018");
  writes(renders({2018, 9, 11}, format_named("month Dth, YYYY (en)"), 300), "September 11th, 2018");
  writes(renders({2018, 9, 21}, format_named("the Dth of month, YYYY (en)"), 300), "the 21st of September, 2018");
  writes(renders({2018, 9, 9}, format_named("D month YYYY (fr)"), 300), "9 sept. 2018");
  writes(renders({2018, 2, 9}, format_named("D month YYYY (fr)"), 300), "9 févr. 2018");
  writes(renders({2018, 3, 9}, format_named("am D. month YYYY (de)"), 300), "am 9. März 2018");
  writes(renders({2018, 12, 9}, format_named("D month YYYY (fr)"), 300), "9 décembre 2018");
}

BOOST_AUTO_TEST_CASE(casing_is_consistent_and_keeps_accents) {
  const auto texts = renders({1999, 8, 1}, format_named("le D month YYYY (fr)"), 2000);
  for (const char* expected : {"le 1er août 1999", "LE 1ER AOÛT 1999", "Le 1er Août 1999"}) {
    BOOST_TEST(texts.count(expected) == 1u, "\"" << expected << "\" never written");
  }
  const auto german = renders({2018, 3, 9}, format_named("D. month YYYY (de)"), 2000);
  BOOST_TEST(german.count("9. MÄRZ 2018") == 1u);
  BOOST_TEST(german.count("09. märz 2018") == 1u);
  const auto spanish = renders({2018, 5, 9}, format_named("weekday, D de month de YYYY (es)"), 5000);
  BOOST_TEST(spanish.count("MIÉRCOLES, 9 DE MAYO DE 2018") == 1u);
  BOOST_TEST(spanish.count("Sáb., 9 De May. De 2018") == 1u);
  // Never a mixed word: an upper-case string has no lower-case accented letter and vice versa.
  for (const auto& text : texts) {
    const bool upper = text.find("LE") != std::string::npos;
    BOOST_TEST((upper ? text.find("û") : text.find("Û")) == std::string::npos, text);
  }
}

BOOST_AUTO_TEST_CASE(parse_readings_of_hand_written_texts) {
  const auto readings_are = [](const std::string& text, const Dates& expected) {
    BOOST_TEST_CONTEXT("text \"" << text << "\"") {
      BOOST_TEST(parse_readings(text) == expected, boost::test_tools::per_element());
    }
  };
  readings_are("Saturday 09 May 2018", {{2018, 5, 9}});
  readings_are("03/04/2018", {{2018, 3, 4}, {2018, 4, 3}});  // D/M/Y and M/D/Y
  readings_are("05/05/2018", {{2018, 5, 5}});                // the two orders agree
  readings_are("the 9th of May, 2018", {{2018, 5, 9}});
  readings_are("THE 9TH OF MAY, 2018", {{2018, 5, 9}});
  readings_are("May 9, 2018", {{2018, 5, 9}});
  readings_are("9 de mayo de 2018", {{2018, 5, 9}});
  readings_are("le 1er août 1999", {{1999, 8, 1}});
  readings_are("LE 1ER AOÛT 1999", {{1999, 8, 1}});
  readings_are("  sábado,  1º de MAYO de 2018 ", {{2018, 5, 1}});
  readings_are("9º de mayo de 2018", {{2018, 5, 9}});
  readings_are("22ND MAY 2018", {{2018, 5, 22}});
  readings_are("Samstag, 9. Mai 2018", {{2018, 5, 9}});
  readings_are("miércoles, 22 de sept. de 2018", {{2018, 9, 22}});
  readings_are("mar. 9 mars 2018", {{2018, 3, 9}});                       // "mar" is Tuesday here, not March
  readings_are("Mar 9, 2018", {{2018, 3, 9}});                            // and March here
  readings_are("09.05.18", {{2009, 5, 18}, {2018, 5, 9}, {2018, 9, 5}});  // Y.M.D, D.M.Y, M.D.Y
  readings_are("25/05/88", {{1988, 5, 25}});
  readings_are("1/2/69", {{1969, 1, 2}, {1969, 2, 1}});  // a 1-digit number is never a year
  readings_are("9 May 68", {{2068, 5, 9}});              // the pivot: 68 → 2068, 69 → 1969
  readings_are("9 May 69", {{1969, 5, 9}});
  readings_are("09 May 18", {{2009, 5, 18}, {2018, 5, 9}});
  readings_are("2018-05-09", {{2018, 5, 9}});
  readings_are("2018 May 9", {{2018, 5, 9}});
  readings_are("30/02/2018", {});
  readings_are("31 Feb 2018", {});
  readings_are("12/25/2100", {});
  readings_are("", {});
  readings_are("   ", {});
  readings_are("hello world", {});
  readings_are("9 May", {});
  readings_are("9 May 2018 2019", {});
  readings_are("9 May June 2018", {});
  readings_are("2018-05-09x", {});
  readings_are("20180509", {});
  readings_are("9 May 02018", {});
  readings_are("\xFF 9 May 2018", {});  // not UTF-8: no reading, no exception

  BOOST_TEST((parse("Saturday 09 May 2018") == std::optional<Date>(Date{2018, 5, 9})));
  BOOST_TEST(!parse("03/04/2018").has_value());
  BOOST_TEST(!parse("30/02/2018").has_value());
}

BOOST_AUTO_TEST_CASE(generated_sources_have_exactly_one_reading) {
  const std::vector<std::string> alphabet = source_alphabet();
  std::vector<std::size_t> uses(format_count(), 0);
  std::size_t examples = 0, leading_space = 0, trailing_space = 0, double_space = 0, non_ascii = 0;
  for (const std::uint64_t seed : {1u, 2u, 3u, 2024u}) {
    Rng rng(seed);
    for (int i = 0; i < 6000; ++i, ++examples) {
      const Date date = random_date(rng);
      std::size_t format = format_count();
      const Example example = generate(date, rng, format);
      BOOST_TEST_CONTEXT("seed " << seed << ", " << date << ", format " << format << ", source \"" << example.source
                                 << "\"") {
        BOOST_TEST_REQUIRE(format < format_count());
        ++uses[format];
        BOOST_TEST(example.target == to_iso(date));
        BOOST_TEST(parse_readings(example.source) == Dates{date}, boost::test_tools::per_element());
        const auto characters = utf8_characters(example.source);
        BOOST_TEST(characters.size() <= 40u);
        for (const auto& c : characters) {
          BOOST_TEST(std::binary_search(alphabet.begin(), alphabet.end(), c), "\"" << c << "\" not in the alphabet");
        }
      }
      leading_space += example.source.front() == ' ';
      trailing_space += example.source.back() == ' ';
      double_space += example.source.find("  ") != std::string::npos;
      non_ascii += std::any_of(example.source.begin(), example.source.end(), [](char c) { return c & 0x80; });
    }
  }
  BOOST_TEST(examples >= 20000u);
  for (std::size_t f = 0; f < uses.size(); ++f) {
    BOOST_TEST(uses[f] > 0u, "format " << f << " (" << format_name(f) << ") never used");
  }
  // The noise is there, and occasional.
  BOOST_TEST(leading_space > examples / 50);
  BOOST_TEST(leading_space < examples / 5);
  BOOST_TEST(trailing_space > examples / 50);
  BOOST_TEST(double_space > examples / 100);
  BOOST_TEST(non_ascii > examples / 50);
}

BOOST_AUTO_TEST_CASE(generate_is_deterministic) {
  Rng a(5), b(5);
  for (int i = 0; i < 200; ++i) {
    const Date date = random_date(a);
    BOOST_TEST(random_date(b) == date);
    BOOST_TEST(generate(date, a).source == generate(date, b).source);
  }
}

BOOST_AUTO_TEST_CASE(splits_are_deterministic_by_seed) {
  const auto sources = [](const std::vector<Example>& examples) {
    std::vector<std::string> texts;
    for (const auto& example : examples) texts.push_back(example.source + "|" + example.target);
    return texts;
  };
  const Splits first = make_splits(7, 2000, 300, 300);
  const Splits again = make_splits(7, 2000, 300, 300);
  const Splits other = make_splits(8, 2000, 300, 300);
  BOOST_TEST(first.train.size() == 2000u);
  BOOST_TEST(first.validation.size() == 300u);
  BOOST_TEST(first.test.size() == 300u);
  BOOST_TEST(sources(first.train) == sources(again.train), boost::test_tools::per_element());
  BOOST_TEST(sources(first.validation) == sources(again.validation), boost::test_tools::per_element());
  BOOST_TEST(sources(first.test) == sources(again.test), boost::test_tools::per_element());
  BOOST_TEST((sources(first.train) != sources(other.train)));
  BOOST_TEST((sources(first.test) != sources(other.test)));
}

BOOST_AUTO_TEST_CASE(splits_are_disjoint_by_date) {
  const auto targets = [](const std::vector<Example>& examples) {
    std::set<std::string> set;
    for (const auto& example : examples) set.insert(example.target);
    return set;
  };
  const auto disjoint = [](const std::set<std::string>& a, const std::set<std::string>& b) {
    return std::none_of(a.begin(), a.end(), [&b](const std::string& t) { return b.count(t) != 0; });
  };
  // Without replacement: train takes 5,000 distinct dates from the rest.
  const Splits splits = make_splits(3, 5000, 1000, 1000);
  const auto train = targets(splits.train), validation = targets(splits.validation), test = targets(splits.test);
  BOOST_TEST(test.size() == 1000u);
  BOOST_TEST(validation.size() == 1000u);
  BOOST_TEST(train.size() == 5000u);
  BOOST_TEST(disjoint(train, test));
  BOOST_TEST(disjoint(train, validation));
  BOOST_TEST(disjoint(validation, test));
  for (const auto& example : splits.train) BOOST_TEST((parse(example.source) == from_iso(example.target)));

  // With replacement: 72,000 + 1,000 dates held out leave 49, which the 500 training examples must reuse.
  const Splits crowded = make_splits(4, 500, 1000, 72000);
  const auto crowded_train = targets(crowded.train);
  BOOST_TEST(crowded.train.size() == 500u);
  BOOST_TEST(crowded_train.size() <= 49u);
  BOOST_TEST(crowded_train.size() > 40u);
  BOOST_TEST(disjoint(crowded_train, targets(crowded.test)));
  BOOST_TEST(disjoint(crowded_train, targets(crowded.validation)));

  BOOST_CHECK_EXCEPTION(make_splits(1, 10, 40000, 40000), std::invalid_argument, message_has({"73049"}));
  BOOST_CHECK_EXCEPTION(make_splits(1, 10, 49, 73000), std::invalid_argument, message_has({"none is left"}));
  BOOST_TEST(make_splits(1, 0, 49, 0).validation.size() == 49u);
}

BOOST_AUTO_TEST_CASE(alphabets) {
  const auto source = source_alphabet();
  BOOST_TEST(std::is_sorted(source.begin(), source.end()));
  BOOST_TEST((std::adjacent_find(source.begin(), source.end()) == source.end()));
  for (const char* c : {"0", "9", " ", ",", ".", "/", "-", "a", "Z", "é", "É", "û", "Û", "ä", "Ä", "á", "Á", "º"}) {
    BOOST_TEST(std::binary_search(source.begin(), source.end(), std::string(c)), "\"" << c << "\" missing");
  }
  for (const auto& c : source) BOOST_TEST(utf8_characters(c).size() == 1u);
  const std::vector<std::string> target = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "-"};
  BOOST_TEST(target_alphabet() == target, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(scores_exact_and_per_field) {
  const std::vector<std::string> targets = {"2018-05-09", "2018-05-09", "1999-12-31",
                                            "2000-01-01", "2018-05-09", "2018-05-09"};
  const std::vector<std::string> predictions = {"2018-05-09",   // all right
                                                "2018-5",       // year right, month wrong, no day
                                                "",             // nothing
                                                "xxxx",         // nothing
                                                "2018-06-09",   // year and day
                                                "2017-05-09"};  // month and day
  const Scores scores = score(predictions, targets);
  BOOST_TEST(scores.count == 6u);
  BOOST_TEST(scores.exact_match == 1.0 / 6, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(scores.year == 3.0 / 6, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(scores.month == 2.0 / 6, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(scores.day == 3.0 / 6, boost::test_tools::tolerance(1e-12));

  // The day is everything after the second '-'; a month needs its own digits.
  const Scores trailing = score({"2018-05-09-", "2018-05"}, {"2018-05-09", "2018-05-09"});
  BOOST_TEST(trailing.exact_match == 0.0);
  BOOST_TEST(trailing.year == 1.0);
  BOOST_TEST(trailing.month == 1.0);
  BOOST_TEST(trailing.day == 0.0);

  const Scores none = score({}, {});
  BOOST_TEST(none.count == 0u);
  BOOST_TEST(none.exact_match == 0.0);
  BOOST_CHECK_EXCEPTION(score({"2018-05-09"}, {"2018-05-09", "2018-05-10"}), std::invalid_argument,
                        message_has({"1 predictions", "2 targets"}));
}

BOOST_AUTO_TEST_SUITE_END()
