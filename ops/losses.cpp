// The cross-entropy from logits (fused.hpp): log softmax and the negative log-likelihood in one node, with the row's
// maximum and log-sum-exp from the kernels of kernels.hpp. Equal to nll_loss(log_softmax(x)) (cross_entropy_composed,
// tests/ops/test_equals.cpp). And the output layer with its loss in one node, linear_cross_entropy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/fused.hpp"
#include "precision/bfloat16.hpp"
#include "precision/products.hpp"
#include "runtime/kernels.hpp"

namespace attend {

namespace {

// What add_row_loss finds of a row: its maximum m, s = Σ_c exp(x_c − m) and l = ln s.
template <class T>
struct RowSums {
  T m, s, l;
};

// Adds a row's loss to `total`, (1 − ε)(lse − x_t) + (ε/C) Σ_c (lse − x_c) with lse = m + l, and returns its sums.
// With `exps`, also writes exp(x_c − m) there.
template <class T>
RowSums<T> add_row_loss(const T* row, std::size_t classes, std::size_t t, T eps, T& total, T* exps = nullptr) {
  const T on_target = T(1) - eps, spread = eps / static_cast<T>(classes);
  const T m = kernels::max_of(row, classes);
  const T s =
      exps != nullptr ? kernels::exp_shifted_store(row, m, exps, classes) : kernels::exp_shifted_sum(row, m, classes);
  const T l = std::log(s), lse = m + l;
  total += on_target * (lse - row[t]);
  if (eps > T(0)) {
    T all = 0;
    for (std::size_t k = 0; k < classes; ++k) all += lse - row[k];
    total += spread * all;
  }
  return {m, s, l};
}

// Throws std::invalid_argument naming `op` when ε is outside [0, 1].
void check_smoothing(const char* op, double label_smoothing) {
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw std::invalid_argument(std::string(op) + ": label_smoothing " + std::to_string(label_smoothing) +
                                " is outside [0, 1]");
  }
}

}  // namespace

template <class T>
Variable<T> cross_entropy(const Variable<T>& logits, const Ids& targets, std::int64_t ignore_id,
                          double label_smoothing) {
  Tape<T>& tape = tape_of("cross_entropy", {&logits});
  check_smoothing("cross_entropy", label_smoothing);
  const Shape& shape = logits.value().shape();
  const std::size_t counted = counted_targets("cross_entropy", shape, targets, ignore_id);
  const std::size_t classes = shape[shape.rank() - 1];
  const T eps = static_cast<T>(label_smoothing), on_target = T(1) - eps, spread = eps / static_cast<T>(classes);
  // loss_n = (1 - ε)(lse_n - x_t) + (ε/C) Σ_c (lse_n - x_c),  lse_n = m_n + l_n, l_n = ln Σ_c exp(x_c - m_n); m_n and
  // l_n are kept for backward (two numbers a row), so that backward takes one pass of exps over the logits
  const T* x = logits.value().data();
  std::vector<T> pieces(2 * targets.size());  // m_n, l_n
  T total = 0;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    const std::int64_t t = targets.data()[n];
    if (t == ignore_id) continue;
    const RowSums<T> sums = add_row_loss(x + n * classes, classes, static_cast<std::size_t>(t), eps, total);
    pieces[2 * n] = sums.m;
    pieces[2 * n + 1] = sums.l;
  }
  const T loss = counted > 0 ? total / static_cast<T>(counted) : T(0);
  return tape.record(
      "cross_entropy", Tensor<T>::scalar(loss), {logits},
      [targets, ignore_id, classes, counted, on_target, spread, pieces = std::move(pieces)](BackwardContext<T>& c) {
        if (counted == 0) return;
        const T scale = c.dy().item() / static_cast<T>(counted);
        const T* x = c.x(0).data();
        // the first gradient of the logits is written, not added to a zero-filled one
        const bool accumulate = c.has_dx(0);
        T* dx = accumulate ? c.dx(0).data() : c.dx_for_overwrite(0).data();
        for (std::size_t n = 0; n < targets.size(); ++n) {
          const std::int64_t t = targets.data()[n];
          T* row_dx = dx + n * classes;
          if (t == ignore_id) {
            if (!accumulate) std::fill(row_dx, row_dx + classes, T(0));
            continue;
          }
          // dx_n = scale · (softmax(x_n) - (1 - ε) onehot(t) - ε/C), softmax_k = exp((x_k - m_n) - l_n)
          kernels::scaled_exp_minus(x + n * classes, pieces[2 * n], pieces[2 * n + 1], scale, spread, row_dx, classes,
                                    accumulate);
          row_dx[static_cast<std::size_t>(t)] -= scale * on_target;
        }
      });
}

