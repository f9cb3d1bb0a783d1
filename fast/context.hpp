// What a forward pass needs besides its inputs and its weights, carried by the tape it records on (Tape::context(),
// an opaque slot the engine never reads): today the random generator of the shard the tape belongs to. A layer reads
// it through what it is passed — the tape of its inputs — never from a thread-local or a global, so that the same
// code gives the same numbers on one tape, on threads and on processes (nn/generator.hpp, nn/parallel.hpp).
#pragma once

#include "autograd/tape.hpp"

namespace attend {

struct Context {
  // Every random op on the tape draws from this generator (a shard's: nn::BatchParallel sets it from the step's seed
  // and the shard's index); nullptr: each module from its own stream (nn::RandomStream).
  Rng* generator = nullptr;
};

}  // namespace attend
