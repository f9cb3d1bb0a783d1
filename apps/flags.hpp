// The validators of the `attend` program's flags (CLI11), shared by the command line (cli.cpp), the tasks
// (apps/tasks/) and the model kinds (apps/model_kinds/): each refuses a bad value with a message that says what is
// expected.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "apps/task.hpp"

namespace attend::app {

// A bound for counts (examples, steps, epochs).
inline constexpr std::size_t many = 100000000;

// Whole numbers from 1 to `most`.
CLI::Validator whole(std::size_t most);
// Decimal numbers from `low` to `high`, finite (CLI11's Range lets NaN through: every comparison with it is false).
CLI::Validator number_in(double low, double high);
// A seed: any whole number that fits in 64 bits (CLI11 would read "-1" as 2^64 - 1).
CLI::Validator seed_number();

// "--task T" or "the text tasks (T, U)": the registered tasks whose input is `input`, for a message that
// says whom a flag is for.
std::string tasks_reading(InputKind input);

}  // namespace attend::app
