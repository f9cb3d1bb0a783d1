// The tape of reverse-mode automatic differentiation. Every operation appends a node (its output value, the indices of
// its inputs, and a function that turns the output's gradient into its inputs' gradients). Nodes are appended in the
// order they are computed, which is already a topological order, so backward(loss) is a plain loop from the loss down
// to node 0: no recursion, no sort, no stack depth that grows with the length of an RNN unroll.
// Chapter: docs/01-autograd.md; lifetime rules: docs/reference/tape.md.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autograd/tensor.hpp"

namespace attend {

template <class T>
class Tape;

struct Context;  // what the layers above keep with a tape (Tape::context); defined in runtime/context.hpp

// A trainable tensor that lives outside any tape: its value, and the gradient that backward adds into.
// Layers own their parameters as public members named like the equations (W_z, U_a, v_a, ...).
template <class T>
struct Parameter {
  Tensor<T> value;
  Tensor<T> grad;  // same shape as value; backward adds (+=) into it, zero_grad() resets it

  Parameter() = default;
  explicit Parameter(Tensor<T> initial) : value(std::move(initial)), grad(value.shape()) {}
  void zero_grad() { grad = Tensor<T>(value.shape()); }
  // A new value, of any shape, with the gradient reset to zeros of that shape. Writing `value` directly keeps the old
  // gradient; a tape refuses a parameter whose value and gradient shapes differ (Tape::param).
  void assign(Tensor<T> new_value) {
    value = std::move(new_value);
    zero_grad();
  }
};

// A handle to one node of one tape: the tape's address, the node's index and the tape's generation when the node was
// made. Copying it copies no data. Reading through a handle whose tape was cleared since (a "stale" handle) throws.
template <class T>
class Variable {
 public:
  Variable() = default;

  Tape<T>& tape() const;  // throws std::logic_error for an empty or stale handle
  const Tensor<T>& value() const { return tape().value_of(index_); }  // valid until the tape is cleared
  const Shape& shape() const { return value().shape(); }
  // ∂loss/∂(this node) after tape.backward(loss); zeros when no gradient reached it. Throws std::logic_error when
  // backward freed it (an op node on a tape with retain_gradients off).
  Tensor<T> grad() const;
  bool requires_grad() const { return tape().node(index_).requires_grad; }
  std::uint32_t index() const { return index_; }
  bool empty() const { return tape_ == nullptr; }
  Tape<T>* owner() const { return tape_; }  // unchecked; tape() is the checked way

 private:
  friend class Tape<T>;
  Variable(Tape<T>* tape, std::uint32_t index, std::uint32_t generation)
      : tape_(tape), index_(index), generation_(generation) {}

  Tape<T>* tape_ = nullptr;
  std::uint32_t index_ = 0;
  std::uint32_t generation_ = 0;
};

template <class T>
class BackwardContext;  // what a backward function is given; defined after Tape

template <class T>
using BackwardFn = std::function<void(BackwardContext<T>&)>;

// [docs:node]
template <class T>
struct Node {
  const char* op = "";  // "leaf", "param", "constant", or the op's name
  Tensor<T> value;      // the output (empty for a parameter leaf: see param)
  Tensor<T> grad;       // ∂loss/∂value; allocated by backward when a gradient first arrives
  bool has_grad = false;
  bool grad_released = false;  // backward freed grad after using it (retain_gradients off)
  bool requires_grad = false;
  Parameter<T>* param = nullptr;  // for a parameter leaf: value is read from, and grad added into, *param
  std::uint32_t generation = 0;   // the tape's generation when the node was made: a handle of another is stale
  std::uint32_t first_input = 0;  // inputs are edges_[first_input, first_input + input_count)
  std::uint32_t input_count = 0;
  BackwardFn<T> backward;  // empty for leaves and for nodes made without gradients
};
// [docs:end]

template <class T>
class Tape {
 public:
  Tape();
  Tape(const Tape&) = delete;  // Variables hold the tape's address: it must not move
  Tape& operator=(const Tape&) = delete;

  // A value that needs no gradient (data, targets, masks).
  Variable<T> constant(Tensor<T> value);
  // A value whose gradient you want to read after backward (an input of a gradient check, a tutorial's x).
  Variable<T> leaf(Tensor<T> value);
  // A parameter: backward adds ∂loss/∂p into p.grad. Using the same parameter again on this tape returns the same node,
  // so a weight shared by every step of an RNN is one leaf whose gradient sums all steps. The parameter's value is read
  // in place, not copied: do not change it between the forward pass and backward (optimizers step after backward).
  Variable<T> param(Parameter<T>& p);

