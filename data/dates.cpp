// The dates task (data/dates.hpp): the calendar, the formats a human writes a date in, the parser that lists every
// reading of a text, the generator that keeps only texts with one reading, the splits, the alphabets and the metrics.
// Every random choice is `rng.next() % n`, one per statement (the order in which a C++ compiler evaluates the operands
// of `a + b` is unspecified, so two draws in one expression could differ between compilers).
#include "data/dates.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "data/vocabulary.hpp"

namespace attend::data::dates {

namespace {

constexpr int first_year = 1900, last_year = 2099;
constexpr int first_two_digit_year = 1969, last_two_digit_year = 2068;
constexpr std::size_t max_source_length = 40;  // code points
constexpr int max_generate_attempts = 1000;    // format redraws before falling back to plain ISO

// ---------------------------------------------------------------------------------------------------------------------
// Names

enum class Language { en, fr, es, de };

// Month and weekday names of one language as a date is written inside a sentence (French and Spanish in lower case,
// German and English capitalised), full and abbreviated (CLDR's abbreviations, with their dots). Weekdays from Monday.
struct LanguageNames {
  std::array<const char*, 12> months, months_abbreviated;
  std::array<const char*, 7> weekdays, weekdays_abbreviated;
};

const std::array<LanguageNames, 4> language_names = {{
    {{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
      "December"},
     {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"},
     {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"},
     {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}},
    {{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre",
      "décembre"},
     {"janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."},
     {"lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"},
     {"lun.", "mar.", "mer.", "jeu.", "ven.", "sam.", "dim."}},
    {{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre",
      "diciembre"},
     {"ene.", "feb.", "mar.", "abr.", "may.", "jun.", "jul.", "ago.", "sept.", "oct.", "nov.", "dic."},
     {"lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"},
     {"lun.", "mar.", "mié.", "jue.", "vie.", "sáb.", "dom."}},
    {{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November",
      "Dezember"},
     {"Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."},
     {"Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"},
     {"Mo.", "Di.", "Mi.", "Do.", "Fr.", "Sa.", "So."}},
}};

const LanguageNames& names_of(Language language) { return language_names[static_cast<std::size_t>(language)]; }

// The other words the formats write ("the 9th of May", "le 9 mai", "9 de mayo de", "am 9. Mai"): the parser skips them.
const std::array<const char*, 5> filler_words = {"the", "of", "le", "de", "am"};
// What may follow the digits of a day: English ordinals, French "1er", Spanish "1º".
const std::array<const char*, 6> ordinal_suffixes = {"st", "nd", "rd", "th", "er", "º"};

// ---------------------------------------------------------------------------------------------------------------------
// Casing, one code point at a time: ASCII by arithmetic, accented letters by this table. ß has no single-letter
// upper case in common use and is left as it is.

const std::array<std::pair<const char*, const char*>, 23> accented_letters = {{
    {"à", "À"}, {"á", "Á"}, {"â", "Â"}, {"ä", "Ä"}, {"æ", "Æ"}, {"ç", "Ç"}, {"è", "È"}, {"é", "É"},
    {"ê", "Ê"}, {"ë", "Ë"}, {"í", "Í"}, {"î", "Î"}, {"ï", "Ï"}, {"ñ", "Ñ"}, {"ó", "Ó"}, {"ô", "Ô"},
    {"ö", "Ö"}, {"ú", "Ú"}, {"ù", "Ù"}, {"û", "Û"}, {"ü", "Ü"}, {"ÿ", "Ÿ"}, {"œ", "Œ"},
}};

struct CaseMaps {
  std::unordered_map<std::string, std::string> to_lower, to_upper;
};

const CaseMaps& case_maps() {
  static const CaseMaps maps = [] {
    CaseMaps m;
    for (const auto& [lower, upper] : accented_letters) {
      m.to_upper.emplace(lower, upper);
      m.to_lower.emplace(upper, lower);
    }
    return m;
  }();
  return maps;
}

std::string lower_character(const std::string& c) {
  if (c.size() == 1) return (c[0] >= 'A' && c[0] <= 'Z') ? std::string(1, static_cast<char>(c[0] - 'A' + 'a')) : c;
  const auto found = case_maps().to_lower.find(c);
  return found == case_maps().to_lower.end() ? c : found->second;
}

std::string upper_character(const std::string& c) {
  if (c.size() == 1) return (c[0] >= 'a' && c[0] <= 'z') ? std::string(1, static_cast<char>(c[0] - 'a' + 'A')) : c;
  const auto found = case_maps().to_upper.find(c);
  return found == case_maps().to_upper.end() ? c : found->second;
}

bool is_digit(const std::string& c) { return c.size() == 1 && c[0] >= '0' && c[0] <= '9'; }

bool is_letter(const std::string& c) {
  if (c.size() == 1) return (c[0] >= 'a' && c[0] <= 'z') || (c[0] >= 'A' && c[0] <= 'Z');
  return c == "ß" || case_maps().to_lower.count(c) != 0 || case_maps().to_upper.count(c) != 0;
}

enum class Casing { as_written, lower, upper, title };

// `text` in one casing; title case capitalises a letter that follows neither a letter nor a digit ("9th", not "9Th").
std::string change_case(const std::string& text, Casing casing) {
  if (casing == Casing::as_written) return text;
  std::string result;
  bool after_letter_or_digit = false;
  for (const auto& c : utf8_characters(text)) {
    if (casing == Casing::lower) {
      result += lower_character(c);
    } else if (casing == Casing::upper) {
      result += upper_character(c);
    } else {
      result += after_letter_or_digit ? lower_character(c) : upper_character(c);
    }
    after_letter_or_digit = is_letter(c) || is_digit(c);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------------------
// Pieces of a rendered date

bool coin(Rng& rng) { return rng.next() % 2 == 0; }

std::string two_digits(int value) { return (value < 10 ? "0" : "") + std::to_string(value); }

std::string number(int value, bool leading_zero) { return leading_zero ? two_digits(value) : std::to_string(value); }

std::string year_text(int year, bool two_digit_year) {
  return two_digit_year ? two_digits(year % 100) : std::to_string(year);
}

// "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", ..., "21st", "22nd", "23rd", ..., "31st".
std::string english_ordinal(int day) {
  const int last = day % 10;
  const bool teen = day % 100 >= 11 && day % 100 <= 13;
  const char* suffix = teen ? "th" : last == 1 ? "st" : last == 2 ? "nd" : last == 3 ? "rd" : "th";
  return std::to_string(day) + suffix;
}

// A month name, full or abbreviated at random.
std::string month_name(Language language, int month, Rng& rng) {
  const auto& names = names_of(language);
  const auto index = static_cast<std::size_t>(month - 1);
  return coin(rng) ? names.months[index] : names.months_abbreviated[index];
}

// A random weekday (it need not be the date's), full or abbreviated at random.
std::string weekday_name(Language language, Rng& rng) {
  const auto& names = names_of(language);
  const auto index = static_cast<std::size_t>(rng.next() % 7);
  return coin(rng) ? names.weekdays[index] : names.weekdays_abbreviated[index];
}

// The day in the "D month" formats: with or without a leading zero at random.
std::string day_any_zero(int day, Rng& rng) { return number(day, coin(rng)); }

// All numbers: `order` is "DMY", "MDY" or "YMD"; day and month with or without leading zeros.
std::string numeric(const Date& date, const char* order, char separator, bool leading_zeros, bool two_digit_year) {
  std::string text;
  for (const char* field = order; *field != '\0'; ++field) {
    if (field != order) text += separator;
    if (*field == 'D') text += number(date.day, leading_zeros);
    if (*field == 'M') text += number(date.month, leading_zeros);
    if (*field == 'Y') text += year_text(date.year, two_digit_year);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------------------------
// The formats. In a name, D is a day without and DD with a leading zero; in the formats with a month name the English
// and German day takes a leading zero or not at random. Every format also draws a casing and stray spaces (render).

using Writer = std::string (*)(const Date&, Rng&);

struct Format {
  std::string name;
  bool two_digit_year;
  Writer write;
};

// Numeric dates: "2018-05-09", "9/5/2018", "05/09/2018", "09.05.18", …
std::vector<Format> numeric_formats() {
  return {
      {"YYYY-MM-DD (ISO 8601)", false, [](const Date& d, Rng&) { return numeric(d, "YMD", '-', true, false); }},
      {"YYYY/MM/DD", false, [](const Date& d, Rng&) { return numeric(d, "YMD", '/', true, false); }},
      {"YYYY/M/D", false, [](const Date& d, Rng&) { return numeric(d, "YMD", '/', false, false); }},
      {"DD/MM/YYYY", false, [](const Date& d, Rng&) { return numeric(d, "DMY", '/', true, false); }},
      {"D/M/YYYY", false, [](const Date& d, Rng&) { return numeric(d, "DMY", '/', false, false); }},
      {"MM/DD/YYYY", false, [](const Date& d, Rng&) { return numeric(d, "MDY", '/', true, false); }},
      {"M/D/YYYY", false, [](const Date& d, Rng&) { return numeric(d, "MDY", '/', false, false); }},
      {"DD.MM.YYYY", false, [](const Date& d, Rng&) { return numeric(d, "DMY", '.', true, false); }},
      {"D.M.YYYY", false, [](const Date& d, Rng&) { return numeric(d, "DMY", '.', false, false); }},
      {"DD-MM-YYYY", false, [](const Date& d, Rng&) { return numeric(d, "DMY", '-', true, false); }},
      {"DD/MM/YY", true, [](const Date& d, Rng&) { return numeric(d, "DMY", '/', true, true); }},
      {"M/D/YY", true, [](const Date& d, Rng&) { return numeric(d, "MDY", '/', false, true); }},
      {"DD.MM.YY", true, [](const Date& d, Rng&) { return numeric(d, "DMY", '.', true, true); }},
      {"YY-MM-DD", true, [](const Date& d, Rng&) { return numeric(d, "YMD", '-', true, true); }},
  };
}

// English: "9 May 2018", "Saturday 09 May 2018", "May 9, 2018", "the 9th of May, 2018", ...
std::vector<Format> english_formats() {
  return {
      {"D month YYYY (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string day = day_any_zero(d.day, rng);
         const std::string month = month_name(Language::en, d.month, rng);
         return day + " " + month + " " + std::to_string(d.year);
       }},
      {"weekday D month YYYY (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string weekday = weekday_name(Language::en, rng);
         const std::string day = day_any_zero(d.day, rng);
         const std::string month = month_name(Language::en, d.month, rng);
         return weekday + " " + day + " " + month + " " + std::to_string(d.year);
       }},
      {"weekday, D month YYYY (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string weekday = weekday_name(Language::en, rng);
         const std::string day = day_any_zero(d.day, rng);
         const std::string month = month_name(Language::en, d.month, rng);
         return weekday + ", " + day + " " + month + " " + std::to_string(d.year);
       }},
      {"month D, YYYY (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::en, d.month, rng);
         return month + " " + std::to_string(d.day) + ", " + std::to_string(d.year);
       }},
      {"weekday, month D, YYYY (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string weekday = weekday_name(Language::en, rng);
         const std::string month = month_name(Language::en, d.month, rng);
         return weekday + ", " + month + " " + std::to_string(d.day) + ", " + std::to_string(d.year);
       }},
      {"month Dth, YYYY (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::en, d.month, rng);
         return month + " " + english_ordinal(d.day) + ", " + std::to_string(d.year);
       }},
      {"the Dth of month, YYYY (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::en, d.month, rng);
         return "the " + english_ordinal(d.day) + " of " + month + ", " + std::to_string(d.year);
       }},
      {"Dth month YYYY (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::en, d.month, rng);
         return english_ordinal(d.day) + " " + month + " " + std::to_string(d.year);
       }},
      {"D month YY (en)", true,
       [](const Date& d, Rng& rng) {
         const std::string day = day_any_zero(d.day, rng);
         const std::string month = month_name(Language::en, d.month, rng);
         return day + " " + month + " " + year_text(d.year, true);
       }},
      {"YYYY month D (en)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::en, d.month, rng);
         const std::string day = day_any_zero(d.day, rng);
         return std::to_string(d.year) + " " + month + " " + day;
       }},
      {"DD-mon-YYYY (en)", false,
       [](const Date& d, Rng&) {
         const std::string month = names_of(Language::en).months_abbreviated[static_cast<std::size_t>(d.month - 1)];
         return two_digits(d.day) + "-" + month + "-" + std::to_string(d.year);
       }},
  };
}

