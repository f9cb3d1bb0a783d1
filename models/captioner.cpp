// The image captioner of the visual-attention chapter (captioner.hpp): patch and convolutional encoders, the initial
// state from the mean annotation, the Bahdanau decoder over grid positions, and the doubly stochastic regulariser.
#include "models/captioner.hpp"

#include <cmath>
#include <stdexcept>

#include "models/batch.hpp"
#include "models/json_field.hpp"

namespace attend::models {

std::string to_string(ImageEncoderKind kind) { return kind == ImageEncoderKind::patches ? "patches" : "conv"; }

ImageEncoderKind image_encoder_from_string(const std::string& name) {
  if (name == "patches") return ImageEncoderKind::patches;
  if (name == "conv") return ImageEncoderKind::conv;
  throw std::invalid_argument("unknown image encoder \"" + name + "\" (expected patches or conv)");
}

// ---- configuration ---------------------------------------------------------------------------------------------

std::size_t CaptionerConfig::grid_rows() const {
  if (encoder == ImageEncoderKind::conv) return image_height / 4;
  return patch_height > image_height || patch_stride == 0 ? 0 : (image_height - patch_height) / patch_stride + 1;
}

std::size_t CaptionerConfig::grid_columns() const {
  if (encoder == ImageEncoderKind::conv) return image_width / 4;
  return patch_width > image_width || patch_stride == 0 ? 0 : (image_width - patch_width) / patch_stride + 1;
}

double CaptionerConfig::pixel_column(std::size_t k) const {
  // a patch covers columns k·s … k·s + pw − 1; a conv grid cell, after two 2×2 poolings, columns 4k … 4k + 3
  if (encoder == ImageEncoderKind::conv) return 4.0 * static_cast<double>(k) + 1.5;
  return static_cast<double>(k * patch_stride) + (static_cast<double>(patch_width) - 1.0) / 2.0;
}

void CaptionerConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("captioner config: " + what); };
  auto positive = [&](std::size_t value, const char* name) {
    if (value == 0) fail(std::string(name) + " is 0");
  };
  positive(image_height, "image_height");
  positive(image_width, "image_width");
  positive(annotation_size, "annotation_size");
  positive(embedding_dim, "embedding_dim");
  positive(hidden_size, "hidden_size");
  positive(max_length, "max_length");
  if (vocab_size <= static_cast<std::size_t>(unk_id) + 1) {
    fail("vocab_size " + std::to_string(vocab_size) + " leaves no token beside the four specials");
  }
  if (encoder == ImageEncoderKind::patches) {
    positive(patch_height, "patch_height");
    positive(patch_width, "patch_width");
    positive(patch_stride, "patch_stride");
    if (patch_height > image_height || patch_width > image_width) {
      fail("patches of " + std::to_string(patch_height) + "×" + std::to_string(patch_width) +
           " do not fit in an image of " + std::to_string(image_height) + "×" + std::to_string(image_width));
    }
  } else {
    positive(channels, "channels");
    if (image_height < 4 || image_width < 4) {
      fail("the conv encoder pools twice by 2: the image " + std::to_string(image_height) + "×" +
           std::to_string(image_width) + " must be at least 4×4");
    }
  }
  if (!std::isfinite(doubly_stochastic) || doubly_stochastic < 0) {
    fail("doubly_stochastic (λ) is " + std::to_string(doubly_stochastic) + "; it must be a finite number ≥ 0");
  }
}

nlohmann::json CaptionerConfig::to_json() const {
  return {{"encoder", to_string(encoder)},
          {"image_height", image_height},
          {"image_width", image_width},
          {"patch_height", patch_height},
          {"patch_width", patch_width},
          {"patch_stride", patch_stride},
          {"patch_hidden", patch_hidden},
          {"channels", channels},
          {"annotation_size", annotation_size},
          {"cell", nn::to_string(cell)},
          {"vocab_size", vocab_size},
          {"embedding_dim", embedding_dim},
          {"hidden_size", hidden_size},
          {"attention_size", attention_size},
          {"max_length", max_length},
          {"doubly_stochastic", doubly_stochastic},
          {"seed", seed}};
}