  // Appends an op's node. `inputs` must live on this tape; `backward` is dropped when no input requires a gradient or
  // when gradients are disabled (NoGradGuard). With anomaly detection on, a non-finite output throws here.
  Variable<T> record(const char* op, Tensor<T> value, const std::vector<Variable<T>>& inputs, BackwardFn<T> backward);
  Variable<T> record(const char* op, Tensor<T> value, std::initializer_list<Variable<T>> inputs,
                     BackwardFn<T> backward);

  // Reverse sweep from a scalar loss (d loss = 1), or from any output with a given seed gradient of its shape.
  // Node gradients are recomputed from zero on each call; parameter gradients are added into p.grad. It is
  // propagate(), then add_parameter_gradients().
  void backward(const Variable<T>& loss);
  void backward(const Variable<T>& output, const Tensor<T>& seed);
  // The sweep alone: every node's gradient, a parameter's left on its leaf node and not added into p.grad — for a
  // caller that adds up several tapes' parameter gradients in an order of its own (nn::BatchParallel: one tape a
  // thread, the shards' sums in shard order).
  void propagate(const Variable<T>& output, const Tensor<T>& seed);
  // p.grad += ∂output/∂p for every parameter the last propagate() reached (p.grad made zeros of p's shape first if
  // it is not of that shape).
  void add_parameter_gradients();
  // (p, ∂output/∂p) for every parameter the last propagate() reached, in the order of first use on this tape. The
  // gradients are the tape's own: valid until it is cleared or propagates again.
  std::vector<std::pair<Parameter<T>*, const Tensor<T>*>> parameter_gradients() const;

  // Whether backward keeps the gradient of every intermediate node (on by default, so that v.grad() can be read for
  // any node after backward, as the tutorials do). Off, backward frees each op node's gradient as soon as that node's
  // backward function has used it, which roughly halves the memory of a backward pass; parameters' and leaves'
  // gradients are kept, and v.grad() of a freed node throws. Training loops turn it off.
  void set_retain_gradients(bool retain) { retain_gradients_ = retain; }
  bool retain_gradients() const { return retain_gradients_; }

  // Drops every node. Handles made before are stale from now on; parameters keep their values and gradients.
  void clear();
  // Drops the nodes recorded after the first `size` (a size() read earlier), keeping those before: a loop that records
  // the same work again and again on top of what it keeps — decoding step by step over an encoded source — stays in
  // bounded memory. Handles to the dropped nodes are stale from now on, handles to the kept ones stay valid. Gradients
  // already held by kept nodes stay as they are.
  void truncate(std::size_t size);
  // truncate(size), keeping the values of `keep`: each kept handle to a dropped node becomes a new constant holding
  // that node's value, moved, not copied (a handle to a node below `size` is returned as it is). Returns the handles,
  // in the order of `keep`. A decoding loop's state (a recurrent state, a growing key/value cache) crosses from one
  // step to the next this way while everything else the step recorded goes.
  std::vector<Variable<T>> truncate_keeping(std::size_t size, const std::vector<Variable<T>>& keep);
  std::size_t size() const { return nodes_.size(); }
  std::uint32_t generation() const { return generation_; }

  // An opaque slot for the layers above: what a forward pass on this tape needs besides its inputs (the shard's random
  // generator, runtime/context.hpp). The engine keeps the pointer and never reads through it; clear() keeps it.
  Context* context() const { return context_; }
  void set_context(Context* context) { context_ = context; }

  bool grad_enabled() const { return grad_enabled_; }
  void set_grad_enabled(bool enabled) { grad_enabled_ = enabled; }
  // Parameters frozen (not by default): param() gives a node that backward treats as a constant — PyTorch's
  // requires_grad_(False) on every parameter: no op computes ∂/∂W, nothing is added into p.grad, and a sweep that
  // wants the inputs' gradients alone (gradient attribution) skips every weight's product.
  void set_parameters_frozen(bool frozen) { parameters_frozen_ = frozen; }
  // Opt-in check (like torch.autograd.detect_anomaly): every op's output and every gradient a backward function
  // produces is tested for NaN/Inf, and the first one found throws std::runtime_error naming the op and node.
  bool anomaly_detection() const { return anomaly_detection_; }
  void set_anomaly_detection(bool enabled) { anomaly_detection_ = enabled; }

  // Throws std::logic_error when v is empty, stale, or from another tape; `op` names the caller in the message.
  void check(const Variable<T>& v, const char* op) const;
  const Node<T>& node(std::uint32_t index) const { return nodes_[index]; }
  const Tensor<T>& value_of(std::uint32_t index) const;
  std::uint32_t input_of(std::uint32_t node, std::size_t k) const { return edges_[nodes_[node].first_input + k]; }

