// The tape, its handles and the reverse sweep declared in tape.hpp.
#include "autograd/tape.hpp"

#include <atomic>
#include <cmath>
#include <iterator>
#include <sstream>
#include <xtensor/xnoalias.hpp>

namespace attend {

namespace {
std::atomic<std::uint32_t> next_tape_id{0};
}  // namespace

// ---- Variable ----------------------------------------------------------------------------------------------------

template <class T>
Tape<T>& Variable<T>::tape() const {
  if (tape_ == nullptr) throw std::logic_error("Variable: empty handle (default-constructed, never assigned)");
  tape_->check(*this, "Variable");
  return *tape_;
}

template <class T>
Tensor<T> Variable<T>::grad() const {
  const Node<T>& n = tape().node(index_);
  if (n.grad_released) {
    throw std::logic_error("Variable::grad: the gradient of node " + std::to_string(index_) + " ('" + n.op +
                           "') was freed during backward, because the tape's retain_gradients is off");
  }
  if (n.has_grad) return n.grad;
  return Tensor<T>(value().shape());
}

// ---- BackwardContext ---------------------------------------------------------------------------------------------

template <class T>
void BackwardContext<T>::accumulate(std::size_t k, Tensor<T>&& g) {
  Node<T>& n = tape_.nodes_[input(k)];
  if (!n.has_grad && g.shape() == tape_.value_of(input(k)).shape()) {
    n.grad = std::move(g);
    n.has_grad = true;
    return;
  }
  accumulate(k, static_cast<const Tensor<T>&>(g));
}

// [docs:accumulate]
template <class T>
void BackwardContext<T>::accumulate(std::size_t k, const Tensor<T>& g) {
  Tensor<T>& target = dx(k);
  if (g.shape() == target.shape()) {
    xt::noalias(target.flat()) += g.flat();
    return;
  }
  // Undo broadcasting: align shapes at the right (missing leading axes are size 1), then sum g over every axis where
  // the input has size 1 and g does not, one axis at a time with the (outer, n, inner) view.
  const Shape& in = target.shape();
  const std::size_t rank = g.rank();
  std::vector<std::size_t> reduced(g.shape().begin(), g.shape().end());
  Tensor<T> current = g;
  for (std::size_t axis = 0; axis < rank; ++axis) {
    const std::size_t in_dim = axis + in.rank() >= rank ? in[axis + in.rank() - rank] : 1;
    if (in_dim != 1 || reduced[axis] == 1) continue;
    const AxisSplit s = split_at(current.shape(), axis);
    reduced[axis] = 1;
    Tensor<T> next{Shape(reduced)};
    const T* src = current.data();
    T* dst = next.data();
    for (std::size_t o = 0; o < s.outer; ++o) {
      for (std::size_t k2 = 0; k2 < s.n; ++k2) {
        const T* row = src + (o * s.n + k2) * s.inner;
        T* out = dst + o * s.inner;
        for (std::size_t i = 0; i < s.inner; ++i) out[i] += row[i];
      }
    }
    current = std::move(next);
  }
  if (current.size() != target.size()) {
    throw std::logic_error("accumulate: gradient of shape " + to_string(g.shape()) +
                           " does not reduce to input shape " + to_string(in));
  }
  xt::noalias(target.flat()) += current.flat();
}
// [docs:end]

// ---- Tape --------------------------------------------------------------------------------------------------------

template <class T>
Tape<T>::Tape() : id_(next_tape_id++) {}

template <class T>
void Tape<T>::check(const Variable<T>& v, const char* op) const {
  if (v.tape_ == nullptr) {
    throw std::logic_error(std::string(op) + ": empty Variable (default-constructed, never assigned)");
  }
  if (v.tape_ != this) {
    throw std::logic_error(std::string(op) + ": Variable belongs to another tape (tape #" +
                           std::to_string(v.tape_->id_) + ", used on tape #" + std::to_string(id_) +
                           "); values cannot move between tapes except through a constant copy of their value");
  }
  if (v.index_ >= nodes_.size() || nodes_[v.index_].generation != v.generation_) {
    throw std::logic_error(std::string(op) + ": stale Variable (node " + std::to_string(v.index_) + " of tape #" +
                           std::to_string(id_) + " was made before the tape was cleared or truncated)");
  }
}

template <class T>
const Tensor<T>& Tape<T>::value_of(std::uint32_t index) const {
  const Node<T>& n = nodes_[index];
  return n.param != nullptr ? n.param->value : n.value;
}

template <class T>
Tensor<T>& Tape<T>::grad_slot(std::uint32_t index, bool zeroed) {
  Node<T>& n = nodes_[index];
  if (!n.has_grad) {
    n.grad = zeroed ? Tensor<T>(value_of(index).shape()) : Tensor<T>(value_of(index).shape(), uninitialized);
    n.has_grad = true;
  }
  return n.grad;
}

// [docs:push]
template <class T>
Variable<T> Tape<T>::push(Node<T> node, const Variable<T>* inputs, std::size_t count) {
  if (nodes_.size() >= UINT32_MAX) throw std::length_error("Tape: more than 2^32 - 1 nodes");
  const auto index = static_cast<std::uint32_t>(nodes_.size());
  node.first_input = static_cast<std::uint32_t>(edges_.size());
  node.input_count = static_cast<std::uint32_t>(count);
  for (std::size_t k = 0; k < count; ++k) edges_.push_back(inputs[k].index_);
  node.generation = generation_;
  nodes_.push_back(std::move(node));
  return Variable<T>(this, index, generation_);
}
// [docs:end]

template <class T>
Variable<T> Tape<T>::constant(Tensor<T> value) {
  Node<T> n;
  n.op = "constant";
  n.value = std::move(value);
  return push(std::move(n), nullptr, 0);
}

template <class T>
Variable<T> Tape<T>::leaf(Tensor<T> value) {
  Node<T> n;
  n.op = "leaf";
  n.value = std::move(value);
  n.requires_grad = grad_enabled_;
  return push(std::move(n), nullptr, 0);
}

template <class T>
Variable<T> Tape<T>::param(Parameter<T>& p) {
  if (p.grad.shape() != p.value.shape()) {
    throw std::logic_error("Tape::param: a parameter's value is " + to_string(p.value.shape()) +
                           " but its gradient is " + to_string(p.grad.shape()) +
                           "; set a value of another shape with Parameter::assign or Module::load, which resize the "
                           "gradient");
  }
  auto found = param_nodes_.find(&p);
  const bool wanted = grad_enabled_ && !parameters_frozen_;
  // Reuse the parameter's node, unless it was made with a gradient and parameters are frozen now, or without one (a
  // no-grad scope, frozen parameters) and one is wanted now. In a no-grad scope any node does.
  if (found != param_nodes_.end() && (nodes_[found->second].requires_grad == wanted || !grad_enabled_)) {
    return Variable<T>(this, found->second, nodes_[found->second].generation);
  }
  Node<T> n;
  n.op = "param";
  n.param = &p;
  n.requires_grad = wanted;
  Variable<T> v = push(std::move(n), nullptr, 0);
  param_nodes_[&p] = v.index_;
  return v;
}

template <class T>
Variable<T> Tape<T>::record(const char* op, Tensor<T> value, std::initializer_list<Variable<T>> inputs,
                            BackwardFn<T> backward) {
  return record_impl(op, std::move(value), inputs.begin(), inputs.size(), std::move(backward));
}

template <class T>
Variable<T> Tape<T>::record(const char* op, Tensor<T> value, const std::vector<Variable<T>>& inputs,
                            BackwardFn<T> backward) {
  return record_impl(op, std::move(value), inputs.data(), inputs.size(), std::move(backward));
}

// [docs:record]
template <class T>
Variable<T> Tape<T>::record_impl(const char* op, Tensor<T> value, const Variable<T>* inputs, std::size_t count,
                                 BackwardFn<T> backward) {
  bool any_requires = false;
  for (std::size_t k = 0; k < count; ++k) {
    check(inputs[k], op);
    any_requires = any_requires || nodes_[inputs[k].index_].requires_grad;
  }
  if (anomaly_detection_) check_finite(value, static_cast<std::uint32_t>(nodes_.size()), op, "output");
  Node<T> n;
  n.op = op;
  n.value = std::move(value);
  if (grad_enabled_ && any_requires) {
    n.requires_grad = true;
    n.backward = std::move(backward);
    return push(std::move(n), inputs, count);
  }
  return push(std::move(n), nullptr, 0);  // a constant: no links, nothing saved
}
// [docs:end]

template <class T>
void Tape<T>::check_finite(const Tensor<T>& t, std::uint32_t node, const char* op, const std::string& what) const {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!std::isfinite(t.data()[i])) {
      std::ostringstream msg;
      msg << "anomaly detection: node " << node << " ('" << op << "') produced " << t.data()[i] << " in its " << what
          << " of shape " << to_string(t.shape()) << " at flat index " << i;
      throw std::runtime_error(msg.str());
    }
  }
}

