// The date-normalisation task of the attention chapters: a date written by a human in one of many formats and
// languages ("Saturday 09 May 2018", "le 1er août 1999", "9 de mayo de 2018", "05/09/18") goes in, its ISO form
// ("2018-05-09") comes out. This file holds the calendar, a generator of human-written dates, a parser that lists every
// reading a text can have (so that the generator only ever emits texts with exactly one reading: a learnable task),
// train/validation/test splits disjoint by date, the two alphabets, and the metrics. The attention chapters (from
// chapter 3 on) train on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"

namespace attend::data::dates {

struct Date {
  int year = 0, month = 0, day = 0;
};
bool operator==(const Date& a, const Date& b);
bool operator!=(const Date& a, const Date& b);

int days_in_month(int year, int month);  // Gregorian leap years; throws std::invalid_argument for a month outside 1..12
bool is_valid(const Date& date);         // 1900-01-01 .. 2099-12-31, calendar-correct
std::string to_iso(const Date& date);    // "2018-05-09"
std::optional<Date> from_iso(const std::string& text);  // exactly YYYY-MM-DD and valid, else nullopt

std::size_t format_count();                          // ≥ 25
const std::string& format_name(std::size_t format);  // a short description; throws std::out_of_range past the end

// The date written in one format, with the random choices of that format (language, casing, abbreviations, stray
// spaces, weekday — which need not match the real weekday) drawn from rng. Throws std::invalid_argument for an
// invalid date, or for a format with a two-digit year when the year is outside 1969..2068; std::out_of_range for a
// format past the end.
std::string render(const Date& date, std::size_t format, Rng& rng);

// Every date in 1900..2099 that `text` can mean (empty if none), sorted and without duplicates. Case-insensitive,
// tolerant of extra spaces, knows every month and weekday name the generator writes (full and abbreviated,
// en/fr/es/de), ordinals (9th, 1st, 1er, 9º/9., ...), numeric D/M/Y orders with / . - separators, 2-digit years with
// the pivot below, ISO-like Y-M-D. With a month name the two numbers are read as day-then-year or year-then-day;
// without one, the three numbers as D M Y, M D Y or Y M D. Weekday names, and the words the, of, le, de and am, are
// ignored; any other word means no reading.
std::vector<Date> parse_readings(const std::string& text);
std::optional<Date> parse(const std::string& text);  // the reading when there is exactly one, else nullopt

// Two-digit years: 00..68 → 2000..2068, 69..99 → 1969..1999 (POSIX strptime %y). The generator writes a 2-digit year
// only for years in 1969..2068. `two_digits` is in 0..99.
int expand_two_digit_year(int two_digits);

struct Example {
  std::string source;
  std::string target;  // to_iso(date)
};

// A human-written form of `date` in a random format whose text has exactly one reading (parse(source) == date) and at
// most 40 code points; it redraws the format (deterministically, from rng) when a draw would be ambiguous (e.g.
// 03/04/2018 in a D/M/Y vs M/D/Y world, or 09/05/18 which also reads as Y/M/D) or too long. Throws
// std::invalid_argument for an invalid date.
Example generate(const Date& date, Rng& rng);
// The same, also telling which format it settled on (for tests and statistics); the same draws as the overload above.
Example generate(const Date& date, Rng& rng, std::size_t& format);

struct Splits {
  std::vector<Example> train, validation, test;
};
// Deterministic by seed. Disjoint by date: the 73,049 dates 1900-01-01..2099-12-31 are shuffled with the seed; the
// first `test` dates go to test, the next `validation` to validation, and the training examples are drawn (with
// replacement when `train` exceeds what is left) from the remaining dates only, each with a random format.
// Throws std::invalid_argument when test + validation exceeds the number of dates, or leaves none for a nonzero train.
Splits make_splits(std::uint64_t seed, std::size_t train, std::size_t validation, std::size_t test);

// Every character (UTF-8 code point) any format can write, in any casing: the source alphabet of a model. Sorted.
std::vector<std::string> source_alphabet();
std::vector<std::string> target_alphabet();  // "0".."9" and "-"

// Exact match of whole strings, and per-field accuracy: a prediction's year/month/day field counts when the text
// before the first '-', between the first and second, after the second equals the target's (a malformed prediction
// simply scores 0 on the fields it lacks; never throws). All in [0, 1]; count = number of pairs (sizes must match,
// else std::invalid_argument). With no '-' the whole text is the year field; with one, the month runs to the end.
// No pairs give all zeros.
struct Scores {
  double exact_match = 0, year = 0, month = 0, day = 0;
  std::size_t count = 0;
};
Scores score(const std::vector<std::string>& predictions, const std::vector<std::string>& targets);

}  // namespace attend::data::dates
