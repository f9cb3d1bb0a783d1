// Recurrent layers: the RNN (tanh or ReLU), GRU and LSTM cells; a stack of them run over a padded batch of sequences
// (1..N layers, one or two directions, dropout between layers), like torch.nn.RNN/GRU/LSTM over packed sequences; and
// the Encoder of the attention models, Embedding + that stack, whose hidden states h_1..h_Tx the attention decoders
// of later chapters read. Chapter: docs/02-encoder.md; API: docs/reference/nn.md.
//
// Notation. The equations follow the article: W_· multiplies the input x, U_· the previous state h, one letter per
// gate. The weight layout follows PyTorch, so a state_dict loads unchanged: the input weights of all gates are stacked
// row-wise in one matrix W_ih = [W_r; W_z; W_n] (gate order as PyTorch), the state weights in W_hh = [U_r; U_z; U_n],
// and there are two bias vectors b_ih, b_hh (PyTorch's weight_ih, weight_hh, bias_ih, bias_hh). G is the number of
// stacked gates (RNN 1, GRU 3, LSTM 4) and H the hidden size.
//
// Precomputed input gates: the input part x_t W_ihᵀ + b_ih of every gate does not depend on the state, so a sequence
// layer computes it for all time steps with one linear over (batch, time, in): one large gemm instead of T small
// ones. Each cell therefore offers input_gates(x) and a step(gx, h) that takes those precomputed gates; forward(x, h)
// is the two together, for use one step at a time (a decoder).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "nn/generator.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"
#include "ops/fused.hpp"

namespace attend::nn {

// What the three cells share: the four stacked parameters, their initialisation, and the input projection.
// W_ih: (G·H, in), W_hh: (G·H, H), b_ih: (G·H,), b_hh: (G·H,); rows g·H .. (g+1)·H - 1 belong to gate g.
// Initialisation: U(-1/√H, 1/√H) for all four (PyTorch's default), or Xavier/Glorot on each stacked matrix as
// torch.nn.init.xavier_uniform_ would (fan_out = G·H) with zero biases.
template <class T>
class RecurrentCell : public Module<T> {
 public:
  Parameter<T> W_ih;  // [W_gate for each gate], PyTorch weight_ih
  Parameter<T> W_hh;  // [U_gate for each gate], PyTorch weight_hh
  Parameter<T> b_ih;  // PyTorch bias_ih
  Parameter<T> b_hh;  // PyTorch bias_hh

  // gx = x W_ihᵀ + b_ih for x (batch, in) → (batch, G·H),
  // or for a whole sequence at once: (batch, time, in) → (batch, time, G·H).
  Variable<T> input_gates(const Variable<T>& x);
  void visit(ModuleVisitor<T>& v) override;
  std::size_t input_size() const { return W_ih.value.shape()[1]; }
  std::size_t hidden_size() const { return W_hh.value.shape()[1]; }
  std::size_t gate_count() const { return W_ih.value.shape()[0] / hidden_size(); }

 protected:
  RecurrentCell(const char* name, std::size_t input_size, std::size_t hidden_size, std::size_t gate_count, Rng& rng,
                Init init);
  // Throws std::invalid_argument naming the cell unless gx is (batch, G·H) and every state is (batch, H).
  void check_step(const Variable<T>& gx, std::initializer_list<const Variable<T>*> states) const;
  const char* name_;
};

enum class Nonlinearity { tanh, relu };

// The Elman RNN cell, as torch.nn.RNNCell (G = 1):
//   h' = φ(W x + b_ih + U h + b_hh),   φ = tanh or relu
// x: (batch, in), h: (batch, H) → h': (batch, H). W_ih = W (H, in), W_hh = U (H, H).
template <class T>
class RnnCell : public RecurrentCell<T> {
 public:
  RnnCell(std::size_t input_size, std::size_t hidden_size, Rng& rng, Nonlinearity nonlinearity = Nonlinearity::tanh,
          Init init = Init::pytorch_default);
  Variable<T> forward(const Variable<T>& x, const Variable<T>& h);
  Variable<T> operator()(const Variable<T>& x, const Variable<T>& h) { return forward(x, h); }
  // The same step from precomputed input gates gx = input_gates(x): (batch, H).
  Variable<T> step(const Variable<T>& gx, const Variable<T>& h);
  Nonlinearity nonlinearity() const { return nonlinearity_; }

