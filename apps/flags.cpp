// The flags' validators (flags.hpp).
#include "apps/flags.hpp"

#include <cmath>
#include <sstream>

namespace attend::app {

CLI::Validator whole(std::size_t most) {
  return CLI::Validator(
      [most](std::string& text) -> std::string {
        const std::string expected = "must be a whole number from 1 to " + std::to_string(most);
        if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) {
          return expected + ", not \"" + text + "\"";
        }
        const std::size_t value = std::stoull(text);
        if (value < 1 || value > most) return expected + ", not " + text;
        return "";
      },
      "1.." + std::to_string(most));
}

CLI::Validator number_in(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        std::ostringstream expected;
        expected << "must be a number from " << low << " to " << high << ", not \"" << text << "\"";
        std::size_t used = 0;
        double value = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          return expected.str();
        }
        if (used != text.size() || !std::isfinite(value) || value < low || value > high) return expected.str();
        return "";
      },
      "NUMBER in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string expected = "must be a whole number from 0 to 18446744073709551615, not \"" + text + "\"";
        if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
          return expected;
        if (text.size() == 20 && text > "18446744073709551615") return expected;
        return "";
      },
      "0..2^64-1");
}

std::string tasks_reading(InputKind input) {
  std::vector<std::string> names;
  for (const std::string& name : task_names()) {
    if (make_task(name)->input() == input) names.push_back(name);
  }
  if (names.size() == 1) return "--task " + names.front();
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return std::string("the ") + (input == InputKind::text ? "text" : "image") + " tasks (" + list + ")";
}

}  // namespace attend::app
