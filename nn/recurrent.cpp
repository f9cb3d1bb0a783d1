// The recurrent cells, the recurrent stack over padded batches and the Encoder (recurrent.hpp). A step is one linear
// for the state part of the gates and then, for the GRU and LSTM, one fused op for the rest of the step (gru_cell,
// lstm_cell: one tape node with a hand-written backward); gru_step_composed and lstm_step_composed write the same step
// with the small ops and are tested equal. The input part of the gates is computed for all steps at once (one linear
// per layer and direction). RecurrentStack runs a GRU or LSTM layer as one node over all steps (gru_sequence,
// lstm_sequence in ops/recurrence.cpp: the same cell code, padded steps keep the state); the RNN step by step.
#include "nn/recurrent.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace attend::nn {

// ---- the cells --------------------------------------------------------------------------------------------------

template <class T>
RecurrentCell<T>::RecurrentCell(const char* name, std::size_t input_size, std::size_t hidden_size,
                                std::size_t gate_count, Rng& rng, Init init)
    : name_(name) {
  if (input_size == 0 || hidden_size == 0) {
    throw std::invalid_argument(std::string(name) + ": input_size " + std::to_string(input_size) + " and hidden_size " +
                                std::to_string(hidden_size) + " must be positive");
  }
  const std::size_t rows = gate_count * hidden_size;
  if (init == Init::xavier_uniform) {
    W_ih = Parameter<T>(uniform_init<T>({rows, input_size}, xavier_bound(input_size, rows), rng));
    W_hh = Parameter<T>(uniform_init<T>({rows, hidden_size}, xavier_bound(hidden_size, rows), rng));
    b_ih = Parameter<T>(Tensor<T>(Shape{rows}));
    b_hh = Parameter<T>(Tensor<T>(Shape{rows}));
  } else {
    // PyTorch: every parameter of a recurrent cell ~ U(-1/√H, 1/√H), drawn in the order weight_ih, weight_hh, bias_ih,
    // bias_hh
    const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
    W_ih = Parameter<T>(uniform_init<T>({rows, input_size}, bound, rng));
    W_hh = Parameter<T>(uniform_init<T>({rows, hidden_size}, bound, rng));
    b_ih = Parameter<T>(uniform_init<T>({rows}, bound, rng));
    b_hh = Parameter<T>(uniform_init<T>({rows}, bound, rng));
  }
}

template <class T>
Variable<T> RecurrentCell<T>::input_gates(const Variable<T>& x) {
  Tape<T>& tape = tape_of(name_, {&x});
  return dense(x, tape.param(W_ih), tape.param(b_ih));
}

template <class T>
void RecurrentCell<T>::visit(ModuleVisitor<T>& v) {
  v.parameter("W_ih", W_ih);
  v.parameter("W_hh", W_hh);
  v.parameter("b_ih", b_ih);
  v.parameter("b_hh", b_hh);
}

template <class T>
void RecurrentCell<T>::check_step(const Variable<T>& gx, std::initializer_list<const Variable<T>*> states) const {
  const std::size_t H = hidden_size(), rows = W_ih.value.shape()[0];
  const Shape& gs = gx.shape();
  bool ok = gs.rank() == 2 && gs[1] == rows;
  for (const Variable<T>* s : states) ok = ok && s->shape().rank() == 2 && s->shape()[0] == gs[0] && s->shape()[1] == H;
  if (!ok) {
    std::string got = "input gates " + to_string(gs);
    for (const Variable<T>* s : states) got += ", state " + to_string(s->shape());
    throw std::invalid_argument(std::string(name_) + ": " + got + "; expected input gates (batch, " +
                                std::to_string(rows) + ") and states (batch, " + std::to_string(H) + ")");
  }
}

template <class T>
RnnCell<T>::RnnCell(std::size_t input_size, std::size_t hidden_size, Rng& rng, Nonlinearity nonlinearity, Init init)
    : RecurrentCell<T>("RnnCell", input_size, hidden_size, 1, rng, init), nonlinearity_(nonlinearity) {}

template <class T>
Variable<T> RnnCell<T>::forward(const Variable<T>& x, const Variable<T>& h) {
  return step(this->input_gates(x), h);
}