 private:
  Nonlinearity nonlinearity_;
};

// The gated recurrent unit, as torch.nn.GRUCell (G = 3, gates r, z, n):
//   r  = σ(W_r x + b_ir + U_r h + b_hr)             reset gate
//   z  = σ(W_z x + b_iz + U_z h + b_hz)             update gate
//   n  = tanh(W_n x + b_in + r ⊙ (U_n h + b_hn))    candidate state
//   h' = (1 - z) ⊙ n + z ⊙ h  =  n + z ⊙ (h - n)
// x: (batch, in), h: (batch, H) → h': (batch, H).
// W_ih = [W_r; W_z; W_n] (3H, in), W_hh = [U_r; U_z; U_n] (3H, H),
// b_ih = [b_ir; b_iz; b_in], b_hh = [b_hr; b_hz; b_hn].
// Two conventions differ from some papers, and follow PyTorch (and Cho et al. 2014 for z): z is the share of the old
// state kept (Bahdanau et al.'s appendix writes (1 - z) s + z s̃, i.e. z and 1 - z swapped), and the reset gate
// multiplies U_n h + b_hn after the product instead of resetting h before it (Cho et al.'s U (r ⊙ h)).
template <class T>
class GruCell : public RecurrentCell<T> {
 public:
  GruCell(std::size_t input_size, std::size_t hidden_size, Rng& rng, Init init = Init::pytorch_default);
  Variable<T> forward(const Variable<T>& x, const Variable<T>& h);
  Variable<T> operator()(const Variable<T>& x, const Variable<T>& h) { return forward(x, h); }
  // The same step from precomputed input gates gx = input_gates(x): (batch, 3H).
  Variable<T> step(const Variable<T>& gx, const Variable<T>& h);
};

// The state an LSTM carries from step to step: the hidden state h and the memory cell c, both (batch, H). Declared with
// the ops (autograd/ops.hpp: lstm_step, hidden_and_cell return it too).
using attend::LstmState;

// The long short-term memory cell, as torch.nn.LSTMCell (G = 4, gates i, f, g, o):
//   i  = σ(W_i x + b_ii + U_i h + b_hi)       input gate
//   f  = σ(W_f x + b_if + U_f h + b_hf)       forget gate
//   g  = tanh(W_g x + b_ig + U_g h + b_hg)    candidate memory
//   o  = σ(W_o x + b_io + U_o h + b_ho)       output gate
//   c' = f ⊙ c + i ⊙ g
//   h' = o ⊙ tanh(c')
// x: (batch, in), h and c: (batch, H) → h', c': (batch, H).
// W_ih = [W_i; W_f; W_g; W_o] (4H, in), W_hh = [U_i; U_f; U_g; U_o] (4H, H), biases likewise (4H,).
template <class T>
class LstmCell : public RecurrentCell<T> {
 public:
  LstmCell(std::size_t input_size, std::size_t hidden_size, Rng& rng, Init init = Init::pytorch_default);
  LstmState<T> forward(const Variable<T>& x, const LstmState<T>& state);
  LstmState<T> operator()(const Variable<T>& x, const LstmState<T>& state) { return forward(x, state); }
  // The same step from precomputed input gates gx = input_gates(x): (batch, 4H).
  LstmState<T> step(const Variable<T>& gx, const LstmState<T>& state);
};

// Which cell a recurrent stack is made of. Names as in configuration files: "rnn_tanh", "rnn_relu", "gru", "lstm".
enum class CellKind { rnn_tanh, rnn_relu, gru, lstm };
std::string to_string(CellKind kind);
CellKind cell_kind_from_string(const std::string& name);  // throws std::invalid_argument for an unknown name

// Any one of the three cells, for layers that choose the cell at run time.
template <class T>
using AnyCell = std::variant<RnnCell<T>, GruCell<T>, LstmCell<T>>;

// A cell of the given kind: (input_size → hidden_size), initialised as its constructor does.
template <class T>
AnyCell<T> make_cell(CellKind kind, std::size_t input_size, std::size_t hidden_size, Rng& rng,
                     Init init = Init::pytorch_default);

// One step of any cell: state.c is read and returned by the LSTM only (empty for the others).
template <class T>
LstmState<T> cell_forward(AnyCell<T>& cell, const Variable<T>& x, const LstmState<T>& state);

struct RecurrentConfig {
  CellKind cell = CellKind::gru;
  std::size_t input_size = 0;
  std::size_t hidden_size = 0;
  std::size_t num_layers = 1;
  bool bidirectional = false;
  // Dropout probability on each layer's output except the last's (as PyTorch), in training mode only.
  double dropout = 0.0;
  Init init = Init::pytorch_default;
  std::uint64_t dropout_seed = 0;  // the stack owns its dropout generator, so a run is repeatable
};

// What a recurrent stack returns. D = 2 when bidirectional, else 1.
template <class T>
struct RecurrentOutput {
  // (batch, time, D·H): the last layer's states [h→_t ; h←_t] at every step; exactly 0 at padded steps (t ≥ length).
  Variable<T> outputs;
  // h_final[layer · D + direction]: (batch, H), each sequence's true final state: the forward direction's after its
  // last real token, the backward direction's after its first token. The order of PyTorch's h_n (L·D, batch, H).
  std::vector<Variable<T>> h_final;
  // The LSTM's memory cells in the same order (empty for the other cells), like PyTorch's c_n.
  std::vector<Variable<T>> c_final;
};

// A stack of recurrent layers over a padded batch, like torch.nn.RNN/GRU/LSTM(batch_first=True) over a
// pack_padded_sequence(enforce_sorted=False) batch:
//   layer 1 reads x_t, layer l > 1 reads layer l-1's [h→_t ; h←_t] (after dropout in training mode)
//   forward direction  h→_t = cell(x_t, h→_{t-1}),  t = 1 .. T, h→_0 = 0
//   backward direction h←_t = cell(x_t, h←_{t+1}),  t = T .. 1, h←_{T+1} = 0
// Padding: sequence b has lengths[b] real steps, then padding up to T. A padded step does not change the state:
//   h_t = m_t ⊙ cell(x_t, h_{t-1}) + (1 - m_t) ⊙ h_{t-1},   m_t (batch, 1) = [t < length_b], a constant
// (and the same for c), so the forward direction ends at each sequence's last real token and the backward direction
// starts there from h = 0. Steps where no sequence is padded skip the masking.
// x: (batch, time, input_size) with lengths (batch,), 1 ≤ length ≤ time → RecurrentOutput.
// Parameters are named "layers.<l>.<forward|backward>.<W_ih|W_hh|b_ih|b_hh>", which map to PyTorch's
// weight_ih_l<l>, weight_hh_l<l>, bias_ih_l<l>, bias_hh_l<l> (forward) and the same with the suffix "_reverse"
// (backward); layer l > 0 has W_ih of shape (G·H, D·H).
template <class T>
class RecurrentStack : public Module<T> {
 public:
  using Cell = AnyCell<T>;
  // cells[layer][direction]: direction 0 reads left to right, direction 1 (bidirectional only) right to left.
  std::vector<std::vector<Cell>> cells;

