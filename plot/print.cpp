// Tensors and tapes as text (print.hpp).
#include "plot/print.hpp"

#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>

namespace attend {

namespace {

// Elements [offset, offset + shape[axis] · stride) of axis `axis` and below, nested in brackets as NumPy prints them;
// an axis longer than 2·edge + 1 in a tensor of more than 1,000 elements shows its first and last `edge` entries
// around "...".
template <class T>
void print_axis(std::ostream& out, const T* data, const Shape& shape, std::size_t axis, std::size_t edge) {
  std::size_t stride = 1;
  for (std::size_t a = axis + 1; a < shape.rank(); ++a) stride *= shape[a];
  const std::size_t n = shape[axis];
  const bool last = axis + 1 == shape.rank();
  const std::string gap = last ? ", " : ",\n" + std::string(axis + 1, ' ');
  out << "[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) out << gap;
    if (edge > 0 && n > 2 * edge + 1 && i == edge) {
      out << "..." << gap;
      i = n - edge;
    }
    if (last) {
      out << +data[i];  // + prints a uint8_t mask element as a number
    } else {
      print_axis(out, data + i * stride, shape, axis + 1, edge);
    }
  }
  out << "]";
}

}  // namespace

template <class T>
std::ostream& operator<<(std::ostream& out, const Tensor<T>& t) {
  if (t.rank() == 0) return out << +t.data()[0];
  print_axis(out, t.data(), t.shape(), 0, t.size() > 1000 ? 3 : 0);
  return out << " " << to_string(t.shape());
}

template <class T>
void print(const Tape<T>& tape, std::ostream& out) {
  // "%3  mul(%0, %1)   ()   value=-1.2   grad=0.5": scalars show their value and, after backward, their gradient
  auto number = [](T v) {
    std::ostringstream s;
    s << std::setprecision(6) << v;
    return s.str();
  };
  for (std::uint32_t i = 0; i < tape.size(); ++i) {
    const Node<T>& n = tape.node(i);
    std::string call = n.op;
    if (n.input_count > 0) {
      call += "(";
      for (std::uint32_t k = 0; k < n.input_count; ++k) call += (k ? ", %" : "%") + std::to_string(tape.input_of(i, k));
      call += ")";
    }
    const Tensor<T>& v = tape.value_of(i);
    std::ostringstream line;
    line << std::left << std::setw(5) << ("%" + std::to_string(i)) << std::setw(22) << call << std::setw(8)
         << to_string(v.shape());
    if (v.size() == 1) line << std::setw(18) << ("value=" + number(v.data()[0]));
    if (n.has_grad)
      line << (v.size() == 1 ? "grad=" + number(n.grad.data()[0]) : std::string("grad set"));
    else if (!n.requires_grad)
      line << "(no grad)";
    std::string text = line.str();
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << "\n";
  }
}

template <class T>
void write_dot(const Tape<T>& tape, std::ostream& out, std::size_t max_elements,
               const std::vector<std::pair<Variable<T>, std::string>>& names) {
  // "[0.5, -1]": the elements of a small tensor, in order
  auto elements = [](const Tensor<T>& t) {
    std::ostringstream s;
    s << std::setprecision(4) << "[";
    for (std::size_t k = 0; k < t.size(); ++k) s << (k ? ", " : "") << t.data()[k];
    s << "]";
    return s.str();
  };
  out << "digraph tape {\n  rankdir=LR;\n  node [shape=record, fontname=\"Helvetica\", fontsize=11];\n";
  for (std::uint32_t i = 0; i < tape.size(); ++i) {
    const Node<T>& n = tape.node(i);
    const Tensor<T>& v = tape.value_of(i);
    std::string name;
    for (const auto& [variable, text] : names)
      if (variable.owner() == &tape && variable.index() == i) name = text;
    const std::string op_text = name.empty() ? std::string(n.op) : name + " (" + n.op + ")";
    std::string label = "%" + std::to_string(i) + " " + op_text + " | " + to_string(v.shape());
    if (v.size() <= max_elements) {
      label += " | value " + elements(v);
      if (n.has_grad) label += " | grad " + elements(n.grad);
    }
    // a record label treats these as structure: escape them
    std::string escaped;
    for (const char c : label) {
      if (c == '{' || c == '}' || c == '<' || c == '>' || c == '"' || c == '[' || c == ']') escaped += '\\';
      escaped += c;
    }
    const std::string op = n.op;
    const char* style = op == "leaf" || op == "param" ? ", style=filled, fillcolor=\"#dde8f5\""
                        : op == "constant"            ? ", style=dashed"
                                                      : "";
    // left to right, a record's fields stack top to bottom: op, shape, value, gradient
    out << "  n" << i << " [label=\"" << escaped << "\"" << style << "];\n";
    for (std::uint32_t k = 0; k < n.input_count; ++k) out << "  n" << tape.input_of(i, k) << " -> n" << i << ";\n";
  }
  out << "}\n";
}

#define ATTEND_INSTANTIATE(T)                                         \
  template void print(const Tape<T>&, std::ostream&);                 \
  template void write_dot(const Tape<T>&, std::ostream&, std::size_t, \
                          const std::vector<std::pair<Variable<T>, std::string>>&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

template std::ostream& operator<<(std::ostream&, const Tensor<float>&);
template std::ostream& operator<<(std::ostream&, const Tensor<double>&);
template std::ostream& operator<<(std::ostream&, const Tensor<std::int64_t>&);
template std::ostream& operator<<(std::ostream&, const Tensor<std::uint8_t>&);

}  // namespace attend
