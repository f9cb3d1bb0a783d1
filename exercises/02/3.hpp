// Exercise 2.3 — a deeper encoder: its parameters, counted and named (docs/02-encoder.md, "Exercises").
//
// Give chapter 2's encoder config.rnn.num_layers = 3 and config.rnn.dropout = 0.5. How many parameters does it have
// (encoder.parameter_count(): every number of every weight matrix and bias vector), and how do the names in
// encoder.parameters() tell the layers apart? Predict both from the configuration alone, without building an encoder:
//   parameter_count  a formula in V, E, H, the number of layers L, D (2 when config.rnn.bidirectional, else 1) and G,
//                    the cell's number of stacked gates (RNN 1, GRU 3, LSTM 4): (2.1)'s table E, then each layer's
//                    W_ih (G·H, in), W_hh (G·H, H), b_ih and b_hh (G·H) in each direction, where `in` is what that
//                    layer reads;
//   parameter_table  every parameter's name and shape, in the order encoder.parameters() lists them: "embedding.W",
//                    then for each layer l = 0 … L−1 and each direction ("forward", then "backward" when there are
//                    two) the names "rnn.layers.<l>.<direction>.<W_ih|W_hh|b_ih|b_hh>" (nn/recurrent.hpp).
// The check builds the encoder and compares, for the configuration above and for others.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <string>
#include <utility>
#include <vector>

#include "nn/recurrent.hpp"

namespace yours {

// The number of scalar parameters of nn::Encoder<double>(config, rng), from the configuration alone.
std::size_t parameter_count(const attend::nn::EncoderConfig& config);
// (name, shape) of every parameter, in encoder.parameters()'s order, from the configuration alone.
std::vector<std::pair<std::string, attend::Shape>> parameter_table(const attend::nn::EncoderConfig& config);

}  // namespace yours