template <class T>
Variable<T> RnnCell<T>::step(const Variable<T>& gx, const Variable<T>& h) {
  Tape<T>& tape = tape_of("RnnCell", {&gx, &h});
  this->check_step(gx, {&h});
  // a = (W x + b_ih) + (U h + b_hh): (batch, H)
  const Variable<T> a = gx + dense(h, tape.param(this->W_hh), tape.param(this->b_hh));
  // h' = φ(a)
  return nonlinearity_ == Nonlinearity::tanh ? tanh(a) : relu(a);
}

template <class T>
GruCell<T>::GruCell(std::size_t input_size, std::size_t hidden_size, Rng& rng, Init init)
    : RecurrentCell<T>("GruCell", input_size, hidden_size, 3, rng, init) {}

template <class T>
Variable<T> GruCell<T>::forward(const Variable<T>& x, const Variable<T>& h) {
  return step(this->input_gates(x), h);
}

template <class T>
Variable<T> GruCell<T>::step(const Variable<T>& gx, const Variable<T>& h) {
  Tape<T>& tape = tape_of("GruCell", {&gx, &h});
  this->check_step(gx, {&h});
  // gh = [U_r h + b_hr, U_z h + b_hz, U_n h + b_hn]: (batch, 3H)
  const Variable<T> gh = dense(h, tape.param(this->W_hh), tape.param(this->b_hh));
  // the rest of the step in one node (gru_step_composed writes it op by op):
  //   r = σ(gx_r + gh_r), z = σ(gx_z + gh_z), n = tanh(gx_n + r ⊙ gh_n), h' = n + z ⊙ (h - n)
  return gru_cell(gx, gh, h);
}

template <class T>
LstmCell<T>::LstmCell(std::size_t input_size, std::size_t hidden_size, Rng& rng, Init init)
    : RecurrentCell<T>("LstmCell", input_size, hidden_size, 4, rng, init) {}

template <class T>
LstmState<T> LstmCell<T>::forward(const Variable<T>& x, const LstmState<T>& state) {
  return step(this->input_gates(x), state);
}

template <class T>
LstmState<T> LstmCell<T>::step(const Variable<T>& gx, const LstmState<T>& state) {
  Tape<T>& tape = tape_of("LstmCell", {&gx, &state.h, &state.c});
  this->check_step(gx, {&state.h, &state.c});
  // gh = U h + b_hh for the four gates: (batch, 4H) in the order i, f, g, o
  const Variable<T> gh = dense(state.h, tape.param(this->W_hh), tape.param(this->b_hh));
  // the rest of the step in one node (lstm_step_composed writes it op by op), y = [h', c']: (2, batch, H)
  //   i, f, o = σ(gx + gh), g = tanh(gx + gh) (their parts), c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c')
  return hidden_and_cell(lstm_cell(gx, gh, state.c));
}

// ---- the recurrent stack ----------------------------------------------------------------------------------------

std::string to_string(CellKind kind) {
  switch (kind) {
    case CellKind::rnn_tanh:
      return "rnn_tanh";
    case CellKind::rnn_relu:
      return "rnn_relu";
    case CellKind::gru:
      return "gru";
    case CellKind::lstm:
      return "lstm";
  }
  return "unknown";
}

CellKind cell_kind_from_string(const std::string& name) {
  for (CellKind kind : {CellKind::rnn_tanh, CellKind::rnn_relu, CellKind::gru, CellKind::lstm}) {
    if (to_string(kind) == name) return kind;
  }
  throw std::invalid_argument("cell kind \"" + name + "\" is not one of rnn_tanh, rnn_relu, gru, lstm");
}

template <class T>
AnyCell<T> make_cell(CellKind kind, std::size_t input_size, std::size_t hidden_size, Rng& rng, Init init) {
  switch (kind) {
    case CellKind::rnn_tanh:
      return RnnCell<T>(input_size, hidden_size, rng, Nonlinearity::tanh, init);
    case CellKind::rnn_relu:
      return RnnCell<T>(input_size, hidden_size, rng, Nonlinearity::relu, init);
    case CellKind::gru:
      return GruCell<T>(input_size, hidden_size, rng, init);
    case CellKind::lstm:
      return LstmCell<T>(input_size, hidden_size, rng, init);
  }
  throw std::invalid_argument("make_cell: unknown cell kind");
}

template <class T>
LstmState<T> cell_forward(AnyCell<T>& cell, const Variable<T>& x, const LstmState<T>& state) {
  if (auto* lstm = std::get_if<LstmCell<T>>(&cell)) return lstm->forward(x, state);
  if (auto* gru = std::get_if<GruCell<T>>(&cell)) return {gru->forward(x, state.h), {}};
  return {std::get<RnnCell<T>>(cell).forward(x, state.h), {}};
}

