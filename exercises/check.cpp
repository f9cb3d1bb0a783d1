// The checks' printing and verdict (check.hpp).
#include "check.hpp"

#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>

namespace attend::exercise {

Check::Check(const std::string& exercise, const std::string& title) : exercise_(exercise) {
  std::printf("exercise %s: %s\n", exercise.c_str(), title.c_str());
}

bool Check::that(bool ok, const std::string& what, const std::string& detail) {
  (ok ? passed_ : failed_) += 1;
  std::printf("  %-4s  %s%s%s\n", ok ? "ok" : "FAIL", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stdout);
  return ok;
}

bool Check::near(const std::string& what, double yours, double expected, double tolerance) {
  const double difference = std::abs(yours - expected);
  return that(difference <= tolerance, what,
              "yours " + number(yours) + ", expected " + number(expected) + " (|difference| " + number(difference) +
                  (difference <= tolerance ? " ≤ " : " > ") + number(tolerance) + ")");
}

bool Check::near(const std::string& what, const std::vector<double>& yours, const std::vector<double>& expected,
                 double tolerance) {
  if (yours.size() != expected.size()) {
    return that(false, what,
                "yours has " + std::to_string(yours.size()) + " numbers, expected " + std::to_string(expected.size()));
  }
  double worst = 0;  // the largest |difference|, a NaN counting as infinite
  std::size_t at = 0;
  for (std::size_t k = 0; k < yours.size(); ++k) {
    double difference = std::abs(yours[k] - expected[k]);
    if (std::isnan(difference)) difference = INFINITY;
    if (difference > worst) {
      worst = difference;
      at = k;
    }
  }
  const bool ok = worst <= tolerance;
  std::string detail = "largest |difference| " + number(worst) + (ok ? " ≤ " : " > ") + number(tolerance) + " over " +
                       std::to_string(yours.size()) + " numbers";
  if (!ok) {
    detail += ", at [" + std::to_string(at) + "]: yours " + number(yours[at]) + ", expected " + number(expected[at]) +
              " (yours " + numbers(yours) + ", expected " + numbers(expected) + ")";
  }
  return that(ok, what, detail);
}

void Check::run(const std::string& what, const std::function<void()>& body) {
  try {
    body();
  } catch (const Todo& todo) {
    that(false, what, todo.what());
  } catch (const std::exception& e) {
    that(false, what, std::string("stopped by an exception: ") + e.what());
  }
}

int Check::verdict() const {
  const std::size_t total = passed_ + failed_;
  std::printf("exercise %s: %zu of %zu checks passed%s\n", exercise_.c_str(), passed_, total,
              failed_ == 0 && total > 0 ? " — done" : "");
  return failed_ == 0 && total > 0 ? 0 : 1;
}

std::string number(double x) {
  std::ostringstream out;
  out.precision(12);
  out << x;
  return out.str();
}

std::string numbers(const std::vector<double>& x) {
  std::string s = "[";
  for (std::size_t k = 0; k < x.size() && k < 8; ++k) s += (k ? ", " : "") + number(x[k]);
  return s + (x.size() > 8 ? ", …]" : "]");
}

}  // namespace attend::exercise