// French: "le 9 mai 2018", "samedi 1er août 1999", "9 janv. 2018".
std::vector<Format> french_formats() {
  return {
      {"le D month YYYY (fr)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::fr, d.month, rng);
         const std::string day = d.day == 1 ? "1er" : std::to_string(d.day);
         return "le " + day + " " + month + " " + std::to_string(d.year);
       }},
      {"weekday D month YYYY (fr)", false,
       [](const Date& d, Rng& rng) {
         const std::string weekday = weekday_name(Language::fr, rng);
         const std::string month = month_name(Language::fr, d.month, rng);
         const std::string day = d.day == 1 ? "1er" : std::to_string(d.day);
         return weekday + " " + day + " " + month + " " + std::to_string(d.year);
       }},
      {"D month YYYY (fr)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::fr, d.month, rng);
         const std::string day = d.day == 1 ? "1er" : std::to_string(d.day);
         return day + " " + month + " " + std::to_string(d.year);
       }},
  };
}

// Spanish: "9 de mayo de 2018", "sábado, 1º de mayo de 2018", "9 sept. 2018".
std::vector<Format> spanish_formats() {
  return {
      {"D de month de YYYY (es)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::es, d.month, rng);
         const bool ordinal = d.day == 1 && coin(rng);
         return std::to_string(d.day) + (ordinal ? "º" : "") + " de " + month + " de " + std::to_string(d.year);
       }},
      {"weekday, D de month de YYYY (es)", false,
       [](const Date& d, Rng& rng) {
         const std::string weekday = weekday_name(Language::es, rng);
         const std::string month = month_name(Language::es, d.month, rng);
         const bool ordinal = d.day == 1 && coin(rng);
         return weekday + ", " + std::to_string(d.day) + (ordinal ? "º" : "") + " de " + month + " de " +
                std::to_string(d.year);
       }},
      {"D month YYYY (es)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::es, d.month, rng);
         return std::to_string(d.day) + " " + month + " " + std::to_string(d.year);
       }},
  };
}

