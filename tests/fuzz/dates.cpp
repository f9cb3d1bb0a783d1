// Fuzz target `dates`: the date parser of the dates task (data/dates.hpp: parse_readings, parse, from_iso) on
// arbitrary text, checked against the promises the header makes, so that the fuzzer finds logic errors and not only
// crashes. A finding is a crash, hang, leak, sanitizer report or exception, and any of these broken promises:
//   - parse_readings lists valid dates (1900..2099, calendar-correct), sorted, without duplicates, and parse returns a
//     date exactly when there is one reading;
//   - reading is case-insensitive and tolerant of spaces: the text with its ASCII letters in upper or lower case, or
//     with spaces around it, has the same readings;
//   - every reading d round-trips through ISO: from_iso(to_iso(d)) is d, and to_iso(d) has the one reading d;
//   - from_iso accepts only texts that are their date's to_iso, and parse reads them as that date;
//   - the generator and the parser agree on the dates the fuzzer reaches: for a parsed date, every format renders a
//     text whose readings include the date (with random choices seeded from the input), and generate() settles on a
//     text whose one reading is the date (it throws std::logic_error when a format writes what the parser misreads).
#include "data/dates.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "tests/fuzz/fuzz.hpp"

using namespace attend::data::dates;
using attend::fuzz::check;
using attend::fuzz::printable;

namespace {

bool date_less(const Date& a, const Date& b) {
  return std::tie(a.year, a.month, a.day) < std::tie(b.year, b.month, b.day);
}

std::string with_ascii_case(std::string text, int (*change)(int)) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x80) c = static_cast<char>(change(static_cast<unsigned char>(c)));
  }
  return text;
}

void check_readings(const std::string& text, const std::vector<Date>& readings) {
  for (const Date& d : readings) {
    check(is_valid(d), "parse_readings returned an invalid date " + to_iso(d) + " for " + printable(text));
  }
  check(std::is_sorted(readings.begin(), readings.end(), date_less) &&
            std::adjacent_find(readings.begin(), readings.end()) == readings.end(),
        "parse_readings is not sorted or has duplicates for " + printable(text));
  const std::optional<Date> parsed = parse(text);
  check(parsed.has_value() == (readings.size() == 1) && (!parsed || *parsed == readings.front()),
        "parse disagrees with parse_readings for " + printable(text));

  check(parse_readings(with_ascii_case(text, std::toupper)) == readings,
        "upper case changes the readings of " + printable(text));
  check(parse_readings(with_ascii_case(text, std::tolower)) == readings,
        "lower case changes the readings of " + printable(text));
  check(parse_readings(" " + text + "  ") == readings, "spaces around change the readings of " + printable(text));

  for (const Date& d : readings) {
    const std::string iso = to_iso(d);
    check(from_iso(iso) == d, "from_iso does not read back " + iso);
    check(parse_readings(iso) == std::vector<Date>{d}, "the ISO form " + iso + " has other readings");
  }
}

void check_from_iso(const std::string& text) {
  const std::optional<Date> date = from_iso(text);
  if (!date) return;
  check(is_valid(*date) && to_iso(*date) == text,
        "from_iso accepted " + printable(text) + ", which is not a date's ISO form");
  check(parse(text) == date, "parse does not read the ISO date " + text + " as from_iso does");
}

// Every format writes the date so that the parser reads it back (among other readings, perhaps).
void check_generator(const Date& date, std::uint64_t seed) {
  attend::Rng rng(seed);
  for (std::size_t format = 0; format < format_count(); ++format) {
    std::string text;
    try {
      text = render(date, format, rng);
    } catch (const std::invalid_argument&) {
      continue;  // a two-digit-year format and a year outside 1969..2068
    }
    const std::vector<Date> readings = parse_readings(text);
    check(std::find(readings.begin(), readings.end(), date) != readings.end(),
          "format \"" + format_name(format) + "\" wrote " + printable(text) + " for " + to_iso(date) +
              ", which the parser does not read as that date");
  }
  const Example example = generate(date, rng);
  check(example.target == to_iso(date) && parse(example.source) == date,
        "generate wrote " + printable(example.source) + " for " + to_iso(date) +
            ", which does not read as that date alone");
}

// A seed for the generator's choices from the input's bytes (FNV-1a), so that each input replays the same way.
std::uint64_t seed_of(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const unsigned char byte : text) hash = (hash ^ byte) * 1099511628211ull;
  return hash;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<Date> readings = parse_readings(text);
  check_readings(text, readings);
  check_from_iso(text);
  if (readings.size() == 1) check_generator(readings.front(), seed_of(text));
  return 0;
}
