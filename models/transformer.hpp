// The Transformer encoder-decoder (Vaswani et al. 2017) for the tasks the recurrent seq2seq learns: token embeddings
// scaled by √d plus positions (sinusoidal or learned), nn::Transformer's encoder and decoder stacks (post- or
// pre-norm), and an output layer (optionally tied to the target embedding); trained with teacher forcing on the mean
// (label-smoothed) cross-entropy, decoded greedily or by beam search with a key/value cache. The module names match
// ../shared/bench/torch_transformer.py's (src_emb, tgt_emb, transformer.…, out), so its weights load by name.
// Chapter: docs/14-transformer.md; API: docs/reference/models.md ("The Transformer").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/batch.hpp"
#include "models/search.hpp"
#include "nn/layers.hpp"
#include "nn/transformer.hpp"

namespace attend::models {

enum class PositionKind { sinusoidal, learned };

struct TransformerConfig {
  std::size_t source_vocab_size = 0;
  std::size_t target_vocab_size = 0;
  std::size_t d_model = 128;  // D: embeddings, every layer's input and output
  std::size_t heads = 4;      // H; D must be a multiple of H
  std::size_t ff = 512;       // the feed-forward's inner size
  std::size_t encoder_layers = 2;
  std::size_t decoder_layers = 2;
  double dropout = 0.1;     // on embeddings + positions, attention weights, each sub-layer's output, inside the ff
  bool norm_first = false;  // false: post-norm (the paper); true: pre-norm
  PositionKind positions = PositionKind::sinusoidal;
  std::size_t max_positions = 256;     // learned positions: the table, the longest source and target
  bool tie_embeddings = false;         // the output layer's weight is the target embedding (logits = y Eᵀ + b)
  std::size_t max_target_length = 50;  // decoding stops after this many tokens (the end token included)
  std::uint64_t seed = 0;              // initial weights and dropout

  nn::TransformerLayerConfig layer_config() const;
  // Throws std::invalid_argument naming the first field out of range.
  void validate() const;
  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming the missing or malformed field.
  static TransformerConfig from_json(const nlohmann::json& json);
};

std::string to_string(PositionKind kind);
PositionKind position_kind_from_string(const std::string& name);  // "sinusoidal", "learned"

// The encoded source: the encoder's output (B, S, D) and which positions are real (B, S).
template <class T>
struct TransformerEncoded {
  Variable<T> memory;
  Mask mask;
};

// Which cross-attention weights a decoded Hypothesis records (its `attention` rows, for heatmaps): one layer's
// (−1: the last), one head's or the mean over the heads (head −1); or, `every`, each layer's every head: a row then
// holds L·H blocks of the source's length, layer by layer and within a layer head by head (attend serve).
struct AttentionView {
  int layer = -1;
  int head = -1;
  bool every = false;
};

// Parameters: src_emb.W (V_s, D), tgt_emb.W (V_t, D), src_pos / tgt_pos (max_positions, D) when learned,
// transformer.encoder.… / transformer.decoder.… (nn::Transformer's names), out.W (V_t, D) (absent when tied) and out.b.
template <class T>
class TransformerModel : public nn::Module<T> {
 public:
  nn::Embedding<T> src_emb;
  nn::Embedding<T> tgt_emb;
  Parameter<T> src_pos, tgt_pos;  // learned positions only (else empty)
  nn::Transformer<T> transformer;
  nn::Linear<T> out;
  nn::Dropout<T> dropout;

