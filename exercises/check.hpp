// What every exercise's check is made of (scripts/exercise builds a learner's file with one of them): a Check prints
// one line per thing it checks — "ok" or "FAIL", what was checked in the chapter's notation, and the numbers — and its
// verdict is the program's exit status. The learner's code runs inside Check::run, so that an exception it throws (a
// shape error, a starter's Todo) fails that check with its message instead of ending the program. Starters throw Todo
// where the learner has something to write.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attend::exercise {

// Thrown by a starter where the learner has something to write; the message says what.
struct Todo : std::logic_error {
  explicit Todo(const std::string& what) : std::logic_error("not written yet: " + what) {}
};

class Check {
 public:
  // Prints the exercise's heading: "exercise 1.4: <title>".
  Check(const std::string& exercise, const std::string& title);

  // One check: passes when `ok`. `what` says what is checked; `detail` the numbers behind the verdict (shown always).
  bool that(bool ok, const std::string& what, const std::string& detail = "");
  // |yours − expected| ≤ tolerance, both printed to 12 significant digits.
  bool near(const std::string& what, double yours, double expected, double tolerance);
  // The largest |yours_k − expected_k| ≤ tolerance, naming the first element that is not (sizes must agree).
  bool near(const std::string& what, const std::vector<double>& yours, const std::vector<double>& expected,
            double tolerance);
  // Runs `body`, which calls the learner's code and makes checks; an exception thrown in it (by the learner's code, or
  // by the check's own, e.g. data not found) fails the check `what` with its message.
  void run(const std::string& what, const std::function<void()>& body);

  std::size_t passed() const { return passed_; }
  std::size_t failed() const { return failed_; }
  // Prints "N of M checks passed" and returns the exit status: 0 when every check passed (and there was one), else 1.
  int verdict() const;

 private:
  std::string exercise_;
  std::size_t passed_ = 0, failed_ = 0;
};

// "1.00030003" : x to 12 significant digits (the notation every check prints numbers in).
std::string number(double x);
// "[0.1, -0.2, 0.3]" (at most 8 numbers, then "…").
std::string numbers(const std::vector<double>& x);

}  // namespace attend::exercise