// German: "9. Mai 2018", "Samstag, 09. Mai 2018", "am 9. Mai 2018".
std::vector<Format> german_formats() {
  return {
      {"D. month YYYY (de)", false,
       [](const Date& d, Rng& rng) {
         const std::string day = day_any_zero(d.day, rng);
         const std::string month = month_name(Language::de, d.month, rng);
         return day + ". " + month + " " + std::to_string(d.year);
       }},
      {"weekday, D. month YYYY (de)", false,
       [](const Date& d, Rng& rng) {
         const std::string weekday = weekday_name(Language::de, rng);
         const std::string day = day_any_zero(d.day, rng);
         const std::string month = month_name(Language::de, d.month, rng);
         return weekday + ", " + day + ". " + month + " " + std::to_string(d.year);
       }},
      {"am D. month YYYY (de)", false,
       [](const Date& d, Rng& rng) {
         const std::string month = month_name(Language::de, d.month, rng);
         return "am " + std::to_string(d.day) + ". " + month + " " + std::to_string(d.year);
       }},
  };
}

// Every format, in a fixed order (generated data depends on it): numeric, then English, French, Spanish, German.
const std::vector<Format>& formats() {
  static const std::vector<Format> table = [] {
    std::vector<Format> all;
    for (std::vector<Format> (*family)() :
         {numeric_formats, english_formats, french_formats, spanish_formats, german_formats}) {
      for (Format& format : family()) all.push_back(std::move(format));
    }
    return all;
  }();
  return table;
}