namespace {

// Throws std::invalid_argument naming `module` unless there is one length per sequence, each in [1, time].
void check_lengths(const char* module, const std::vector<std::int64_t>& lengths, std::size_t batch, std::size_t time) {
  if (lengths.size() != batch) {
    throw std::invalid_argument(std::string(module) + ": " + std::to_string(lengths.size()) +
                                " lengths for a batch of " + std::to_string(batch) + " sequences");
  }
  for (std::size_t b = 0; b < batch; ++b) {
    if (lengths[b] < 1 || lengths[b] > static_cast<std::int64_t>(time)) {
      throw std::invalid_argument(std::string(module) + ": length " + std::to_string(lengths[b]) + " of sequence " +
                                  std::to_string(b) + " is outside [1, " + std::to_string(time) + "]");
    }
  }
}

template <class T>
RecurrentCell<T>& base_of(typename RecurrentStack<T>::Cell& cell) {
  return std::visit([](auto& c) -> RecurrentCell<T>& { return c; }, cell);
}

// One step of any cell from precomputed input gates; c is used and returned by the LSTM only.
template <class T>
LstmState<T> step_of(typename RecurrentStack<T>::Cell& cell, const Variable<T>& gx, const LstmState<T>& state) {
  if (auto* lstm = std::get_if<LstmCell<T>>(&cell)) return lstm->step(gx, state);
  if (auto* gru = std::get_if<GruCell<T>>(&cell)) return {gru->step(gx, state.h), {}};
  return {std::get<RnnCell<T>>(cell).step(gx, state.h), {}};
}

// The masks of the padded steps: keep[t] = m_t and drop[t] = 1 - m_t as (batch, 1) constants, m_t[b] = [t < length_b];
// both empty for the steps where no sequence is padded, and for every step unless per_step (only the RNN cell's
// step-by-step loop uses them). `all` is m as (batch, time, 1), empty when nothing is padded.
template <class T>
struct StepMasks {
  std::vector<Variable<T>> keep, drop;
  Variable<T> all;
};

template <class T>
StepMasks<T> step_masks(Tape<T>& tape, const std::vector<std::int64_t>& lengths, std::size_t time, bool per_step) {
  const std::size_t batch = lengths.size();
  StepMasks<T> masks;
  masks.keep.resize(time);
  masks.drop.resize(time);
  const auto shortest = static_cast<std::size_t>(*std::min_element(lengths.begin(), lengths.end()));
  if (shortest == time) return masks;
  Tensor<T> all(Shape{batch, time, 1});
  for (std::size_t b = 0; b < batch; ++b) {
    std::fill(all.data() + b * time, all.data() + b * time + static_cast<std::size_t>(lengths[b]), T(1));
  }
  for (std::size_t t = per_step ? shortest : time; t < time; ++t) {
    Tensor<T> keep(Shape{batch, 1}), drop(Shape{batch, 1});
    for (std::size_t b = 0; b < batch; ++b) {
      keep.data()[b] = all.data()[b * time + t];
      drop.data()[b] = T(1) - keep.data()[b];
    }
    masks.keep[t] = tape.constant(std::move(keep));
    masks.drop[t] = tape.constant(std::move(drop));
  }
  masks.all = tape.constant(std::move(all));
  return masks;
}

RecurrentConfig checked(const RecurrentConfig& config) {
  if (config.num_layers == 0) throw std::invalid_argument("RecurrentStack: num_layers must be at least 1");
  if (!(config.dropout >= 0.0 && config.dropout <= 1.0)) {
    throw std::invalid_argument("RecurrentStack: dropout " + std::to_string(config.dropout) + " is outside [0, 1]");
  }
  return config;
}

}  // namespace

template <class T>
RecurrentStack<T>::RecurrentStack(const RecurrentConfig& config, Rng& rng)
    : config_(checked(config)), dropout_rng_(config.dropout_seed) {
  // Initialised in PyTorch's parameter order: layer by layer, the forward direction before the backward one.
  for (std::size_t layer = 0; layer < config_.num_layers; ++layer) {
    const std::size_t in = layer == 0 ? config_.input_size : output_size();
    cells.emplace_back();
    for (std::size_t d = 0; d < directions(); ++d) {
      cells.back().push_back(make_cell<T>(config_.cell, in, config_.hidden_size, rng, config_.init));
    }
  }
}

