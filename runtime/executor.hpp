// attend::Executor — how a caller lends its threads to work it hands over (an optimizer's update, the refresh of the
// bfloat16 copies): f is run over ranges that together cover [0, count) exactly once, maybe on several threads at
// once, and the executor returns when all are done. nn::BatchParallel::executor() makes one; empty: run in the caller.
#pragma once

#include <cstddef>
#include <functional>

namespace attend {

using Executor = std::function<void(std::size_t count, const std::function<void(std::size_t, std::size_t)>& f)>;

}  // namespace attend