bool two_digit_year_fits(int year) { return year >= first_two_digit_year && year <= last_two_digit_year; }

// Occasional stray spaces: one space doubled, a leading space, a trailing space.
std::string add_stray_spaces(std::string text, Rng& rng) {
  if (rng.next() % 8 == 0) {
    std::vector<std::size_t> spaces;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == ' ') spaces.push_back(i);
    }
    if (!spaces.empty()) {
      const std::size_t at = spaces[rng.next() % spaces.size()];
      text.insert(at, " ");
    }
  }
  if (rng.next() % 10 == 0) text.insert(0, " ");
  if (rng.next() % 10 == 0) text += ' ';
  return text;
}

// ---------------------------------------------------------------------------------------------------------------------
// Parsing

// What a word can be: a month (1..12, or 0), and whether it may be skipped (a weekday or a filler). "mar" is both:
// March (en, es) and Tuesday (fr mardi, es martes).
struct WordMeaning {
  int month = 0;
  bool skippable = false;
};

// The dictionary key of a name: lower case, without the abbreviation's dot (the tokenizer splits at dots).
std::string word_key(const std::string& name) {
  std::string key = change_case(name, Casing::lower);
  while (!key.empty() && key.back() == '.') key.pop_back();
  return key;
}

const std::unordered_map<std::string, WordMeaning>& dictionary() {
  static const std::unordered_map<std::string, WordMeaning> words = [] {
    std::unordered_map<std::string, WordMeaning> map;
    for (const auto& names : language_names) {
      for (std::size_t m = 0; m < 12; ++m) {
        map[word_key(names.months[m])].month = static_cast<int>(m) + 1;
        map[word_key(names.months_abbreviated[m])].month = static_cast<int>(m) + 1;
      }
      for (std::size_t w = 0; w < 7; ++w) {
        map[word_key(names.weekdays[w])].skippable = true;
        map[word_key(names.weekdays_abbreviated[w])].skippable = true;
      }
    }
    for (const char* filler : filler_words) map[filler].skippable = true;
    return map;
  }();
  return words;
}