template <class T>
RecurrentOutput<T> RecurrentStack<T>::forward(const Variable<T>& x) {
  tape_of("RecurrentStack", {&x});
  const Shape& xs = x.shape();
  const std::size_t batch = xs.rank() == 3 ? xs[0] : 0, time = xs.rank() == 3 ? xs[1] : 0;
  return forward(x, std::vector<std::int64_t>(batch, static_cast<std::int64_t>(time)));
}

template <class T>
RecurrentOutput<T> RecurrentStack<T>::forward(const Variable<T>& x, const std::vector<std::int64_t>& lengths) {
  Tape<T>& tape = tape_of("RecurrentStack", {&x});
  const Shape xs = x.shape();
  if (xs.rank() != 3 || xs[2] != config_.input_size || xs[0] == 0 || xs[1] == 0) {
    throw std::invalid_argument("RecurrentStack: input of shape " + to_string(xs) + "; expected (batch, time, " +
                                std::to_string(config_.input_size) + ") with batch and time at least 1");
  }
  const std::size_t batch = xs[0], time = xs[1], H = config_.hidden_size, D = directions();
  check_lengths("RecurrentStack", lengths, batch, time);
  // keep/drop per step only for the RNN cell's loop; gru_sequence and lstm_sequence take the lengths themselves
  const bool rnn = config_.cell == CellKind::rnn_tanh || config_.cell == CellKind::rnn_relu;
  const StepMasks<T> masks = step_masks(tape, lengths, time, rnn);
  const Variable<T> zeros = tape.constant(Tensor<T>(Shape{batch, H}));  // h_0 (and c_0) of every direction

  RecurrentOutput<T> result;
  Variable<T> input = x;  // the current layer's input: (batch, time, in)
  for (std::size_t layer = 0; layer < config_.num_layers; ++layer) {
    std::vector<Variable<T>> direction_outputs;
    for (std::size_t d = 0; d < D; ++d) {
      Cell& cell = cells[layer][d];
      // precomputed: gx = input W_ihᵀ + b_ih for every step with one gemm, (batch, time, G·H)
      const Variable<T> gx = base_of<T>(cell).input_gates(input);
      const bool lstm = std::holds_alternative<LstmCell<T>>(cell);
      if (lstm || std::holds_alternative<GruCell<T>>(cell)) {
        // the whole recurrence in one node (ops.hpp: gru_sequence, lstm_sequence): the same steps, with the padded
        // steps keeping the state as below, and one gemm for dW_hh over all steps in backward
        RecurrentCell<T>& base = base_of<T>(cell);
        const Recurrence recurrence{masks.all.empty() ? std::vector<std::int64_t>{} : lengths, d == 1};
        const Variable<T> W_hh = tape.param(base.W_hh), b_hh = tape.param(base.b_hh);
        // the final state: after the last step for the forward direction, after step 0 for the backward one
        const std::size_t last = d == 0 ? time - 1 : 0;
        if (lstm) {
          const Variable<T> hc = lstm_sequence(gx, W_hh, b_hh, zeros, zeros, recurrence);  // (2, batch, time, H)
          const Variable<T> hs = select(hc, 0, 0);
          result.h_final.push_back(select(hs, 1, last));
          result.c_final.push_back(select(select(hc, 0, 1), 1, last));
          direction_outputs.push_back(hs);
        } else {
          const Variable<T> hs = gru_sequence(gx, W_hh, b_hh, zeros, recurrence);  // (batch, time, H)
          result.h_final.push_back(select(hs, 1, last));
          direction_outputs.push_back(hs);
        }
        continue;
      }
      LstmState<T> state{zeros, Variable<T>{}};
      std::vector<Variable<T>> hs(time);  // the state at each step t, (batch, H)
      for (std::size_t s = 0; s < time; ++s) {
        const std::size_t t = d == 0 ? s : time - 1 - s;
        LstmState<T> next = step_of<T>(cell, select(gx, 1, t), state);
        if (!masks.keep[t].empty()) {
          // h_t = m_t ⊙ h_new + (1 - m_t) ⊙ h_{t-1}: exact for m_t ∈ {0, 1}, so a padded step keeps the state
          next.h = masks.keep[t] * next.h + masks.drop[t] * state.h;
          if (lstm) next.c = masks.keep[t] * next.c + masks.drop[t] * state.c;
        }
        state = next;
        hs[t] = state.h;
      }
      result.h_final.push_back(state.h);
      if (lstm) result.c_final.push_back(state.c);
      // (batch, time, H)
      direction_outputs.push_back(stack(hs, 1));
    }
    // [h→_t ; h←_t]: (batch, time, D·H)
    input = D == 1 ? direction_outputs[0] : concat(direction_outputs, 2);
    if (layer + 1 < config_.num_layers) {
      input = dropout(input, config_.dropout, this->training(), dropout_rng_.on(input.tape()));
    }
  }
  // Padded steps: the forward direction carried its last state through them; the output there is exactly 0.
  result.outputs = masks.all.empty() ? input : input * masks.all;
  return result;
}

