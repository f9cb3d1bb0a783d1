// Visual attention ("Show, Attend and Tell", Xu et al. 2015, at toy scale): an image encoder turns a picture into L
// annotation vectors a_1 … a_L, one per position of a grid over the image, and the Bahdanau decoder of decoder.hpp
// attends over them exactly as it attends over the words of a sentence — the same e_tj, α_tj and context c_t, now over
// image positions. Two encoders, neither pretrained:
//   patches  the image cut into a grid of ph×pw patches (stride s; s < pw overlaps them); each patch x_i (ph·pw
//            pixels) is projected and given a learned embedding of its grid position: a_i = W_p x_i + b_p + P_i
//            (optionally through a hidden layer first: a_i = W_p relu(W_h x_i + b_h) + b_p + P_i)
//   conv     two convolutions (3×3, padding 1), each followed by relu and 2×2 max-pooling, give a (C, H/4, W/4) grid
//            of feature vectors f_i; a_i = W_p f_i + b_p + P_i likewise
// The position embedding P_i is what lets the decoder go from left to right: without it the annotations say what is
// at a position but not where it is.
//   s_0 = tanh(W_init ā + b_init), ā = (1/L) Σ_i a_i      (an LSTM's c_0 = W_init_c ā + b_init_c)
//   then for t = 1, 2, …: the Bahdanau step of decoder.hpp with h_i = a_i
// The loss is the mean cross-entropy of the caption tokens, plus optionally the "doubly stochastic" regulariser of the
// article, λ Σ_i (1 − Σ_t α_ti)² (averaged over the batch), which pushes every position to be looked at about once.
// Chapter: docs/13-visual-attention.md; API: docs/reference/models.md.
#pragma once

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/search.hpp"
#include "models/seq2seq.hpp"

namespace attend::models {

enum class ImageEncoderKind { patches, conv };
std::string to_string(ImageEncoderKind kind);
ImageEncoderKind image_encoder_from_string(const std::string& name);  // "patches" or "conv"; throws naming both

struct CaptionerConfig {
  ImageEncoderKind encoder = ImageEncoderKind::patches;
  std::size_t image_height = 12, image_width = 64;
  std::size_t patch_height = 8, patch_width = 8, patch_stride = 2;  // patches: grid of ((H−ph)/s+1)×((W−pw)/s+1)
  std::size_t patch_hidden = 256;     // patches: K > 0 puts a hidden layer h_i = relu(W_h x_i + b_h) (K) before W_p
  std::size_t channels = 16;          // conv: channels of the first convolution (the second has twice as many)
  std::size_t annotation_size = 128;  // A, the size of each a_i
  nn::CellKind cell = nn::CellKind::gru;
  std::size_t vocab_size = 0;      // of the captions' tokens (the four specials and the ten digits)
  std::size_t embedding_dim = 16;  // E
  std::size_t hidden_size = 128;   // H
  std::size_t attention_size = 0;  // of the additive score; 0 means H
  std::size_t max_length = 10;     // decoding stops after this many tokens (the end token included)
  double doubly_stochastic = 0.0;  // λ; 0: no regulariser
  std::uint64_t seed = 0;          // initial weights

  // The grid the annotations lie on: rows × columns = L.
  std::size_t grid_rows() const;
  std::size_t grid_columns() const;
  // Column of the image (in pixels, fractional) at the centre of grid column k: where attention on it looks.
  double pixel_column(std::size_t k) const;
  // Throws std::invalid_argument naming the first bad field (a size 0, patches larger than the image, an image the
  // conv encoder cannot pool twice, λ negative or not finite, ...).
  void validate() const;
  nlohmann::json to_json() const;
  static CaptionerConfig from_json(const nlohmann::json& json);  // throws std::invalid_argument naming the field
};

// The images (B, H, W) cut into patches: (B, L, ph·pw), position i = row · grid_columns + column. No gradient: the
// pixels are the input. Throws std::invalid_argument naming the shape unless the images are (B, H, W) of the
// configuration, B ≥ 1.
template <class T>
Tensor<T> extract_patches(const Tensor<T>& images, const CaptionerConfig& config);

// a_i = W_p x_i + b_p + P_i over the patches x_i, or a_i = W_p relu(W_h x_i + b_h) + b_p + P_i with a hidden layer.
// Parameters "W_p.W", "W_p.b", "P" (L, A), and "W_h.W", "W_h.b" with the hidden layer.
template <class T>
class PatchEncoder : public nn::Module<T> {
 public:
  std::unique_ptr<nn::Linear<T>> W_h;  // the hidden layer; null without one
  nn::Linear<T> W_p;
  Parameter<T> P;

  PatchEncoder(const CaptionerConfig& config, Rng& rng);
  Variable<T> forward(Tape<T>& tape, const Tensor<T>& images);  // images (B, H, W) → a (B, L, A)
  // Images on the tape: a leaf whose gradient is wanted (attribution over the pixels) gets ∂/∂pixel, each pixel's
  // patches' gradients summed.
  Variable<T> forward(Tape<T>& tape, const Variable<T>& images);
  void visit(nn::ModuleVisitor<T>& v) override;

 private:
  CaptionerConfig config_;
};

// f = maxpool(relu(conv2(maxpool(relu(conv1(x)))))), a_i = W_p f_i + b_p + P_i. Parameters "conv1.W", "conv1.b",
// "conv2.W", "conv2.b" (PyTorch's Conv2d layout), "W_p.W", "W_p.b", "P".
template <class T>
class ConvEncoder : public nn::Module<T> {
 public:
  nn::Conv2d<T> conv1, conv2;
  nn::Linear<T> W_p;
  Parameter<T> P;

