// What a forward pass needs besides its inputs and its weights, carried by the tape it records on (Tape::context(),
// an opaque slot the engine never reads): the random generator of the shard the tape belongs to, and the products of
// the precision the work runs in. A layer reads them through what it is passed — the tape of its inputs — never from
// a thread-local or a global, so that the same code gives the same numbers on one tape, on threads and on processes
// (nn/generator.hpp, nn/parallel.hpp), and two models of different precisions can run in one process at once.
#pragma once

#include "autograd/tape.hpp"

namespace attend {

class Products;  // precision/products.hpp

struct Context {
  // Every random op on the tape draws from this generator (a shard's: nn::BatchParallel sets it from the step's seed
  // and the shard's index); nullptr: each module from its own stream (nn::RandomStream).
  Rng* generator = nullptr;
  // The float products of the work on the tape (precision/products.hpp, precision/precision.hpp); nullptr: float32
  // (OpenBLAS).
  const Products* products = nullptr;
};

// A tape with a context of its own, for work that sets it once (a decoding, an explanation): the tape records as any,
// with `context` on it.
template <class T>
struct TapeWithContext {
  explicit TapeWithContext(const Context& c) : context(c) { tape.set_context(&context); }
  TapeWithContext(const TapeWithContext&) = delete;
  TapeWithContext& operator=(const TapeWithContext&) = delete;
  Context context;
  Tape<T> tape;
};

}  // namespace attend