  // Initial weights drawn from Rng(config.seed): embeddings N(0, 1/D) (so that √D·e has unit variance, as the
  // positions), learned positions N(0, 1/D), the Transformer as nn::Transformer, out as nn::Linear.
  explicit TransformerModel(const TransformerConfig& config) : TransformerModel(config, Rng(config.seed)) {}
  // Source ids (B, S) with their lengths → memory; weights, if given, receives the encoder's self-attention weights
  // in its `encoder`. Learned positions: throws std::invalid_argument when S > max_positions (sinusoidal positions
  // have no limit).
  TransformerEncoded<T> encode(Tape<T>& tape, const Ids& source, const std::vector<std::int64_t>& lengths,
                               nn::AttentionWeights<T>* weights = nullptr);
  // The same from the source tokens' embeddings E[ids] (B, S, D) instead of the ids, every position real: what
  // gradient attribution differentiates with respect to (models/attribution.hpp).
  TransformerEncoded<T> encode_embedded(const Variable<T>& tokens, nn::AttentionWeights<T>* weights = nullptr);
  // x = √D · E[ids] + P[offset …], then dropout: (B, T) → (B, T, D). `source` picks the source or target side.
  Variable<T> embed(Tape<T>& tape, const Ids& ids, bool source, std::size_t offset = 0);
  // The same from the embeddings E[ids] (B, T, D).
  Variable<T> embed_rows(const Variable<T>& tokens, bool source, std::size_t offset = 0);
  // Decoder output (…, D) → logits (…, V_t).
  Variable<T> logits(const Variable<T>& y);
  // Teacher-forced logits (B, T, V_t) of batch.target_in; weights, if given, receives every attention's weights:
  // the encoder's self-attention (B, H, S, S), the decoder's (B, H, T, T) and its cross-attention (B, H, T, S).
  Variable<T> forward(Tape<T>& tape, const Batch& batch, nn::AttentionWeights<T>* weights = nullptr);
  // Mean cross-entropy (label-smoothed with ε) of batch.target_out, padding ignored.
  Variable<T> loss(Tape<T>& tape, const Batch& batch, double label_smoothing = 0.0);
  void visit(nn::ModuleVisitor<T>& v) override;
  const TransformerConfig& config() const { return config_; }

 private:
  TransformerModel(const TransformerConfig& config, Rng&& rng);
  TransformerConfig config_;
  Tensor<T> sinusoids_;  // (max_positions, D) when sinusoidal, grown on demand
};

// Incremental decoding with a key/value cache (nn::TransformerDecoder::step): each step embeds one token per row and
// runs it through every layer against the cached keys and values of the earlier positions. Its `alpha` is the
// cross-attention of `view`. Each step truncates the tape back to where the first began (Tape::truncate), keeping
// only the caches, so memory stays bounded however long the output.
template <class T>
class CachedStepper : public Stepper<T> {
 public:
  CachedStepper(TransformerModel<T>& model, const TransformerEncoded<T>& encoded, AttentionView view = {});
  void expand(std::size_t k) override;
  typename Stepper<T>::Step step(const Ids& y_prev) override;
  void reorder(const std::vector<std::int64_t>& parents) override;

 private:
  TransformerModel<T>& model_;
  Mask mask_;
  std::vector<nn::DecoderLayerCache<T>> caches_;
  AttentionView view_;
  std::size_t position_ = 0;
  std::size_t mark_ = 0;  // the tape's size before the first step: later steps truncate it back to this
};

// The same search without a cache: every step runs the decoder over the whole prefix again (the causal mask makes the
// last position's output the same), for the test that the cache changes nothing and for measuring what it saves.
template <class T>
class RecomputeStepper : public Stepper<T> {
 public:
  RecomputeStepper(TransformerModel<T>& model, const TransformerEncoded<T>& encoded, AttentionView view = {});
  void expand(std::size_t k) override;
  typename Stepper<T>::Step step(const Ids& y_prev) override;
  void reorder(const std::vector<std::int64_t>& parents) override;

 private:
  TransformerModel<T>& model_;
  TransformerEncoded<T> encoded_;
  std::vector<std::vector<std::int64_t>> prefixes_;  // each row's tokens so far, <sos> first
  AttentionView view_;
  std::size_t mark_ = 0;
};

// The best output for each source (ids (B, S) with their lengths), greedy for beam width 1, with the cache unless
// `recompute`. The model should be in evaluation mode. Records on its own tape without gradients.
template <class T>
std::vector<Hypothesis> decode(TransformerModel<T>& model, const Ids& source, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options = {}, AttentionView view = {}, bool recompute = false);

}  // namespace attend::models