CaptionerConfig CaptionerConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::invalid_argument("model config: not a JSON object");
  CaptionerConfig config;
  config.encoder = image_encoder_from_string(config_field<std::string>(json, "encoder"));
  config.image_height = config_field<std::size_t>(json, "image_height");
  config.image_width = config_field<std::size_t>(json, "image_width");
  config.patch_height = config_field<std::size_t>(json, "patch_height");
  config.patch_width = config_field<std::size_t>(json, "patch_width");
  config.patch_stride = config_field<std::size_t>(json, "patch_stride");
  config.patch_hidden = config_field<std::size_t>(json, "patch_hidden");
  config.channels = config_field<std::size_t>(json, "channels");
  config.annotation_size = config_field<std::size_t>(json, "annotation_size");
  config.cell = nn::cell_kind_from_string(config_field<std::string>(json, "cell"));
  config.vocab_size = config_field<std::size_t>(json, "vocab_size");
  config.embedding_dim = config_field<std::size_t>(json, "embedding_dim");
  config.hidden_size = config_field<std::size_t>(json, "hidden_size");
  config.attention_size = config_field<std::size_t>(json, "attention_size");
  config.max_length = config_field<std::size_t>(json, "max_length");
  config.doubly_stochastic = config_field<double>(json, "doubly_stochastic");
  config.seed = config_field<std::uint64_t>(json, "seed");
  config.validate();
  return config;
}

// ---- encoders --------------------------------------------------------------------------------------------------

namespace {

// Images (B, H, W) of the configuration's size, B ≥ 1; `who` names the caller in the error.
template <class T>
void check_images(const Tensor<T>& images, const CaptionerConfig& config, const char* who) {
  const Shape& shape = images.shape();
  if (shape.rank() != 3 || shape[0] == 0 || shape[1] != config.image_height || shape[2] != config.image_width) {
    throw std::invalid_argument(std::string(who) + ": images " + to_string(shape) + ", expected (B, " +
                                std::to_string(config.image_height) + ", " + std::to_string(config.image_width) +
                                ") with B ≥ 1");
  }
}

// Which pixel of images (B, H, W), as one column of B·H·W rows, each element of their patches (B, L, ph·pw) is: x_i
// the ph×pw pixels whose top-left corner is (gr·s, gc·s), row by row.
Ids patch_pixels(std::size_t B, const CaptionerConfig& config) {
  const std::size_t H = config.image_height, W = config.image_width, ph = config.patch_height, pw = config.patch_width,
                    s = config.patch_stride, L = config.grid_rows() * config.grid_columns();
  Ids ids(Shape{B, L, ph * pw});
  std::int64_t* out = ids.data();
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t gr = 0; gr < config.grid_rows(); ++gr)
      for (std::size_t gc = 0; gc < config.grid_columns(); ++gc)
        for (std::size_t r = 0; r < ph; ++r)
          for (std::size_t c = 0; c < pw; ++c)
            *out++ = static_cast<std::int64_t>(b * H * W + (gr * s + r) * W + gc * s + c);
  return ids;
}
}  // namespace

template <class T>
Tensor<T> extract_patches(const Tensor<T>& images, const CaptionerConfig& config) {
  check_images(images, config, "extract_patches");
  const Ids pixels = patch_pixels(images.shape()[0], config);
  Tensor<T> patches(pixels.shape(), uninitialized);
  for (std::size_t e = 0; e < pixels.size(); ++e) patches.data()[e] = images.data()[pixels.data()[e]];
  return patches;
}

namespace {

// P: one learned vector per grid position, N(0, 1/A) so that it starts about as large as the projected content.
template <class T>
Parameter<T> position_embedding(const CaptionerConfig& config, Rng& rng) {
  const std::size_t L = config.grid_rows() * config.grid_columns();
  const double stddev = 1.0 / std::sqrt(static_cast<double>(config.annotation_size));
  return Parameter<T>(rng.normal_tensor<T>(Shape{L, config.annotation_size}, 0.0, stddev));
}

}  // namespace

template <class T>
PatchEncoder<T>::PatchEncoder(const CaptionerConfig& config, Rng& rng)
    : W_h(config.patch_hidden
              ? std::make_unique<nn::Linear<T>>(config.patch_height * config.patch_width, config.patch_hidden, rng)
              : nullptr),
      W_p(config.patch_hidden ? config.patch_hidden : config.patch_height * config.patch_width, config.annotation_size,
          rng),
      P(position_embedding<T>(config, rng)),
      config_(config) {}

