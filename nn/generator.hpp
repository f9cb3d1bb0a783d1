// Which generator a module's random op (dropout, the attention weights' dropout) draws from: normally the module's own,
// and, while a shard of nn::BatchParallel runs on a thread, the shard's. The shards of one batch run the same modules
// on their own tapes at once; drawing each from its own generator, in a fixed order, makes the numbers depend only on
// the step's seed and the shard, never on which thread runs first (nn/parallel.hpp). The autograd's ops take the
// generator they are given and know nothing of this.
#pragma once

#include "autograd/tape.hpp"

namespace attend::nn {

namespace detail {
Rng* shard_generator(const void* tape);  // the generator set for this tape on this thread, or nullptr
}  // namespace detail

// The generator a module's random op on `tape` draws from: the shard's, when a ShardGenerator for this tape is alive on
// this thread, else `own` (the module's).
template <class T>
Rng& generator_for(const Tape<T>& tape, Rng& own) {
  Rng* shard = detail::shard_generator(&tape);
  return shard != nullptr ? *shard : own;
}

// While alive, generator_for(tape, ·) on this thread returns `generator` (nullptr: the module's own, as without it).
// Scopes nest; the previous setting comes back when this one ends.
class ShardGenerator {
 public:
  ShardGenerator(const void* tape, Rng* generator);
  ~ShardGenerator();
  ShardGenerator(const ShardGenerator&) = delete;
  ShardGenerator& operator=(const ShardGenerator&) = delete;

 private:
  const void* previous_tape_;
  Rng* previous_generator_;
};

}  // namespace attend::nn
