// The encoder–decoder model: an nn::Encoder over the source tokens and one of the decoders of decoder.hpp, trained with
// teacher forcing on the mean cross-entropy of the target tokens. Its configuration is plain data that goes to and
// from JSON, so a checkpoint's metadata rebuilds the model before its weights are loaded.
// Chapters: docs/03-encoder-decoder.md, docs/08-attention-decoder.md; API: docs/reference/models.md.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/batch.hpp"
#include "models/decoder.hpp"
#include "nn/recurrent.hpp"

namespace attend::models {

struct Seq2seqConfig {
  std::size_t source_vocab_size = 0;
  std::size_t target_vocab_size = 0;
  nn::CellKind cell = nn::CellKind::gru;
  std::size_t embedding_dim = 32;  // E, source and target embeddings alike
  std::size_t hidden_size = 128;   // H, encoder (each direction) and decoder
  std::size_t num_layers = 1;      // encoder and decoder alike
  bool bidirectional = false;
  double dropout = 0.0;  // between encoder layers, training mode only
  DecoderKind decoder = DecoderKind::bahdanau;
  ScoreKind score = ScoreKind::additive;
  bool input_feeding = true;           // Luong only
  std::size_t attention_size = 0;      // additive/concat scores; 0 means hidden_size
  std::size_t max_target_length = 50;  // decoding stops after this many tokens (the end token included)
  std::uint64_t seed = 0;              // initial weights and dropout

  // "vanilla", "bahdanau", "luong-dot", "luong-general", "luong-concat": the decoder kind and its score.
  std::string decoder_name() const;
  void set_decoder(const std::string& name);  // throws std::invalid_argument listing the names
  // Throws std::invalid_argument naming the first field out of range (sizes 0, dropout outside [0, 1), dot score with
  // a bidirectional encoder, ...).
  void validate() const;
  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming the missing or malformed field.
  static Seq2seqConfig from_json(const nlohmann::json& json);
};

// The teacher-forced outputs of a batch, for inspection (tutorials, tests).
template <class T>
struct TeacherForced {
  Variable<T> logits;  // (B, T, V)
  // For each step j, as DecoderStep has them (all three empty for the vanilla decoder): the scores e_j (B, S), the
  // weights α_j = softmax(e_j) over the real positions (B, S), the context c_j (B, A)
  std::vector<Variable<T>> energies, alpha, context;
};

// The teacher-forced loss over the real target positions only: the rows of `features` (B, T, F) whose target_out is
// not <pad> are gathered, (N, F), before the output layer (W (V, F), b (V,) or empty) turns them into logits (N, V),
// so that padding costs no product and no softmax: -(1/N) Σ_{b,j: y_bj ≠ pad} log p(y_bj | …), with optional label
// smoothing — the same number as cross_entropy over all B·T logits with pad ignored (the rows are independent), at
// N/(B·T) of the cost. The output layer and the loss are linear_cross_entropy (ops/fused.hpp): with bfloat16
// products one node that never holds the (N, V) logits whole.
template <class T>
Variable<T> target_loss(const Variable<T>& features, const Ids& target_out, const Variable<T>& W, const Variable<T>& b,
                        double label_smoothing);

// The encoded source: what every decoding step reads, and the decoder's first state.
template <class T>
struct Encoded {
  SourceMemory<T> memory;
  DecoderState<T> state;
};

// Parameters: "encoder.…" (nn::Encoder's names) and "decoder.…" (decoder.hpp).
template <class T>
class Seq2seq : public nn::Module<T> {
 public:
  nn::Encoder<T> encoder;
  std::unique_ptr<Decoder<T>> decoder;

  // Initial weights drawn from Rng(config.seed): the same configuration gives the same model.
  explicit Seq2seq(const Seq2seqConfig& config) : Seq2seq(config, Rng(config.seed)) {}
  // Encodes source ids (B, S) with their lengths, and sets up the decoder: memory (keys precomputed) and s_0.
  Encoded<T> encode(Tape<T>& tape, const Ids& source, const std::vector<std::int64_t>& lengths);
  // The same from the source's embeddings (B, S, E) — what encoder.embedding gives for the ids — instead of the ids:
  // what gradient attribution differentiates with respect to (models/attribution.hpp).
  Encoded<T> encode_embedded(const Variable<T>& embedded, const std::vector<std::int64_t>& lengths);
  // All target steps with teacher forcing: step j reads the true y_{j-1} (batch.target_in[:, j]).
  TeacherForced<T> forward(Tape<T>& tape, const Batch& batch);
  // Mean cross-entropy of batch.target_out under the teacher-forced logits, padding ignored.
  Variable<T> loss(Tape<T>& tape, const Batch& batch, double label_smoothing = 0.0);
  void visit(nn::ModuleVisitor<T>& v) override;
  const Seq2seqConfig& config() const { return config_; }

 private:
  Seq2seq(const Seq2seqConfig& config, Rng&& rng);
  Encoded<T> decoder_inputs(const nn::RecurrentOutput<T>& encoded, const std::vector<std::int64_t>& lengths);
  Seq2seqConfig config_;
};

// Every step of a decoder with teacher forcing, from an encoded batch (of any encoder: Seq2seq::forward and the image
// captioner share it): step j reads the true y_{j-1} = target_in[:, j], then one output layer over all steps.
template <class T>
TeacherForced<T> teacher_forced(Decoder<T>& decoder, const Encoded<T>& encoded, const Ids& target_in);

// The same steps without the output layer: every step's output features, (B, T, F) — for a caller that needs the
// logits of a few rows only (target_loss, gradient attribution).
template <class T>
Variable<T> teacher_forced_features(Decoder<T>& decoder, const Encoded<T>& encoded, const Ids& target_in);

// The decoder configuration a Seq2seqConfig implies.
DecoderConfig decoder_config(const Seq2seqConfig& config);

}  // namespace attend::models
