// Where a module's random op (dropout, the attention weights' dropout) gets its numbers: from what it is passed. A
// module holds a RandomStream — its seed and its state, which a training checkpoint saves — and draws only through
// on(tape): the generator the tape's context carries when there is one (a shard of nn::BatchParallel: made from the
// step's seed and the shard's index), else the stream's own. The shards of one batch run the same modules on their own
// tapes at once; each drawing from its shard's generator makes the numbers depend only on the step's seed and the
// shard, never on which thread (or process) runs first — and a module cannot forget to, since the tape is the only
// way to its numbers. The autograd's ops take the generator they are given and know nothing of this.
#pragma once

#include <cstdint>

#include "autograd/tape.hpp"
#include "runtime/context.hpp"

namespace attend::nn {

class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed = 0) : own_(seed) {}

  // The generator a random op recorded on `tape` draws from: the tape's context's, else this stream's own.
  template <class T>
  Rng& on(const Tape<T>& tape) {
    const Context* context = tape.context();
    return context != nullptr && context->generator != nullptr ? *context->generator : own_;
  }
  // The stream's own generator, for checkpoints: Module::visit reports it (ModuleVisitor::generator).
  Rng& state() { return own_; }

 private:
  Rng own_;
};

}  // namespace attend::nn