  ConvEncoder(const CaptionerConfig& config, Rng& rng);
  Variable<T> forward(Tape<T>& tape, const Tensor<T>& images);    // images (B, H, W) → a (B, L, A)
  Variable<T> forward(Tape<T>& tape, const Variable<T>& images);  // images on the tape (their gradient, if wanted)
  void visit(nn::ModuleVisitor<T>& v) override;

 private:
  CaptionerConfig config_;
};

// A batch of images with their captions for teacher forcing (target_in = <sos> y…, target_out = y… <eos>).
template <class T>
struct ImageBatch {
  Tensor<T> images;  // (B, H, W)
  Ids target_in;     // (B, T); shape (0,) when there are no captions
  Ids target_out;
  std::size_t size() const { return images.shape()[0]; }
};
// Stacks images (each config's size) and caption token ids; throws std::invalid_argument naming a wrong image size.
// A Picture is any grid of intensities with members height, width and pixels (row by row), as data::Image: the model
// reads pixels, it does not need the data library's type.
template <class T, class Picture>
ImageBatch<T> make_image_batch(const std::vector<const Picture*>& images,
                               const std::vector<std::vector<std::int64_t>>& captions, const CaptionerConfig& config) {
  if (images.empty()) throw std::invalid_argument("make_image_batch: an empty batch");
  if (!captions.empty() && captions.size() != images.size()) {
    throw std::invalid_argument("make_image_batch: " + std::to_string(images.size()) + " images but " +
                                std::to_string(captions.size()) + " captions");
  }
  const std::size_t B = images.size(), H = config.image_height, W = config.image_width;
  ImageBatch<T> batch;
  batch.images = Tensor<T>(Shape{B, H, W}, uninitialized);
  for (std::size_t b = 0; b < B; ++b) {
    if (images[b]->height != H || images[b]->width != W) {
      throw std::invalid_argument("make_image_batch: image " + std::to_string(b) + " is " +
                                  std::to_string(images[b]->height) + "×" + std::to_string(images[b]->width) +
                                  "; the model reads " + std::to_string(H) + "×" + std::to_string(W));
    }
    std::copy(images[b]->pixels.begin(), images[b]->pixels.end(), batch.images.data() + b * H * W);
  }
  if (!captions.empty()) make_targets(captions, batch.target_in, batch.target_out);
  return batch;
}

// Parameters: "encoder.…", "init_h.<W|b>" (and "init_c.<W|b>" for an LSTM), "decoder.…" (BahdanauDecoder's names).
template <class T>
class Captioner : public nn::Module<T> {
 public:
  std::unique_ptr<nn::Module<T>> encoder;  // a PatchEncoder or a ConvEncoder
  nn::Linear<T> init_h;
  std::unique_ptr<nn::Linear<T>> init_c;  // LSTM only
  std::unique_ptr<BahdanauDecoder<T>> decoder;

  explicit Captioner(const CaptionerConfig& config) : Captioner(config, Rng(config.seed)) {}
  // The annotations a (B, L, A) of a batch of images (B, H, W).
  Variable<T> annotate(Tape<T>& tape, const Tensor<T>& images);
  Variable<T> annotate(Tape<T>& tape, const Variable<T>& images);  // images on the tape (their gradient, if wanted)
  // Annotations, the decoder's memory (keys U_a a_i precomputed) and s_0.
  Encoded<T> encode(Tape<T>& tape, const Tensor<T>& images);
  Encoded<T> encode(Tape<T>& tape, const Variable<T>& images);
  TeacherForced<T> forward(Tape<T>& tape, const ImageBatch<T>& batch);
  // Mean cross-entropy of the caption tokens, plus λ Σ_i (1 − Σ_t α_ti)² averaged over the batch when λ > 0.
  // `penalty_factor` multiplies λ: a shard of a larger batch whose losses are added weighted by their shares of the
  // tokens (nn::BatchParallel) passes (its share of the images) / (its share of the tokens), so that the weighted sum
  // is exactly the whole batch's loss.
  Variable<T> loss(Tape<T>& tape, const ImageBatch<T>& batch, double penalty_factor = 1.0);
  // The regulariser alone, from the teacher-forced α_t (B, L) and the batch's real steps (target_out ≠ pad).
  Variable<T> doubly_stochastic_penalty(const std::vector<Variable<T>>& alpha, const Ids& target_out);
  void visit(nn::ModuleVisitor<T>& v) override;
  const CaptionerConfig& config() const { return config_; }

 private:
  Captioner(const CaptionerConfig& config, Rng&& rng);
  CaptionerConfig config_;
};

// Where attention weights α (one per grid position, L values) look on the image: each α_i spread evenly over the
// pixels of its position's region (a patch; for the conv encoder the 4×4 pixels its grid cell pools), summed where
// regions overlap: image_height · image_width values, row by row, summing to Σ_i α_i. For image_attention_svg.
std::vector<double> attention_map(const CaptionerConfig& config, const std::vector<float>& alpha);
// The attention-weighted mean column Σ_i α_i · pixel_column(column of i) (with Σ α_i = 1: where, from left to right,
// the step looked).
double mean_column(const CaptionerConfig& config, const std::vector<float>& alpha);
// The left-to-right test of chapter 13: whether m_t (mean_column of α_t) increases strictly from each output token to
// the next. Only the rows of the hypothesis's tokens count (the end token's row, if any, does not).
bool moves_left_to_right(const CaptionerConfig& config, const Hypothesis& hypothesis);

// Greedy decoding (beam_width 1) or beam search of a batch of images, as decode() of search.hpp: each hypothesis's
// attention rows hold α_t over the L grid positions. The model should be in evaluation mode.
template <class T>
std::vector<Hypothesis> decode(Captioner<T>& model, const Tensor<T>& images, const SearchOptions& options = {});

}  // namespace attend::models