template <class T>
void RecurrentStack<T>::visit(ModuleVisitor<T>& v) {
  static const char* const direction_names[] = {"forward", "backward"};
  for (std::size_t layer = 0; layer < cells.size(); ++layer) {
    for (std::size_t d = 0; d < cells[layer].size(); ++d) {
      v.module("layers." + std::to_string(layer) + "." + direction_names[d], base_of<T>(cells[layer][d]));
    }
  }
  v.generator("dropout", dropout_rng_.state());
}

// ---- the encoder ------------------------------------------------------------------------------------------------

namespace {

RecurrentConfig encoder_rnn_config(const EncoderConfig& config) {
  if (config.rnn.input_size != 0 && config.rnn.input_size != config.embedding_dim) {
    throw std::invalid_argument("Encoder: rnn.input_size " + std::to_string(config.rnn.input_size) +
                                " differs from embedding_dim " + std::to_string(config.embedding_dim));
  }
  RecurrentConfig rnn = config.rnn;
  rnn.input_size = config.embedding_dim;
  return rnn;
}

}  // namespace

template <class T>
Encoder<T>::Encoder(const EncoderConfig& config, Rng& rng)
    : embedding(config.vocab_size, config.embedding_dim, rng, config.padding_id),
      rnn(encoder_rnn_config(config), rng) {}

template <class T>
RecurrentOutput<T> Encoder<T>::forward(Tape<T>& tape, const Ids& ids, const std::vector<std::int64_t>& lengths) {
  if (ids.rank() != 2 || ids.shape()[0] == 0 || ids.shape()[1] == 0) {
    throw std::invalid_argument("Encoder: ids of shape " + to_string(ids.shape()) +
                                "; expected (batch, time) with batch and time at least 1");
  }
  const std::size_t batch = ids.shape()[0], time = ids.shape()[1];
  check_lengths("Encoder", lengths, batch, time);
  const auto vocab = static_cast<std::int64_t>(embedding.W.value.shape()[0]);
  for (std::size_t n = 0; n < ids.size(); ++n) {
    const std::int64_t id = ids.data()[n];
    if (id < 0 || id >= vocab) {
      throw std::invalid_argument("Encoder: id " + std::to_string(id) + " at (" + std::to_string(n / time) + ", " +
                                  std::to_string(n % time) + ") is outside the vocabulary [0, " +
                                  std::to_string(vocab) + ")");
    }
  }
  // e: (batch, time, embedding_dim)
  const Variable<T> e = embedding(tape, ids);
  return rnn.forward(e, lengths);
}

template <class T>
void Encoder<T>::visit(ModuleVisitor<T>& v) {
  v.module("embedding", embedding);
  v.module("rnn", rnn);
}

template class RecurrentCell<float>;
template class RecurrentCell<double>;
template class RnnCell<float>;
template class RnnCell<double>;
template class GruCell<float>;
template class GruCell<double>;
template class LstmCell<float>;
template class LstmCell<double>;
template class RecurrentStack<float>;
template AnyCell<float> make_cell<float>(CellKind, std::size_t, std::size_t, Rng&, Init);
template AnyCell<double> make_cell<double>(CellKind, std::size_t, std::size_t, Rng&, Init);
template LstmState<float> cell_forward<float>(AnyCell<float>&, const Variable<float>&, const LstmState<float>&);
template LstmState<double> cell_forward<double>(AnyCell<double>&, const Variable<double>&, const LstmState<double>&);
template class RecurrentStack<double>;
template class Encoder<float>;
template class Encoder<double>;

}  // namespace attend::nn
