// The per-thread choice of generator declared in generator.hpp.
#include "nn/generator.hpp"

namespace attend::nn {

namespace {
// The tape whose modules draw from `generator` on this thread (nullptr: none).
thread_local const void* shard_tape = nullptr;
thread_local Rng* shard_rng = nullptr;
}  // namespace

namespace detail {
Rng* shard_generator(const void* tape) { return tape == shard_tape ? shard_rng : nullptr; }
}  // namespace detail

ShardGenerator::ShardGenerator(const void* tape, Rng* generator)
    : previous_tape_(shard_tape), previous_generator_(shard_rng) {
  shard_tape = generator != nullptr ? tape : nullptr;
  shard_rng = generator;
}

ShardGenerator::~ShardGenerator() {
  shard_tape = previous_tape_;
  shard_rng = previous_generator_;
}

}  // namespace attend::nn