template <class T>
Variable<T> PatchEncoder<T>::forward(Tape<T>& tape, const Tensor<T>& images) {
  return forward(tape, tape.constant(images));
}

template <class T>
Variable<T> PatchEncoder<T>::forward(Tape<T>& tape, const Variable<T>& images) {
  // x_i (extract_patches checks the images' shape): (B, L, ph·pw), the pixels of each patch — copied, or, when the
  // images' gradient is wanted, gathered on the tape (a pixel's gradient is the sum of its copies')
  Variable<T> x;
  if (!images.requires_grad()) {
    x = tape.constant(extract_patches(images.value(), config_));
  } else {
    check_images(images.value(), config_, "PatchEncoder");
    const std::size_t B = images.shape()[0];
    const Variable<T> x4 = embedding(reshape(images, {-1, 1}), patch_pixels(B, config_));  // (B, L, ph·pw, 1)
    x = reshape(x4, {static_cast<std::int64_t>(B), static_cast<std::int64_t>(x4.shape()[1]), -1});
  }
  // with a hidden layer: h_i = relu(W_h x_i + b_h), (B, L, K), in place of x_i
  if (W_h) x = relu((*W_h)(x));
  // a_i = W_p x_i + b_p + P_i: (B, L, A), P (L, A) broadcast over the batch
  return add(W_p(x), tape.param(P));
}

template <class T>
void PatchEncoder<T>::visit(nn::ModuleVisitor<T>& v) {
  if (W_h) v.module("W_h", *W_h);
  v.module("W_p", W_p);
  v.parameter("P", P);
}

template <class T>
ConvEncoder<T>::ConvEncoder(const CaptionerConfig& config, Rng& rng)
    : conv1(1, config.channels, 3, rng, Conv2dOptions{1, 1}),
      conv2(config.channels, 2 * config.channels, 3, rng, Conv2dOptions{1, 1}),
      W_p(2 * config.channels, config.annotation_size, rng),
      P(position_embedding<T>(config, rng)),
      config_(config) {}

template <class T>
Variable<T> ConvEncoder<T>::forward(Tape<T>& tape, const Tensor<T>& images) {
  return forward(tape, tape.constant(images));
}

template <class T>
Variable<T> ConvEncoder<T>::forward(Tape<T>& tape, const Variable<T>& images) {
  check_images(images.value(), config_, "ConvEncoder");
  const std::size_t B = images.shape()[0];
  const auto C2 = static_cast<std::int64_t>(2 * config_.channels);
  // x: (B, 1, H, W), one input channel
  Variable<T> x = reshape(images, {static_cast<std::int64_t>(B), 1, static_cast<std::int64_t>(config_.image_height),
                                   static_cast<std::int64_t>(config_.image_width)});
  // (B, C, H/2, W/2)
  Variable<T> h1 = max_pool2d(relu(conv1(x)), 2);
  // f: (B, 2C, H/4, W/4), then one feature vector per grid position: (B, L, 2C)
  Variable<T> f = max_pool2d(relu(conv2(h1)), 2);
  Variable<T> f_i = transpose(reshape(f, {static_cast<std::int64_t>(B), C2, -1}), 1, 2);
  // a_i = W_p f_i + b_p + P_i: (B, L, A)
  return add(W_p(f_i), tape.param(P));
}

template <class T>
void ConvEncoder<T>::visit(nn::ModuleVisitor<T>& v) {
  v.module("conv1", conv1);
  v.module("conv2", conv2);
  v.module("W_p", W_p);
  v.parameter("P", P);
}

// ---- the captioner ---------------------------------------------------------------------------------------------