template <class T>
void Tape<T>::backward(const Variable<T>& loss) {
  check(loss, "backward");
  if (value_of(loss.index_).size() != 1) {
    throw std::invalid_argument("backward: the loss must have one element, got shape " +
                                to_string(value_of(loss.index_).shape()) +
                                "; reduce it (sum, mean) or pass a seed gradient");
  }
  backward(loss, Tensor<T>(value_of(loss.index_).shape(), T(1)));
}

template <class T>
void Tape<T>::backward(const Variable<T>& output, const Tensor<T>& seed) {
  propagate(output, seed);
  add_parameter_gradients();
}

template <class T>
void Tape<T>::propagate(const Variable<T>& output, const Tensor<T>& seed) {
  check(output, "backward");
  if (seed.shape() != value_of(output.index_).shape()) {
    throw std::invalid_argument("backward: seed gradient of shape " + to_string(seed.shape()) +
                                " for an output of shape " + to_string(value_of(output.index_).shape()));
  }
  // [docs:backward-loop]
  for (auto& n : nodes_) {  // every gradient starts empty: none is left from an earlier backward
    n.grad = Tensor<T>();
    n.has_grad = false;
    n.grad_released = false;
  }
  grad_slot(output.index_).flat() = seed.flat();
  // Creation order is a topological order: walking it backwards visits every node after all its consumers.
  for (std::uint32_t i = output.index_ + 1; i-- > 0;) {
    Node<T>& n = nodes_[i];
    if (!n.has_grad || !n.backward) continue;  // a leaf (a parameter's too) keeps the gradient it was given
    BackwardContext<T> context(*this, i);
    n.backward(context);
    if (anomaly_detection_) {
      for (std::uint32_t k = 0; k < n.input_count; ++k) {
        const Node<T>& in = nodes_[input_of(i, k)];
        if (in.has_grad) check_finite(in.grad, i, n.op, "gradient for input " + std::to_string(k));
      }
    }
    if (!retain_gradients_) {
      // every consumer of node i came later and has already run: its gradient is complete and now used up
      n.grad = Tensor<T>();
      n.has_grad = false;
      n.grad_released = true;
    }
  }
  // [docs:end]
}