// One token of a text: a number (its digits), an ordinal day ("9th", "1er", "1º"), or a known word.
struct Token {
  enum class Kind { number, ordinal, word } kind = Kind::number;
  int value = 0;           // number, ordinal
  std::size_t digits = 0;  // number, ordinal
  WordMeaning meaning;     // word
};

bool is_separator(const std::string& c) {
  return c == " " || c == "\t" || c == "\n" || c == "\r" || c == "," || c == "." || c == "/" || c == "-";
}

// The tokens of `text`, or nullopt when it is not UTF-8 or holds anything but numbers, ordinals and known words.
std::optional<std::vector<Token>> tokenize(const std::string& text) {
  std::vector<std::string> characters;
  try {
    characters = utf8_characters(text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  // Lower-cased pieces between separators.
  std::vector<std::string> pieces(1);
  for (const auto& c : characters) {
    if (!is_separator(c)) {
      pieces.back() += lower_character(c);
    } else if (!pieces.back().empty()) {
      pieces.emplace_back();
    }
  }
  if (pieces.back().empty()) pieces.pop_back();

  std::vector<Token> tokens;
  for (const auto& piece : pieces) {
    Token token;
    const std::size_t digits = static_cast<std::size_t>(
        std::find_if(piece.begin(), piece.end(), [](char c) { return c < '0' || c > '9'; }) - piece.begin());
    if (digits > 0) {
      // A number of up to 4 digits, or a day of up to 2 digits with an ordinal suffix.
      const std::string suffix = piece.substr(digits);
      const bool ordinal =
          std::find(ordinal_suffixes.begin(), ordinal_suffixes.end(), suffix) != ordinal_suffixes.end();
      if (suffix.empty() ? digits > 4 : (!ordinal || digits > 2)) return std::nullopt;
      token.kind = suffix.empty() ? Token::Kind::number : Token::Kind::ordinal;
      token.value = std::stoi(piece.substr(0, digits));
      token.digits = digits;
    } else {
      const auto found = dictionary().find(piece);
      if (found == dictionary().end()) return std::nullopt;
      token.kind = Token::Kind::word;
      token.meaning = found->second;
    }
    tokens.push_back(token);
  }
  return tokens;
}

// A token read as a day, month or year; -1 when it cannot be one. Days and months have 1 or 2 digits (only a day may
// be an ordinal); years have 4 digits, or 2 with the pivot.
int as_day(const Token& t) { return t.kind != Token::Kind::word && t.digits <= 2 ? t.value : -1; }
int as_month(const Token& t) { return t.kind == Token::Kind::number && t.digits <= 2 ? t.value : -1; }
int as_year(const Token& t) {
  if (t.kind != Token::Kind::number) return -1;
  if (t.digits == 4) return t.value;
  if (t.digits == 2) return expand_two_digit_year(t.value);
  return -1;
}

bool date_less(const Date& a, const Date& b) {
  return std::tie(a.year, a.month, a.day) < std::tie(b.year, b.month, b.day);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------------
// Calendar

bool operator==(const Date& a, const Date& b) { return a.year == b.year && a.month == b.month && a.day == b.day; }
bool operator!=(const Date& a, const Date& b) { return !(a == b); }

int days_in_month(int year, int month) {
  static constexpr std::array<int, 12> days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) {
    throw std::invalid_argument("dates::days_in_month: month " + std::to_string(month) + " is outside 1..12");
  }
  // Gregorian: every 4th year is a leap year, except centuries not divisible by 400 (1900 is not, 2000 is).
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : days[static_cast<std::size_t>(month - 1)];
}

bool is_valid(const Date& date) {
  return date.year >= first_year && date.year <= last_year && date.month >= 1 && date.month <= 12 && date.day >= 1 &&
         date.day <= days_in_month(date.year, date.month);
}

std::string to_iso(const Date& date) {
  std::string year = std::to_string(date.year);
  if (year.size() < 4) year.insert(0, 4 - year.size(), '0');
  return year + "-" + two_digits(date.month) + "-" + two_digits(date.day);
}

std::optional<Date> from_iso(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  for (const std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  }
  const Date date{std::stoi(text.substr(0, 4)), std::stoi(text.substr(5, 2)), std::stoi(text.substr(8, 2))};
  if (!is_valid(date)) return std::nullopt;
  return date;
}

int expand_two_digit_year(int two_digits) { return two_digits <= 68 ? 2000 + two_digits : 1900 + two_digits; }

// ---------------------------------------------------------------------------------------------------------------------
// Formats

std::size_t format_count() { return formats().size(); }

const std::string& format_name(std::size_t format) {
  if (format >= formats().size()) {
    throw std::out_of_range("dates::format_name: format " + std::to_string(format) + " is out of range (there are " +
                            std::to_string(formats().size()) + ")");
  }
  return formats()[format].name;
}

std::string render(const Date& date, std::size_t format, Rng& rng) {
  if (format >= formats().size()) {
    throw std::out_of_range("dates::render: format " + std::to_string(format) + " is out of range (there are " +
                            std::to_string(formats().size()) + ")");
  }
  if (!is_valid(date)) throw std::invalid_argument("dates::render: invalid date " + to_iso(date));
  const Format& chosen = formats()[format];
  if (chosen.two_digit_year && !two_digit_year_fits(date.year)) {
    throw std::invalid_argument("dates::render: format \"" + chosen.name + "\" writes a 2-digit year; " +
                                std::to_string(date.year) + " is outside 1969..2068");
  }
  const std::string text = chosen.write(date, rng);
  // Casing: as written 2 times in 5, else lower, UPPER or Title.
  static constexpr std::array<Casing, 5> casings = {Casing::as_written, Casing::as_written, Casing::lower,
                                                    Casing::upper, Casing::title};
  const Casing casing = casings[rng.next() % casings.size()];
  return add_stray_spaces(change_case(text, casing), rng);
}

// ---------------------------------------------------------------------------------------------------------------------
// Parsing

std::vector<Date> parse_readings(const std::string& text) {
  const auto tokens = tokenize(text);
  if (!tokens) return {};
  std::vector<const Token*> numbers, words;
  for (const auto& token : *tokens) (token.kind == Token::Kind::word ? words : numbers).push_back(&token);

  std::vector<Date> readings;
  const auto add = [&readings](int year, int month, int day) {
    const Date date{year, month, day};
    if (is_valid(date)) readings.push_back(date);
  };
  const auto skippable_except = [&words](const Token* month_word) {
    return std::all_of(words.begin(), words.end(),
                       [&](const Token* w) { return w == month_word || w->meaning.skippable; });
  };
  // No month name: three numbers in D M Y, M D Y or Y M D order.
  if (numbers.size() == 3 && skippable_except(nullptr)) {
    const Token &a = *numbers[0], &b = *numbers[1], &c = *numbers[2];
    add(as_year(c), as_month(b), as_day(a));
    add(as_year(c), as_month(a), as_day(b));
    add(as_year(a), as_month(b), as_day(c));
  }
  // One word read as the month (every other word skipped): two numbers, day then year or year then day.
  if (numbers.size() == 2) {
    for (const Token* word : words) {
      if (word->meaning.month == 0 || !skippable_except(word)) continue;
      const Token &a = *numbers[0], &b = *numbers[1];
      add(as_year(b), word->meaning.month, as_day(a));
      add(as_year(a), word->meaning.month, as_day(b));
    }
  }
  std::sort(readings.begin(), readings.end(), date_less);
  readings.erase(std::unique(readings.begin(), readings.end()), readings.end());
  return readings;
}

std::optional<Date> parse(const std::string& text) {
  const auto readings = parse_readings(text);
  if (readings.size() != 1) return std::nullopt;
  return readings.front();
}

// ---------------------------------------------------------------------------------------------------------------------
// Generation

Example generate(const Date& date, Rng& rng, std::size_t& format) {
  if (!is_valid(date)) throw std::invalid_argument("dates::generate: invalid date " + to_iso(date));
  for (int attempt = 0; attempt < max_generate_attempts; ++attempt) {
    format = static_cast<std::size_t>(rng.next() % formats().size());
    if (formats()[format].two_digit_year && !two_digit_year_fits(date.year)) continue;
    const std::string source = render(date, format, rng);
    if (utf8_characters(source).size() > max_source_length) continue;
    const auto readings = parse_readings(source);
    // The parser must know every text the formats write; a miss is a bug in this file, not bad luck.
    if (std::find(readings.begin(), readings.end(), date) == readings.end()) {
      throw std::logic_error("dates::generate: format \"" + formats()[format].name + "\" wrote \"" + source +
                             "\", which the parser does not read as " + to_iso(date));
    }
    if (readings.size() == 1) return {source, to_iso(date)};
  }
  // Practically unreachable: most formats always have exactly one reading, whatever the date.
  format = 0;
  return {to_iso(date), to_iso(date)};
}

Example generate(const Date& date, Rng& rng) {
  std::size_t format = 0;
  return generate(date, rng, format);
}

Splits make_splits(std::uint64_t seed, std::size_t train, std::size_t validation, std::size_t test) {
  // All dates, in calendar order, then shuffled (Fisher–Yates).
  std::vector<Date> all;
  for (int year = first_year; year <= last_year; ++year) {
    for (int month = 1; month <= 12; ++month) {
      for (int day = 1; day <= days_in_month(year, month); ++day) all.push_back({year, month, day});
    }
  }
  if (test + validation > all.size()) {
    throw std::invalid_argument("dates::make_splits: test (" + std::to_string(test) + ") + validation (" +
                                std::to_string(validation) + ") exceeds the " + std::to_string(all.size()) + " dates");
  }
  const std::size_t remaining = all.size() - test - validation;
  if (train > 0 && remaining == 0) {
    throw std::invalid_argument("dates::make_splits: test and validation take all " + std::to_string(all.size()) +
                                " dates, none is left for " + std::to_string(train) + " training examples");
  }
  Rng rng(seed);
  for (std::size_t i = all.size() - 1; i > 0; --i) std::swap(all[i], all[rng.next() % (i + 1)]);

  Splits splits;
  splits.test.reserve(test);
  for (std::size_t i = 0; i < test; ++i) splits.test.push_back(generate(all[i], rng));
  splits.validation.reserve(validation);
  for (std::size_t i = test; i < test + validation; ++i) splits.validation.push_back(generate(all[i], rng));
  // Training dates: the rest of the shuffled list in order, or uniform draws from it when more are asked than it has.
  splits.train.reserve(train);
  const std::size_t train_begin = test + validation;
  for (std::size_t i = 0; i < train; ++i) {
    const std::size_t index = train <= remaining ? i : static_cast<std::size_t>(rng.next() % remaining);
    splits.train.push_back(generate(all[train_begin + index], rng));
  }
  return splits;
}

// ---------------------------------------------------------------------------------------------------------------------
// Alphabets and scores

std::vector<std::string> source_alphabet() {
  // Every string a format pieces together, as written and in both cases (title case only mixes the two).
  std::vector<std::string> pieces = {"0123456789", " ,./-"};
  for (const auto& names : language_names) {
    for (const char* name : names.months) pieces.emplace_back(name);
    for (const char* name : names.months_abbreviated) pieces.emplace_back(name);
    for (const char* name : names.weekdays) pieces.emplace_back(name);
    for (const char* name : names.weekdays_abbreviated) pieces.emplace_back(name);
  }
  for (const char* word : filler_words) pieces.emplace_back(word);
  for (const char* suffix : ordinal_suffixes) pieces.emplace_back(suffix);
  std::vector<std::string> alphabet;
  for (const auto& piece : pieces) {
    for (const Casing casing : {Casing::as_written, Casing::lower, Casing::upper}) {
      for (auto& c : utf8_characters(change_case(piece, casing))) alphabet.push_back(std::move(c));
    }
  }
  // Byte order of UTF-8 strings is code-point order.
  std::sort(alphabet.begin(), alphabet.end());
  alphabet.erase(std::unique(alphabet.begin(), alphabet.end()), alphabet.end());
  return alphabet;
}

std::vector<std::string> target_alphabet() { return {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "-"}; }

namespace {

// The year, month and day fields of a prediction or target, each absent when the text has too few '-'.
struct Fields {
  std::optional<std::string> year, month, day;
};

Fields split_fields(const std::string& text) {
  const std::size_t first = text.find('-');
  if (first == std::string::npos) return {text, std::nullopt, std::nullopt};
  const std::size_t second = text.find('-', first + 1);
  if (second == std::string::npos) return {text.substr(0, first), text.substr(first + 1), std::nullopt};
  return {text.substr(0, first), text.substr(first + 1, second - first - 1), text.substr(second + 1)};
}

bool same_field(const std::optional<std::string>& a, const std::optional<std::string>& b) { return a && b && *a == *b; }

}  // namespace

Scores score(const std::vector<std::string>& predictions, const std::vector<std::string>& targets) {
  if (predictions.size() != targets.size()) {
    throw std::invalid_argument("dates::score: " + std::to_string(predictions.size()) + " predictions for " +
                                std::to_string(targets.size()) + " targets");
  }
  Scores scores;
  scores.count = predictions.size();
  if (scores.count == 0) return scores;
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    const Fields predicted = split_fields(predictions[i]), expected = split_fields(targets[i]);
    scores.exact_match += predictions[i] == targets[i] ? 1 : 0;
    scores.year += same_field(predicted.year, expected.year) ? 1 : 0;
    scores.month += same_field(predicted.month, expected.month) ? 1 : 0;
    scores.day += same_field(predicted.day, expected.day) ? 1 : 0;
  }
  // Counts → fractions.
  const auto n = static_cast<double>(scores.count);
  scores.exact_match /= n;
  scores.year /= n;
  scores.month /= n;
  scores.day /= n;
  return scores;
}

}  // namespace attend::data::dates