namespace {

// The rows of logits linear_cross_entropy computes at a time: 2¹⁹ numbers (2 MB in float) — 63 rows of the translation
// benchmark's 8,207 classes, so that its product still runs on tall blocks.
constexpr std::size_t logit_block = std::size_t{1} << 19;

// G's row n, kept for backward: as it is (S = T), or rounded to bfloat16.
template <class T, class S>
void keep_row(const T* row, S* kept, std::size_t n) {
  if constexpr (std::is_same_v<S, T>) {
    std::copy(row, row + n, kept);
  } else {
    bf16::from_float(row, kept, n);
  }
}

// C (+)= alpha · op(G) · B, G as kept: a bfloat16 product for bfloat16, the products' own for T (B in the weight
// `b_weight` names, or nullptr).
template <class T, class S>
void product_of_kept(const Products* products, bool trans_g, std::size_t m, std::size_t n, std::size_t k, T alpha,
                     const S* g, std::size_t ldg, const T* b, T beta, T* c, const Parameter<float>* b_weight) {
  if constexpr (std::is_same_v<S, T>) {
    gemm(products, trans_g, false, m, n, k, alpha, g, ldg, b, n, beta, c, n, {nullptr, b_weight});
  } else {
    products->gemm_bfloat16_a(trans_g, false, m, n, k, alpha, g, ldg, b, n, beta, c, n, b_weight);
  }
}

// The one node of linear_cross_entropy (fused.hpp), keeping G in S.
template <class T, class S>
Variable<T> output_loss_node(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b, const Ids& targets,
                             std::int64_t ignore_id, T eps, std::size_t counted) {
  Tape<T>& tape = b.empty() ? tape_of("linear_cross_entropy", {&x, &W}) : tape_of("linear_cross_entropy", {&x, &W, &b});
  const Products* products = products_of(tape);
  const Parameter<float>* weight = weight_of(W);
  const std::size_t rows = x.value().shape()[0], in = W.value().shape()[1], classes = W.value().shape()[0];
  const T on_target = T(1) - eps, spread = eps / static_cast<T>(classes);
  // neither G nor the block of logits is zero-filled first: every number of each is written before it is read
  const std::shared_ptr<S[]> g(new S[rows * classes]);
  std::vector<T> column_sums(b.empty() ? 0 : classes, T(0));  // Σ_n G_n, for db
  const std::size_t block = std::max<std::size_t>(1, logit_block / std::max<std::size_t>(classes, 1));
  const std::unique_ptr<T[]> logits(new T[std::min(block, rows) * classes]);
  const std::unique_ptr<T[]> exps(new T[classes]);  // one row's exp(x_c − m)
  T total = 0;
  for (std::size_t r0 = 0; r0 < rows; r0 += block) {
    const std::size_t count = std::min(block, rows - r0);
    linear_product(products, count, classes, in, x.value().data() + r0 * in, W.value().data(),
                   b.empty() ? nullptr : b.value().data(), logits.get(), weight);
    for (std::size_t n = r0; n < r0 + count; ++n) {
      T* row = logits.get() + (n - r0) * classes;
      const std::int64_t t = targets.data()[n];
      if (t == ignore_id) {
        std::fill(row, row + classes, T(0));  // G_n = 0: the row adds nothing to any gradient
      } else {
        // the loss as cross_entropy adds it up, then G_n = softmax(x_n) − (1 − ε) onehot(t) − ε/C over the same row,
        // the softmax from the exps the loss took (e_c · (1 / s): one exp a logit, not two)
        const RowSums<T> sums = add_row_loss(row, classes, static_cast<std::size_t>(t), eps, total, exps.get());
        const T inverse = T(1) / sums.s;
        for (std::size_t k = 0; k < classes; ++k) row[k] = exps[k] * inverse - spread;
        row[static_cast<std::size_t>(t)] -= on_target;
        for (std::size_t k = 0; k < column_sums.size(); ++k) column_sums[k] += row[k];
      }
      keep_row(row, g.get() + n * classes, classes);
    }
  }
  const T loss = counted > 0 ? total / static_cast<T>(counted) : T(0);
  std::vector<Variable<T>> inputs{x, W};
  if (!b.empty()) inputs.push_back(b);
  return tape.record(
      "linear_cross_entropy", Tensor<T>::scalar(loss), inputs,
      [products, weight, rows, in, classes, counted, g, column_sums = std::move(column_sums)](BackwardContext<T>& c) {
        if (counted == 0) return;
        const T scale = c.dy().item() / static_cast<T>(counted);
        if (c.wants(0)) {  // dx (rows, in) += scale · G (rows, C) · W (C, in)
          const bool add = c.has_dx(0);
          product_of_kept(products, false, rows, in, classes, scale, g.get(), classes, c.x(1).data(), add ? T(1) : T(0),
                          add ? c.dx(0).data() : c.dx_for_overwrite(0).data(), weight);
        }
        if (c.wants(1)) {  // dW (C, in) += scale · Gᵀ (C, rows) · x (rows, in)
          const bool add = c.has_dx(1);
          product_of_kept(products, true, classes, in, rows, scale, g.get(), classes, c.x(0).data(), add ? T(1) : T(0),
                          add ? c.dx(1).data() : c.dx_for_overwrite(1).data(), nullptr);
        }
        if (c.input_count() == 3 && c.wants(2)) {  // db (C) += scale · Σ_n G_n
          T* db = c.dx(2).data();
          for (std::size_t k = 0; k < classes; ++k) db[k] += scale * column_sums[k];
        }
      });
}

}  // namespace