 private:
  friend class BackwardContext<T>;
  Variable<T> record_impl(const char* op, Tensor<T> value, const Variable<T>* inputs, std::size_t count,
                          BackwardFn<T> backward);
  Variable<T> push(Node<T> node, const Variable<T>* inputs, std::size_t count);
  void check_finite(const Tensor<T>& t, std::uint32_t node, const char* op, const std::string& what) const;
  // The node's gradient, made (zeros, or uninitialised when `zeroed` is false) when it has none yet.
  Tensor<T>& grad_slot(std::uint32_t index, bool zeroed = true);

  // A deque, not a vector: appending never moves existing nodes, so a reference to a value (v.value()) stays valid
  // while more ops are recorded, until clear().
  std::deque<Node<T>> nodes_;
  std::vector<std::uint32_t> edges_;  // input indices of all nodes, node after node
  std::unordered_map<const Parameter<T>*, std::uint32_t> param_nodes_;
  std::uint32_t id_;  // distinguishes tapes in messages
  std::uint32_t generation_ = 0;
  Context* context_ = nullptr;
  bool grad_enabled_ = true;
  bool parameters_frozen_ = false;
  bool anomaly_detection_ = false;
  bool retain_gradients_ = true;
};

// What a node's backward function sees: its own output y and gradient dy, its inputs' values x(k), and the gradient
// accumulators dx(k) of the inputs that need one (wants(k)). Backward functions always add into dx(k), never assign:
// a value used twice receives both contributions. The accessors are calls, not inlined into the backward functions
// (gnu::noinline): inlined there, they made a Transformer training step 7% slower (bench/compare --baseline).
template <class T>
class BackwardContext {
 public:
  [[gnu::noinline]] const Tensor<T>& y() const { return tape_.value_of(node_); }
  [[gnu::noinline]] const Tensor<T>& dy() const { return tape_.nodes_[node_].grad; }
  [[gnu::noinline]] const Tensor<T>& x(std::size_t k) const { return tape_.value_of(input(k)); }
  [[gnu::noinline]] std::size_t input_count() const { return tape_.nodes_[node_].input_count; }
  // does input k need a gradient?
  [[gnu::noinline]] bool wants(std::size_t k) const { return tape_.nodes_[input(k)].requires_grad; }
  // input k's gradient, zero-filled on first use
  [[gnu::noinline]] Tensor<T>& dx(std::size_t k) { return tape_.grad_slot(input(k)); }
  // For a backward that writes every element of dx(k) itself (a gemm): whether input k already holds a gradient
  // (then add to it, e.g. gemm with beta = 1), and its slot without the zero fill when it does not (then assign:
  // uninitialised when new, the caller must write every element).
  [[gnu::noinline]] bool has_dx(std::size_t k) const { return tape_.nodes_[input(k)].has_grad; }
  [[gnu::noinline]] Tensor<T>& dx_for_overwrite(std::size_t k) { return tape_.grad_slot(input(k), false); }
  // dx(k) += g, where g has the broadcast shape of the op's output: sums g over the axes along which input k was
  // broadcast. The one place broadcasting is undone.
  void accumulate(std::size_t k, const Tensor<T>& g);
  // The same for a temporary: when input k has no gradient yet and g has its shape, g becomes the gradient (no copy).
  void accumulate(std::size_t k, Tensor<T>&& g);

 private:
  friend class Tape<T>;
  BackwardContext(Tape<T>& tape, std::uint32_t node) : tape_(tape), node_(node) {}
  [[gnu::noinline]] std::uint32_t input(std::size_t k) const { return tape_.input_of(node_, k); }
  Tape<T>& tape_;
  std::uint32_t node_;
};

// Inside this scope nothing is recorded for differentiation: ops still compute their values (on the tape, so that
// handles work), but keep no inputs and no backward function, so no gradient flows through them.
template <class T>
class NoGradGuard {
 public:
  explicit NoGradGuard(Tape<T>& tape) : tape_(tape), previous_(tape.grad_enabled()) { tape.set_grad_enabled(false); }
  ~NoGradGuard() { tape_.set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  Tape<T>& tape_;
  bool previous_;
};

// The same value as x, cut off from the graph: no gradient flows back through the result.
template <class T>
Variable<T> detach(const Variable<T>& x);

// Checks that every variable is valid and on one tape, and returns that tape. Every op starts with this.
template <class T>
Tape<T>& tape_of(const char* op, std::initializer_list<const Variable<T>*> inputs);

}  // namespace attend