// [docs:parameter-gradients]
template <class T>
void Tape<T>::add_parameter_gradients() {
  for (const auto& [p, gradient] : parameter_gradients()) {
    if (p->grad.shape() != p->value.shape()) p->grad = Tensor<T>(p->value.shape());
    xt::noalias(p->grad.flat()) += gradient->flat();
  }
}
// [docs:end]

template <class T>
std::vector<std::pair<Parameter<T>*, const Tensor<T>*>> Tape<T>::parameter_gradients() const {
  std::vector<std::pair<Parameter<T>*, const Tensor<T>*>> gradients;
  for (const Node<T>& n : nodes_) {
    if (n.param != nullptr && n.has_grad) gradients.emplace_back(n.param, &n.grad);
  }
  return gradients;
}

template <class T>
void Tape<T>::clear() {
  nodes_.clear();
  edges_.clear();
  param_nodes_.clear();
  ++generation_;
}

template <class T>
void Tape<T>::truncate(std::size_t size) {
  if (size >= nodes_.size()) return;
  nodes_.resize(size);
  edges_.resize(size == 0 ? 0 : nodes_.back().first_input + nodes_.back().input_count);
  for (auto it = param_nodes_.begin(); it != param_nodes_.end();) {
    it = it->second >= size ? param_nodes_.erase(it) : std::next(it);
  }
  ++generation_;  // nodes made from now on take the dropped ones' indices: their old handles must not reach them
}

template <class T>
std::vector<Variable<T>> Tape<T>::truncate_keeping(std::size_t size, const std::vector<Variable<T>>& keep) {
  std::vector<Tensor<T>> values(keep.size());
  std::vector<std::size_t> same(keep.size(), keep.size());  // keep[i] is the node of keep[same[i]], seen before
  for (std::size_t i = 0; i < keep.size(); ++i) {
    check(keep[i], "truncate_keeping");
    const std::uint32_t index = keep[i].index();
    if (index < size) continue;
    for (std::size_t j = 0; j < i && same[i] == keep.size(); ++j) {
      if (keep[j].index() == index) same[i] = j;
    }
    if (same[i] != keep.size()) continue;
    Node<T>& node = nodes_[index];
    values[i] = node.param ? Tensor<T>(node.param->value) : std::move(node.value);
  }
  truncate(size);
  std::vector<Variable<T>> result(keep.size());
  for (std::size_t i = 0; i < keep.size(); ++i) {
    if (keep[i].index() < size) {
      result[i] = keep[i];
    } else {
      result[i] = same[i] != keep.size() ? result[same[i]] : constant(std::move(values[i]));
    }
  }
  return result;
}

// ---- free functions ----------------------------------------------------------------------------------------------

template <class T>
Tape<T>& tape_of(const char* op, std::initializer_list<const Variable<T>*> inputs) {
  Tape<T>* tape = nullptr;
  for (const Variable<T>* v : inputs) {
    if (v->empty()) throw std::logic_error(std::string(op) + ": empty Variable (default-constructed, never assigned)");
    if (tape == nullptr) tape = v->owner();
    tape->check(*v, op);
  }
  return *tape;
}

template <class T>
Variable<T> detach(const Variable<T>& x) {
  Tape<T>& tape = tape_of("detach", {&x});
  return tape.constant(x.value());
}

#define ATTEND_INSTANTIATE(T)                                                           \
  template class Variable<T>;                                                           \
  template class BackwardContext<T>;                                                    \
  template class Tape<T>;                                                               \
  template Tape<T>& tape_of<T>(const char*, std::initializer_list<const Variable<T>*>); \
  template Variable<T> detach<T>(const Variable<T>&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