template <class T>
Variable<T> linear_cross_entropy(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b, const Ids& targets,
                                 std::int64_t ignore_id, double label_smoothing) {
  const Shape& xs = x.value().shape();
  const Shape& ws = W.value().shape();
  if (xs.rank() != 2 || ws.rank() != 2 || xs[1] != ws[1] ||
      (!b.empty() && (b.value().rank() != 1 || b.value().shape()[0] != ws[0]))) {
    throw std::invalid_argument("linear_cross_entropy: input " + to_string(xs) + ", weight " + to_string(ws) +
                                ", bias " + (b.empty() ? std::string("none") : to_string(b.value().shape())) +
                                ": expected input (N, in), weight (C, in), bias (C,)");
  }
  check_smoothing("linear_cross_entropy", label_smoothing);
  const std::size_t counted = counted_targets("linear_cross_entropy", Shape{xs[0], ws[0]}, targets, ignore_id);
  const T eps = static_cast<T>(label_smoothing);
  if constexpr (std::is_same_v<T, float>) {
    // products that do not round to bfloat16 keep the two nodes: float32 training's bits, as they have always been
    const Products* products = products_of(tape_of("linear_cross_entropy", {&x, &W}));
    if (products == nullptr || !products->rounds_to_bfloat16()) {
      return cross_entropy(dense(x, W, b), targets, ignore_id, label_smoothing);
    }
    return output_loss_node<T, std::uint16_t>(x, W, b, targets, ignore_id, eps, counted);
  } else {
    return output_loss_node<T, T>(x, W, b, targets, ignore_id, eps, counted);
  }
}

template Variable<float> cross_entropy(const Variable<float>&, const Ids&, std::int64_t, double);
template Variable<double> cross_entropy(const Variable<double>&, const Ids&, std::int64_t, double);
template Variable<float> linear_cross_entropy(const Variable<float>&, const Variable<float>&, const Variable<float>&,
                                              const Ids&, std::int64_t, double);
template Variable<double> linear_cross_entropy(const Variable<double>&, const Variable<double>&,
                                               const Variable<double>&, const Ids&, std::int64_t, double);

}  // namespace attend
