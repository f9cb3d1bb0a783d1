// The check of exercise 2.3 (exercises/02/3.hpp): the predicted parameter count and table of names and shapes against
// an nn::Encoder built here from the same configuration (parameter_count() and parameters()), for chapter 2's encoder
// with three layers and dropout, and for other cells, sizes and directions.
#include "exercises/02/3.hpp"

#define yours reference
#include "exercises/02/3.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/untrained_encoder.hpp"

using namespace attend;

namespace {

nn::EncoderConfig configuration(std::size_t V, std::size_t E, std::size_t H, nn::CellKind cell, std::size_t layers,
                                bool bidirectional, double dropout) {
  nn::EncoderConfig config = exercise::encoder_config(V, E, H, cell);
  config.rnn.num_layers = layers;
  config.rnn.bidirectional = bidirectional;
  config.rnn.dropout = dropout;
  return config;
}

std::string row(const std::string& name, const Shape& shape) { return name + " " + to_string(shape); }

// The first row where the predicted table and the encoder's differ, or the agreement.
void compare_tables(exercise::Check& check, const std::string& name, const nn::EncoderConfig& config) {
  Rng rng(2);
  nn::Encoder<double> encoder(config, rng);
  const nn::NamedParameters<double> parameters = encoder.parameters();
  const std::vector<std::pair<std::string, Shape>> yours = yours::parameter_table(config);
  std::size_t first = 0;
  while (first < yours.size() && first < parameters.size() && yours[first].first == parameters[first].first &&
         yours[first].second == parameters[first].second->value.shape()) {
    ++first;
  }
  const bool same = first == yours.size() && first == parameters.size();
  std::string detail = std::to_string(yours.size()) + " rows, the encoder has " + std::to_string(parameters.size());
  if (!same) {
    detail +=
        "; row " + std::to_string(first) + ": yours " +
        (first < yours.size() ? row(yours[first].first, yours[first].second) : "(none)") + ", the encoder's " +
        (first < parameters.size() ? row(parameters[first].first, parameters[first].second->value.shape()) : "(none)");
  }
  check.that(same, name + ": your table = encoder.parameters(), name by name and shape by shape", detail);
  const std::size_t predicted = yours::parameter_count(config), counted = encoder.parameter_count();
  check.that(predicted == counted, name + ": your formula = encoder.parameter_count()",
             "yours " + std::to_string(predicted) + ", the encoder counts " + std::to_string(counted));
}

}  // namespace

int main() {
  exercise::Check check("2.3", "a deeper encoder: its parameters, counted and named");
  using nn::CellKind;
  const std::pair<const char*, nn::EncoderConfig> cases[] = {
      {"chapter 2's encoder, 3 GRU layers, dropout 0.5 (V = 6, E = 4, H = 3)",
       configuration(6, 4, 3, CellKind::gru, 3, false, 0.5)},
      {"another case: the same without dropout", configuration(6, 4, 3, CellKind::gru, 3, false, 0.0)},
      {"another case: 2 bidirectional LSTM layers (V = 14, E = 16, H = 8)",
       configuration(14, 16, 8, CellKind::lstm, 2, true, 0.2)},
      {"another case: 1 RNN layer (V = 30, E = 5, H = 7)", configuration(30, 5, 7, CellKind::rnn_tanh, 1, false, 0.0)},
      {"another case: 4 bidirectional GRU layers, H > E (V = 9, E = 2, H = 6)",
       configuration(9, 2, 6, CellKind::gru, 4, true, 0.5)},
  };
  for (const auto& [name, config] : cases) {
    check.run(name, [&, name = name, config = config] { compare_tables(check, name, config); });
  }
  check.run("the reference solution", [&] {
    const nn::EncoderConfig config = cases[0].second;
    check.that(yours::parameter_count(config) == reference::parameter_count(config),
               "chapter 2's encoder with 3 layers: your count = the reference's",
               "yours " + std::to_string(yours::parameter_count(config)) + ", the reference's " +
                   std::to_string(reference::parameter_count(config)));
  });
  return check.verdict();
}
