// Looking at values and graphs as text: a tensor printed as NumPy prints it, a tape listed one node a line, and a tape
// drawn as a Graphviz graph (micrograd's draw_dot in C++). Chapter 1 prints its tape and draws it. Nothing here is
// part of the engine: it reads a tape through its public accessors (Tape::node, value_of, input_of).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tape.hpp"

namespace attend {

// Prints t as NumPy does, nested brackets row by row, then its shape — "[[1, 2, 3],\n [4, 5, 6]] (2,3)" — and a
// scalar as its value; past 1,000 elements every axis shows its first and last three entries around "...". For
// float, double, Ids and Mask.
template <class T>
std::ostream& operator<<(std::ostream& out, const Tensor<T>& t);

// One line per node: index, op, inputs, shape, and (after backward) whether a gradient arrived —
// "%3  mul(%0, %1)   ()   value=-1.2   grad=0.5" (a scalar shows its value and gradient).
template <class T>
void print(const Tape<T>& tape, std::ostream& out);

// The recorded graph in Graphviz's DOT language (`dot -Tsvg graph.dot > graph.svg` draws it): one box per node with
// its number, op and shape, and for tensors of at most `max_elements` elements their values and, after backward, their
// gradients; an arrow from each input to the op that reads it. Leaves and parameters are drawn filled, constants
// dashed. `names` labels the nodes of some variables ("%0 w (leaf)").
template <class T>
void write_dot(const Tape<T>& tape, std::ostream& out, std::size_t max_elements = 4,
               const std::vector<std::pair<Variable<T>, std::string>>& names = {});

}  // namespace attend
