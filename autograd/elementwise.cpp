// Elementwise ops: binary with NumPy broadcasting, with a scalar, and unary. Each op's value is one xtensor
// expression over the flat storage (static rank 1, vectorised by xsimd); broadcast inputs are expanded first.
// Formulas: ops.hpp. Chapter: docs/01-autograd.md.
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xoperation.hpp>

#include "autograd/ops.hpp"

namespace attend {

namespace {

// t itself when it already has `shape`, otherwise its broadcast copy kept in `storage`.
template <class T>
const Tensor<T>& expand(const Tensor<T>& t, const Shape& shape, Tensor<T>& storage) {
  if (t.shape() == shape) return t;
  storage = broadcast_to(t, shape);
  return storage;
}

// y = f(a, b) elementwise over the broadcast shape of a and b.
template <class T, class F>
Tensor<T> binary(const char* op, const Tensor<T>& a, const Tensor<T>& b, F f) {
  const Shape shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), op);
  Tensor<T> a_storage, b_storage;
  const Tensor<T>& ea = expand(a, shape, a_storage);
  const Tensor<T>& eb = expand(b, shape, b_storage);
  Tensor<T> y(shape, uninitialized);
  xt::noalias(y.flat()) = f(ea.flat(), eb.flat());
  return y;
}

// y = f(x) elementwise.
template <class T, class F>
Tensor<T> unary(const Tensor<T>& x, F f) {
  Tensor<T> y(x.shape(), uninitialized);
  xt::noalias(y.flat()) = f(x.flat());
  return y;
}

}  // namespace

template <class T>
Variable<T> add(const Variable<T>& a, const Variable<T>& b) {
  Tape<T>& tape = tape_of("add", {&a, &b});
  return tape.record("add", binary("add", a.value(), b.value(), [](const auto& p, const auto& q) { return p + q; }),
                     {a, b}, [](BackwardContext<T>& c) {
                       if (c.wants(0)) c.accumulate(0, c.dy());
                       if (c.wants(1)) c.accumulate(1, c.dy());
                     });
}

template <class T>
Variable<T> sub(const Variable<T>& a, const Variable<T>& b) {
  Tape<T>& tape = tape_of("sub", {&a, &b});
  return tape.record("sub", binary("sub", a.value(), b.value(), [](const auto& p, const auto& q) { return p - q; }),
                     {a, b}, [](BackwardContext<T>& c) {
                       if (c.wants(0)) c.accumulate(0, c.dy());
                       if (c.wants(1)) c.accumulate(1, unary(c.dy(), [](const auto& g) { return -g; }));
                     });
}

template <class T>
Variable<T> mul(const Variable<T>& a, const Variable<T>& b) {
  Tape<T>& tape = tape_of("mul", {&a, &b});
  return tape.record(
      "mul", binary("mul", a.value(), b.value(), [](const auto& p, const auto& q) { return p * q; }), {a, b},
      [](BackwardContext<T>& c) {
        Tensor<T> storage;
        const Shape& shape = c.y().shape();
        if (c.wants(0)) {
          const Tensor<T>& b_full = expand(c.x(1), shape, storage);
          c.accumulate(0, binary("mul", c.dy(), b_full, [](const auto& g, const auto& q) { return g * q; }));
        }
        if (c.wants(1)) {
          const Tensor<T>& a_full = expand(c.x(0), shape, storage);
          c.accumulate(1, binary("mul", c.dy(), a_full, [](const auto& g, const auto& p) { return g * p; }));
        }
      });
}

template <class T>
Variable<T> div(const Variable<T>& a, const Variable<T>& b) {
  Tape<T>& tape = tape_of("div", {&a, &b});
  return tape.record(
      "div", binary("div", a.value(), b.value(), [](const auto& p, const auto& q) { return p / q; }), {a, b},
      [](BackwardContext<T>& c) {
        Tensor<T> storage;
        const Tensor<T>& b_full = expand(c.x(1), c.y().shape(), storage);
        if (c.wants(0)) {
          c.accumulate(0, binary("div", c.dy(), b_full, [](const auto& g, const auto& q) { return g / q; }));
        }
        if (c.wants(1)) {
          // -dy ⊙ a / b² = -dy ⊙ y / b, using the saved output instead of a
          Tensor<T> dy_over_b = binary("div", c.dy(), b_full, [](const auto& g, const auto& q) { return g / q; });
          c.accumulate(1, binary("div", dy_over_b, c.y(), [](const auto& h, const auto& y) { return -h * y; }));
        }
      });
}

template <class T>
Variable<T> add(const Variable<T>& x, scalar_t<T> s) {
  Tape<T>& tape = tape_of("add_scalar", {&x});
  return tape.record("add_scalar", unary(x.value(), [s](const auto& v) { return v + s; }), {x},
                     [](BackwardContext<T>& c) { xt::noalias(c.dx(0).flat()) += c.dy().flat(); });
}

