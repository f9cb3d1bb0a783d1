// Internal (not installed): the clock the timings of a training step read (nn/parallel's shard waits, attend train's
// --timings and its progress, the ranks' combining): steady, in seconds.
#pragma once

#include <chrono>

namespace attend {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace attend