namespace {

DecoderConfig captioner_decoder_config(const CaptionerConfig& config) {
  config.validate();
  DecoderConfig d;
  d.kind = DecoderKind::bahdanau;
  d.score = ScoreKind::additive;
  d.cell = config.cell;
  d.vocab_size = config.vocab_size;
  d.embedding_dim = config.embedding_dim;
  d.hidden_size = config.hidden_size;
  d.num_layers = 1;
  d.annotation_size = config.annotation_size;
  d.encoder_directions = 1;
  d.attention_size = config.attention_size;
  d.padding_id = pad_id;
  return d;
}

template <class T>
std::unique_ptr<nn::Module<T>> make_image_encoder(const CaptionerConfig& config, Rng& rng) {
  config.validate();
  if (config.encoder == ImageEncoderKind::patches) return std::make_unique<PatchEncoder<T>>(config, rng);
  return std::make_unique<ConvEncoder<T>>(config, rng);
}

}  // namespace

// One generator for all initial weights, drawn in this order: encoder, init_h (init_c), decoder.
template <class T>
Captioner<T>::Captioner(const CaptionerConfig& config, Rng&& rng)
    : encoder(make_image_encoder<T>(config, rng)),
      init_h(config.annotation_size, config.hidden_size, rng),
      init_c(config.cell == nn::CellKind::lstm
                 ? std::make_unique<nn::Linear<T>>(config.annotation_size, config.hidden_size, rng)
                 : nullptr),
      decoder(std::make_unique<BahdanauDecoder<T>>(captioner_decoder_config(config), rng)),
      config_(config) {}

template <class T>
Variable<T> Captioner<T>::annotate(Tape<T>& tape, const Tensor<T>& images) {
  return annotate(tape, tape.constant(images));
}

template <class T>
Variable<T> Captioner<T>::annotate(Tape<T>& tape, const Variable<T>& images) {
  if (config_.encoder == ImageEncoderKind::patches)
    return static_cast<PatchEncoder<T>&>(*encoder).forward(tape, images);
  return static_cast<ConvEncoder<T>&>(*encoder).forward(tape, images);
}

template <class T>
Encoded<T> Captioner<T>::encode(Tape<T>& tape, const Tensor<T>& images) {
  return encode(tape, tape.constant(images));
}

template <class T>
Encoded<T> Captioner<T>::encode(Tape<T>& tape, const Variable<T>& images) {
  // a_i: (B, L, A) — the annotations play the part of the source words' h_i
  Variable<T> a = annotate(tape, images);
  const std::size_t B = a.shape()[0], L = a.shape()[1];
  nn::RecurrentOutput<T> annotations;
  annotations.outputs = a;
  Encoded<T> result;
  // every grid position is real: no mask; the score's keys U_a a_i are computed once for all steps
  result.memory = decoder->memory(annotations, std::vector<std::int64_t>(B, static_cast<std::int64_t>(L)));
  // ā = (1/L) Σ_i a_i: (B, A); s_0 = tanh(W_init ā + b_init): (B, H)
  Variable<T> a_mean = mean(a, 1);
  result.state.h.push_back(tanh(init_h(a_mean)));
  // an LSTM's c_0 = W_init_c ā + b_init_c
  if (init_c) result.state.c.push_back((*init_c)(a_mean));
  return result;
}

template <class T>
TeacherForced<T> Captioner<T>::forward(Tape<T>& tape, const ImageBatch<T>& batch) {
  const Shape& shape = batch.target_in.shape();
  if (shape.rank() != 2 || batch.images.rank() != 3 || shape[0] != batch.size() || batch.target_out.shape() != shape) {
    throw std::invalid_argument("Captioner::forward: the batch has no captions (target_in " + to_string(shape) +
                                ", images " + to_string(batch.images.shape()) + ")");
  }
  return teacher_forced(*decoder, encode(tape, batch.images), batch.target_in);
}

template <class T>
Variable<T> Captioner<T>::doubly_stochastic_penalty(const std::vector<Variable<T>>& alpha, const Ids& target_out) {
  const std::size_t B = target_out.shape()[0], steps = target_out.shape()[1];
  if (alpha.size() != steps) {
    throw std::invalid_argument("doubly_stochastic_penalty: " + std::to_string(alpha.size()) + " attention steps for " +
                                std::to_string(steps) + " target steps");
  }
  // m_bt = 1 at the caption's real steps (its tokens and the end token), 0 at padding: (B, T, 1)
  Tensor<T> m(Shape{B, steps, 1});
  for (std::size_t i = 0; i < B * steps; ++i) m.data()[i] = target_out.data()[i] != pad_id ? T(1) : T(0);
  Tape<T>& tape = alpha.front().tape();
  // Σ_t α_ti over the real steps: (B, L)
  Variable<T> total = sum(mul(stack(alpha, 1), tape.constant(std::move(m))), 1);
  // (1/B) Σ_b Σ_i (1 − Σ_t α_ti)²
  return mul(sum(pow(T(1) - total, T(2))), T(1) / static_cast<T>(B));
}