template <class T>
Variable<T> mul(const Variable<T>& x, scalar_t<T> s) {
  Tape<T>& tape = tape_of("mul_scalar", {&x});
  return tape.record("mul_scalar", unary(x.value(), [s](const auto& v) { return v * s; }), {x},
                     [s](BackwardContext<T>& c) { xt::noalias(c.dx(0).flat()) += s * c.dy().flat(); });
}

template <class T>
Variable<T> neg(const Variable<T>& x) {
  Tape<T>& tape = tape_of("neg", {&x});
  return tape.record("neg", unary(x.value(), [](const auto& v) { return -v; }), {x},
                     [](BackwardContext<T>& c) { xt::noalias(c.dx(0).flat()) -= c.dy().flat(); });
}

// [docs:tanh]
template <class T>
Variable<T> tanh(const Variable<T>& x) {
  Tape<T>& tape = tape_of("tanh", {&x});
  return tape.record("tanh", unary(x.value(), [](const auto& v) { return xt::tanh(v); }), {x},
                     [](BackwardContext<T>& c) {
                       const auto& y = c.y().flat();
                       xt::noalias(c.dx(0).flat()) += c.dy().flat() * (T(1) - y * y);
                     });
}
// [docs:end]

template <class T>
Variable<T> sigmoid(const Variable<T>& x) {
  Tape<T>& tape = tape_of("sigmoid", {&x});
  return tape.record("sigmoid", unary(x.value(), [](const auto& v) { return T(1) / (T(1) + xt::exp(-v)); }), {x},
                     [](BackwardContext<T>& c) {
                       const auto& y = c.y().flat();
                       xt::noalias(c.dx(0).flat()) += c.dy().flat() * y * (T(1) - y);
                     });
}

template <class T>
Variable<T> relu(const Variable<T>& x) {
  Tape<T>& tape = tape_of("relu", {&x});
  return tape.record("relu", unary(x.value(), [](const auto& v) { return xt::maximum(v, T(0)); }), {x},
                     [](BackwardContext<T>& c) {
                       xt::noalias(c.dx(0).flat()) += xt::where(c.x(0).flat() > T(0), c.dy().flat(), T(0));
                     });
}

template <class T>
Variable<T> exp(const Variable<T>& x) {
  Tape<T>& tape = tape_of("exp", {&x});
  return tape.record("exp", unary(x.value(), [](const auto& v) { return xt::exp(v); }), {x},
                     [](BackwardContext<T>& c) { xt::noalias(c.dx(0).flat()) += c.dy().flat() * c.y().flat(); });
}

template <class T>
Variable<T> log(const Variable<T>& x) {
  Tape<T>& tape = tape_of("log", {&x});
  return tape.record("log", unary(x.value(), [](const auto& v) { return xt::log(v); }), {x},
                     [](BackwardContext<T>& c) { xt::noalias(c.dx(0).flat()) += c.dy().flat() / c.x(0).flat(); });
}

template <class T>
Variable<T> sqrt(const Variable<T>& x) {
  Tape<T>& tape = tape_of("sqrt", {&x});
  return tape.record(
      "sqrt", unary(x.value(), [](const auto& v) { return xt::sqrt(v); }), {x},
      [](BackwardContext<T>& c) { xt::noalias(c.dx(0).flat()) += c.dy().flat() / (T(2) * c.y().flat()); });
}

template <class T>
Variable<T> pow(const Variable<T>& x, scalar_t<T> p) {
  Tape<T>& tape = tape_of("pow", {&x});
  return tape.record("pow", unary(x.value(), [p](const auto& v) { return xt::pow(v, p); }), {x},
                     [p](BackwardContext<T>& c) {
                       xt::noalias(c.dx(0).flat()) += c.dy().flat() * p * xt::pow(c.x(0).flat(), p - T(1));
                     });
}

#define ATTEND_INSTANTIATE(T)                                       \
  template Variable<T> add(const Variable<T>&, const Variable<T>&); \
  template Variable<T> sub(const Variable<T>&, const Variable<T>&); \
  template Variable<T> mul(const Variable<T>&, const Variable<T>&); \
  template Variable<T> div(const Variable<T>&, const Variable<T>&); \
  template Variable<T> add(const Variable<T>&, scalar_t<T>);        \
  template Variable<T> mul(const Variable<T>&, scalar_t<T>);        \
  template Variable<T> neg(const Variable<T>&);                     \
  template Variable<T> tanh(const Variable<T>&);                    \
  template Variable<T> sigmoid(const Variable<T>&);                 \
  template Variable<T> relu(const Variable<T>&);                    \
  template Variable<T> exp(const Variable<T>&);                     \
  template Variable<T> log(const Variable<T>&);                     \
  template Variable<T> sqrt(const Variable<T>&);                    \
  template Variable<T> pow(const Variable<T>&, scalar_t<T>);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
