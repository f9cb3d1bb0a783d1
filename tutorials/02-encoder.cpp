// Chapter 2 — the encoder (docs/02-encoder.md).
//
// An encoder reads a source sentence x_1..x_Tx one token at a time and keeps a hidden state, h_i = f(x_i, h_{i-1}).
// This program runs that recurrence on a tiny sentence with a GRU cell, step by step, checks one step against the
// GRU's equations computed by hand, then runs the same sentence through the library's Encoder with each of the three
// cells (RNN, GRU, LSTM) and prints the states. The fixed context vector of the basic encoder-decoder is the last
// state, c = h_Tx. Finally a padded batch shows that padding never changes a sentence's state, and a bidirectional
// encoder gives each token an annotation [h→_i ; h←_i]. Deterministic; exits with status 1 if a check fails.
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "nn/recurrent.hpp"
#include "tutorials/common.hpp"

using namespace attend;            // Tensor, Tape, Variable, Rng, and nn::, models::, data::, plot::
using namespace attend::tutorial;  // this folder's helpers (common.hpp)

namespace {

// The sentence's token ids, their embeddings x: (1, T_x, E), and the GRU's states h_1..h_Tx, each (1, H).
struct Loop {
  Ids tokens;
  Variable<double> x;
  std::vector<Variable<double>> h;
};

// (2.1)-(2.2): the embeddings of the sentence, then the GRU cell run over them one step at a time from h_0 = 0.
Loop run_the_loop(Tape<double>& tape, nn::Embedding<double>& embed, nn::GruCell<double>& gru,
                  const std::vector<std::int64_t>& ids) {
  const std::size_t T_x = ids.size(), H = gru.W_hh.value.shape()[1];
  // [docs:gru-loop]
  // (2.1)  x_i = E[w_i]: the embeddings of all tokens, (1, T_x, E)
  Ids tokens(Shape{1, T_x});
  for (std::size_t i = 0; i < T_x; ++i) tokens.data()[i] = ids[i];
  const Variable<double> x = embed(tape, tokens);
  // (2.2)  h_i = f(x_i, h_{i-1}), starting from h_0 = 0
  Variable<double> h_prev = tape.constant(Tensor<double>(Shape{1, H}));
  std::vector<Variable<double>> h;
  for (std::size_t i = 0; i < T_x; ++i) {
    const Variable<double> x_i = select(x, 1, i);  // (1, E)
    h.push_back(gru(x_i, h_prev));                 // (1, H)
    h_prev = h.back();
  }
  // [docs:end]
  return {tokens, x, h};
}

// (2.3)-(2.6) for the first step by hand; the worst difference from the GruCell's h_1.
double first_step_by_hand(const nn::GruCell<double>& gru, const Variable<double>& x,
                          const std::vector<Variable<double>>& h) {
  const std::size_t H = gru.W_hh.value.shape()[1], E = gru.W_ih.value.shape()[1];
  // [docs:gru-by-hand]
  // The first step by hand, from the GRU's weights (rows [0,H) of W_ih/W_hh are the reset gate, [H,2H) the update
  // gate, [2H,3H) the candidate), with h_0 = 0 so every U h term vanishes:
  const Tensor<double>& x_1 = select(x, 1, 0).value();
  auto gate_input = [&](std::size_t gate, std::size_t k) {  // (W_gate x_1 + b_i,gate)_k
    double s = gru.b_ih.value.data()[gate * H + k];
    for (std::size_t e = 0; e < E; ++e) s += gru.W_ih.value.at({gate * H + k, e}) * x_1.data()[e];
    return s;
  };
  double worst = 0;
  for (std::size_t k = 0; k < H; ++k) {
    // (2.3)  r = σ(W_r x + b_ir + U_r h + b_hr)
    const double r = sigmoid(gate_input(0, k) + gru.b_hh.value.data()[0 * H + k]);
    // (2.4)  z = σ(W_z x + b_iz + U_z h + b_hz)
    const double z = sigmoid(gate_input(1, k) + gru.b_hh.value.data()[1 * H + k]);
    // (2.5)  n = tanh(W_n x + b_in + r ⊙ (U_n h + b_hn))
    const double n = std::tanh(gate_input(2, k) + r * gru.b_hh.value.data()[2 * H + k]);
    // (2.6)  h_1 = (1 - z) ⊙ n + z ⊙ h_0
    const double h_1 = (1 - z) * n + z * 0.0;
    worst = std::max(worst, std::abs(h_1 - h[0].value().data()[k]));
  }
  // [docs:end]
  return worst;
}

Variable<double> context(const std::vector<Variable<double>>& h) {
  // [docs:context]
  // (2.7)  c = q({h_1, ..., h_Tx}) = h_Tx: the basic encoder-decoder squeezes the whole sentence into the last state
  const Variable<double> c = h.back();
  // [docs:end]
  return c;
}

// The library's Encoder with each cell over the sentence (on a tape of its own); the GRU's states must equal the
// loop's. False if they do not.
bool library_encoders(const Ids& tokens, const std::vector<Variable<double>>& h, std::size_t V, std::size_t E,
                      std::size_t H) {
  const std::size_t T_x = tokens.shape()[1];
  Tape<double> tape;
  bool ok = true;
  // [docs:encoder]
  // The same recurrence with the library's Encoder: the embedding, one input projection for all steps, the loop.
  for (const nn::CellKind kind : {nn::CellKind::rnn_tanh, nn::CellKind::gru, nn::CellKind::lstm}) {
    nn::EncoderConfig config;
    config.vocab_size = V;
    config.embedding_dim = E;
    config.padding_id = 0;
    config.rnn.cell = kind;
    config.rnn.hidden_size = H;
    Rng encoder_rng(2);
    nn::Encoder<double> encoder(config, encoder_rng);
    const nn::RecurrentOutput<double> out = encoder(tape, tokens, {static_cast<std::int64_t>(T_x)});
    // out.outputs: (1, T_x, H), all h_i;  out.h_final[0]: (1, H), the last state h_Tx = c
    // [docs:end]
    std::printf("  %-8s h_1 = %s  ...  c = h_%zu = %s\n", nn::to_string(kind).c_str(),
                vector_string(row_of(out.outputs.value(), 0)).c_str(), T_x,
                vector_string(row_of(out.h_final[0].value(), 0)).c_str());
    if (kind == nn::CellKind::gru) {
      // the Encoder with the same seed draws the same embedding and GRU weights as above: identical states
      double diff = 0;
      for (std::size_t i = 0; i < T_x; ++i)
        for (std::size_t k = 0; k < H; ++k)
          diff = std::max(diff, std::abs(out.outputs.value().at({0, i, k}) - h[i].value().at({0, k})));
      ok = ok && diff < 1e-14;
      std::printf("           (the GRU Encoder vs the loop above: %s)\n", diff < 1e-14 ? "equal" : "DIFFERENT");
    }
  }
  return ok;
}

// The encoder's configuration and the padded batch of two sentences, for the batch and bidirectional examples.
struct Padded {
  nn::EncoderConfig config;
  Ids batch;
  bool ok = true;
};

// A padded batch: the short sentence's states at padded steps are exactly 0, and its final state is the one it gets
// alone.
Padded padded_batch(const std::vector<std::int64_t>& ids, std::size_t V, std::size_t E, std::size_t H) {
  const std::size_t T_x = ids.size();
  Tape<double> tape;
  bool ok = true;
  // [docs:padding]
  // A batch of two sentences of lengths 6 and 3, padded with id 0 to T_x = 6. Padded steps must not change a state.
  nn::EncoderConfig config;
  config.vocab_size = V;
  config.embedding_dim = E;
  config.padding_id = 0;
  config.rnn.cell = nn::CellKind::gru;
  config.rnn.hidden_size = H;
  Rng batch_rng(3);
  nn::Encoder<double> encoder(config, batch_rng);
  Ids batch(Shape{2, T_x});
  for (std::size_t i = 0; i < T_x; ++i) {
    batch.data()[i] = ids[i];                        // "the cat sat on the mat"
    batch.data()[T_x + i] = i < 3 ? ids[i + 3] : 0;  // "on the mat" + 3 × <pad>
  }
  const auto padded = encoder(tape, batch, {6, 3});
  const auto alone = encoder(tape, Ids(Shape{1, 3}, {ids[3], ids[4], ids[5]}), {3});
  // [docs:end]
  std::printf("\n  batch of 2 (lengths 6 and 3): sentence 2's states\n");
  for (std::size_t i = 0; i < T_x; ++i) {
    std::printf("    h_%zu = %s%s\n", i + 1, vector_string(row_of(padded.outputs.value(), T_x + i)).c_str(),
                i >= 3 ? "   (padding: exactly 0)" : "");
  }
  double final_diff = 0;
  for (std::size_t k = 0; k < H; ++k) {
    final_diff =
        std::max(final_diff, std::abs(padded.h_final[0].value().at({1, k}) - alone.h_final[0].value().at({0, k})));
  }
  ok = ok && final_diff < 1e-14;
  std::printf("  its final state vs the sentence run alone, unpadded: %s\n",
              final_diff < 1e-14 ? "equal" : "DIFFERENT");
  for (std::size_t i = 3; i < T_x; ++i)
    for (std::size_t k = 0; k < H; ++k) ok = ok && padded.outputs.value().at({1, i, k}) == 0.0;
  return {config, batch, ok};
}

// Two layers, both directions: the shapes of what the encoder returns.
void bidirectional(nn::EncoderConfig config, const Ids& batch) {
  const std::size_t T_x = batch.shape()[1];
  Tape<double> tape;
  // [docs:bidirectional]
  // A bidirectional encoder reads the sentence both ways: h_i = [h→_i ; h←_i], so each annotation sees the whole
  // sentence. Two layers, as in Bahdanau et al.'s encoder stack.
  config.rnn.bidirectional = true;
  config.rnn.num_layers = 2;
  Rng bi_rng(4);
  nn::Encoder<double> bi_encoder(config, bi_rng);
  const auto both_ways = bi_encoder(tape, batch, {6, 3});
  // [docs:end]
  const Shape& s = both_ways.outputs.shape();
  std::printf(
      "\n  bidirectional, 2 layers: outputs (%zu, %zu, %zu) = (batch, T_x, 2H); %zu final states of (%zu, %zu)\n", s[0],
      s[1], s[2], both_ways.h_final.size(), both_ways.h_final[0].shape()[0], both_ways.h_final[0].shape()[1]);
  std::printf("  sentence 2, h_1 = [h→_1 ; h←_1] = %s\n",
              vector_string(row_of(both_ways.outputs.value(), T_x)).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  attend::tutorial::parse_options(argc, argv);  // no pictures and no size to choose: the options are accepted only
  bool ok = true;
  // A tiny vocabulary: id 0 is padding, the others are the words in order of first appearance.
  const std::vector<std::string> sentence{"the", "cat", "sat", "on", "the", "mat"};
  std::map<std::string, std::int64_t> vocabulary{{"<pad>", 0}};
  std::vector<std::int64_t> ids;
  for (const auto& word : sentence) {
    vocabulary.emplace(word, static_cast<std::int64_t>(vocabulary.size()));
    ids.push_back(vocabulary[word]);
  }
  const std::size_t T_x = sentence.size(), E = 4, H = 3, V = vocabulary.size();
  std::printf("Chapter 2: the encoder h_i = f(x_i, h_{i-1}) on \"the cat sat on the mat\" (E = %zu, H = %zu)\n\n", E,
              H);

  // ---- The recurrence, one step at a time ---------------------------------------------------------------------------
  Rng rng(2);
  nn::Embedding<double> embed(V, E, rng, /*padding_id=*/0);
  nn::GruCell<double> gru(E, H, rng);
  Tape<double> tape;
  const Loop loop = run_the_loop(tape, embed, gru, ids);
  for (std::size_t i = 0; i < T_x; ++i) {
    std::printf("  h_%zu = %s   after \"%s\"\n", i + 1, vector_string(row_of(loop.h[i].value(), 0)).c_str(),
                sentence[i].c_str());
  }

  // ---- One step by hand, and the context ----------------------------------------------------------------------------
  const double worst = first_step_by_hand(gru, loop.x, loop.h);
  ok = ok && worst < 1e-14;
  std::printf("\n  h_1 by hand from (2.3)-(2.6) vs the GruCell: %s\n", worst < 1e-14 ? "equal (< 1e-14)" : "DIFFERENT");
  const Variable<double> c = context(loop.h);
  std::printf("  c = h_%zu = %s\n\n", T_x, vector_string(row_of(c.value(), 0)).c_str());

  // ---- The library's encoder with each cell; a padded batch; both directions ----------------------------------------
  ok = library_encoders(loop.tokens, loop.h, V, E, H) && ok;
  const Padded padded = padded_batch(ids, V, E, H);
  ok = ok && padded.ok;
  bidirectional(padded.config, padded.batch);

  std::printf("\n%s\n", ok ? "all checks passed" : "A CHECK FAILED");
  return ok ? attend::tutorial::exit_status() : 1;
}