  RecurrentStack(const RecurrentConfig& config, Rng& rng);
  RecurrentOutput<T> forward(const Variable<T>& x, const std::vector<std::int64_t>& lengths);
  RecurrentOutput<T> forward(const Variable<T>& x);  // every sequence has all `time` steps
  void visit(ModuleVisitor<T>& v) override;
  const RecurrentConfig& config() const { return config_; }
  std::size_t directions() const { return config_.bidirectional ? 2 : 1; }
  std::size_t output_size() const { return directions() * config_.hidden_size; }  // D·H

 private:
  RecurrentConfig config_;
  RandomStream dropout_rng_;
};

struct EncoderConfig {
  std::size_t vocab_size = 0;
  std::size_t embedding_dim = 0;
  std::int64_t padding_id = 0;  // the id of padding tokens: its embedding row stays 0 and gets no gradient; -1: none
  RecurrentConfig rnn;          // rnn.input_size is embedding_dim (leave it 0 or set it equal)
};

// The encoder of the encoder–decoder models: each source token x_i becomes an embedding, and the recurrent stack
// turns the sequence into annotations h_i = f(x_i, h_{i-1}) (bidirectional: h_i = [h→_i ; h←_i]).
//   e = Embedding(ids)                    ids: (batch, time) → (batch, time, embedding_dim)
//   outputs, h_final, c_final = rnn(e, lengths)
// Parameters: "embedding.W" (PyTorch embedding.weight) and "rnn.layers.<l>.<direction>.<W_ih|W_hh|b_ih|b_hh>".
template <class T>
class Encoder : public Module<T> {
 public:
  Embedding<T> embedding;
  RecurrentStack<T> rnn;

  Encoder(const EncoderConfig& config, Rng& rng);
  // ids: (batch, time), every id in [0, vocab_size); lengths: (batch,), 1 ≤ length ≤ time.
  RecurrentOutput<T> forward(Tape<T>& tape, const Ids& ids, const std::vector<std::int64_t>& lengths);
  RecurrentOutput<T> operator()(Tape<T>& tape, const Ids& ids, const std::vector<std::int64_t>& lengths) {
    return forward(tape, ids, lengths);
  }
  void visit(ModuleVisitor<T>& v) override;
  std::size_t output_size() const { return rnn.output_size(); }
};

}  // namespace attend::nn