template <class T>
Variable<T> Captioner<T>::loss(Tape<T>& tape, const ImageBatch<T>& batch, double penalty_factor) {
  TeacherForced<T> out = forward(tape, batch);
  // -(1/N) Σ_{b,t: y_bt ≠ pad} log p(y_bt | y_b,<t, image_b)
  Variable<T> loss = cross_entropy(out.logits, batch.target_out, pad_id);
  if (config_.doubly_stochastic == 0) return loss;
  // + λ (1/B) Σ_b Σ_i (1 − Σ_t α_ti)²
  return add(loss, mul(doubly_stochastic_penalty(out.alpha, batch.target_out),
                       static_cast<T>(config_.doubly_stochastic * penalty_factor)));
}

template <class T>
void Captioner<T>::visit(nn::ModuleVisitor<T>& v) {
  v.module("encoder", *encoder);
  v.module("init_h", init_h);
  if (init_c) v.module("init_c", *init_c);
  v.module("decoder", *decoder);
}

std::vector<double> attention_map(const CaptionerConfig& config, const std::vector<float>& alpha) {
  const std::size_t rows = config.grid_rows(), columns = config.grid_columns();
  if (alpha.size() != rows * columns) {
    throw std::invalid_argument("attention_map: " + std::to_string(alpha.size()) + " weights for a grid of " +
                                std::to_string(rows) + "×" + std::to_string(columns));
  }
  const bool conv = config.encoder == ImageEncoderKind::conv;
  const std::size_t height = conv ? 4 : config.patch_height, width = conv ? 4 : config.patch_width;
  const std::size_t step = conv ? 4 : config.patch_stride;
  std::vector<double> map(config.image_height * config.image_width, 0.0);
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    const double share = alpha[i] / static_cast<double>(height * width);
    const std::size_t top = (i / columns) * step, left = (i % columns) * step;
    for (std::size_t r = top; r < top + height; ++r)
      for (std::size_t c = left; c < left + width; ++c) map[r * config.image_width + c] += share;
  }
  return map;
}

double mean_column(const CaptionerConfig& config, const std::vector<float>& alpha) {
  const std::size_t columns = config.grid_columns();
  double mean = 0;
  for (std::size_t i = 0; i < alpha.size(); ++i) mean += alpha[i] * config.pixel_column(i % columns);
  return mean;
}

bool moves_left_to_right(const CaptionerConfig& config, const Hypothesis& hypothesis) {
  double previous = -1;  // below every column
  for (std::size_t t = 0; t < hypothesis.tokens.size() && t < hypothesis.attention.size(); ++t) {
    const double m_t = mean_column(config, hypothesis.attention[t]);
    if (!(m_t > previous)) return false;
    previous = m_t;
  }
  return true;
}

template <class T>
std::vector<Hypothesis> decode(Captioner<T>& model, const Tensor<T>& images, const SearchOptions& options) {
  check_images(images, model.config(), "decode");
  TapeWithContext<T> on(Context{nullptr, options.products});  // the products of the search's precision
  Tape<T>& tape = on.tape;
  NoGradGuard<T> no_grad(tape);
  const Encoded<T> encoded = model.encode(tape, images);
  const auto L = static_cast<std::int64_t>(encoded.memory.annotations.shape()[1]);
  return decode(*model.decoder, encoded, std::vector<std::int64_t>(images.shape()[0], L), options,
                model.config().max_length);
}

#define ATTEND_INSTANTIATE(T)                                                   \
  template Tensor<T> extract_patches(const Tensor<T>&, const CaptionerConfig&); \
  template class PatchEncoder<T>;                                               \
  template class ConvEncoder<T>;                                                \
  template class Captioner<T>;                                                  \
  template std::vector<Hypothesis> decode(Captioner<T>&, const Tensor<T>&, const SearchOptions&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend::models
