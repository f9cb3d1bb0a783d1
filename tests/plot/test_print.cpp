// Tests of tensors and tapes as text (plot/print.hpp): a tensor prints as NumPy prints it, with its shape, for every
// element type; a tape lists every node with its inputs, value and gradient; its Graphviz graph has every node and
// edge, labels the named variables, and shows small values and gradients.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <sstream>
#include <string>

#include "autograd/autograd.hpp"
#include "plot/print.hpp"

using namespace attend;

// operator<<: NumPy's nested brackets and the shape, for every element type the library keeps in tensors
BOOST_AUTO_TEST_CASE(a_tensor_prints_as_numpy_does_with_its_shape) {
  const auto text = [](const auto& t) {
    std::ostringstream out;
    out << t;
    return out.str();
  };
  BOOST_TEST(text(Tensor<float>::scalar(2.5f)) == "2.5");
  BOOST_TEST(text(Tensor<double>(Shape{3}, {1.0, -0.5, 1e-7})) == "[1, -0.5, 1e-07] (3,)");
  BOOST_TEST(text(Tensor<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6})) == "[[1, 2, 3],\n [4, 5, 6]] (2,3)");
  BOOST_TEST(text(Tensor<double>(Shape{2, 1, 2}, {1, 2, 3, 4})) == "[[[1, 2]],\n [[3, 4]]] (2,1,2)");
  BOOST_TEST(text(Ids(Shape{2}, {7, -100})) == "[7, -100] (2,)");
  BOOST_TEST(text(Tensor<std::uint8_t>(Shape{3}, {1, 0, 1})) == "[1, 0, 1] (3,)");  // numbers, not characters
  BOOST_TEST(text(Tensor<float>()) == "[] (0,)");
  // past 1,000 elements: the first and last three of each axis around "..."
  Tensor<double> big(Shape{1001});
  for (std::size_t i = 0; i < big.size(); ++i) big.data()[i] = static_cast<double>(i);
  BOOST_TEST(text(big) == "[0, 1, 2, ..., 998, 999, 1000] (1001,)");
  Tensor<double> wide(Shape{2, 600});
  for (std::size_t i = 0; i < wide.size(); ++i) wide.data()[i] = static_cast<double>(i);
  BOOST_TEST(text(wide) == "[[0, 1, 2, ..., 597, 598, 599],\n [600, 601, 602, ..., 1197, 1198, 1199]] (2,600)");
}

BOOST_AUTO_TEST_CASE(print_lists_every_node) {
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>::scalar(0.5));
  Variable<double> y = tanh(x * x);
  tape.backward(y);
  std::ostringstream out;
  print(tape, out);
  const std::string text = out.str();
  BOOST_TEST(text.find("leaf") != std::string::npos);
  BOOST_TEST(text.find("mul") != std::string::npos);
  BOOST_TEST(text.find("tanh") != std::string::npos);
  BOOST_TEST(text.find("mul(%0, %0)") != std::string::npos);  // mul's two inputs are node 0
  BOOST_TEST(text.find("value=0.5") != std::string::npos);
  BOOST_TEST(text.find("grad=") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(write_dot_labels_named_variables) {
  Tape<double> tape;
  Variable<double> w = tape.leaf(Tensor<double>::scalar(2.0));
  Variable<double> x = tape.leaf(Tensor<double>::scalar(3.0));
  Variable<double> y = w * x;
  Tape<double> other;
  Variable<double> elsewhere = other.leaf(Tensor<double>::scalar(1.0));  // of another tape: names nothing here
  std::ostringstream out;
  write_dot(tape, out, 4, {{w, "w"}, {y, "y"}, {elsewhere, "z"}});
  const std::string dot = out.str();
  BOOST_TEST(dot.find("n0 [label=\"%0 w (leaf) | ()") != std::string::npos, dot);
  BOOST_TEST(dot.find("n1 [label=\"%1 leaf | ()") != std::string::npos, dot);  // x: no name given
  BOOST_TEST(dot.find("n2 [label=\"%2 y (mul) | ()") != std::string::npos, dot);
  BOOST_TEST(dot.find(" z ") == std::string::npos, dot);
}

BOOST_AUTO_TEST_CASE(write_dot_draws_every_node_and_edge) {
  // y = tanh(x·x + x) at x = 0.5, beside a constant: five edges (mul reads x twice, add reads mul and x, tanh add)
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>::scalar(0.5));
  Variable<double> c = tape.constant(Tensor<double>(Shape{2, 3}, 1.0));
  Variable<double> y = tanh(x * x + x);
  tape.backward(y);
  std::ostringstream out;
  write_dot(tape, out);
  const std::string dot = out.str();
  BOOST_TEST(dot.rfind("digraph tape {", 0) == 0u, dot);
  BOOST_TEST(dot.substr(dot.size() - 2) == "}\n");
  std::size_t edges = 0, nodes = 0;
  for (std::size_t at = dot.find(" -> "); at != std::string::npos; at = dot.find(" -> ", at + 1)) ++edges;
  for (std::size_t at = dot.find("[label="); at != std::string::npos; at = dot.find("[label=", at + 1)) ++nodes;
  BOOST_TEST(nodes == tape.size());
  BOOST_TEST(edges == 5u);
  BOOST_TEST(dot.find("n0 -> n2;\n  n0 -> n2;") != std::string::npos, dot);  // mul(%0, %0)
  BOOST_TEST(dot.find("n3 -> n4;") != std::string::npos, dot);               // tanh reads add
  // dy/dx = (1 − tanh²(0.75)) · (2x + 1) = 1.193…: value and gradient of the leaf; of the constant, 6 elements > 4,
  // the shape alone
  BOOST_TEST(dot.find("%0 leaf | () | value \\[0.5\\] | grad \\[1.193\\]") != std::string::npos, dot);
  BOOST_TEST(dot.find("%1 constant | (2,3)\"") != std::string::npos, dot);
  BOOST_TEST(dot.find("style=dashed") != std::string::npos);
  (void)c;
}
