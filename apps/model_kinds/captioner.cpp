// The captioner model kind (model.hpp): models::Captioner, an image encoder (patches or convolutions) and a Bahdanau
// decoder over the image's grid ("Show, Attend and Tell" at toy scale, docs/13-visual-attention.md); reads images.
// Its flags: --encoder, --patch, --stride, --patch-hidden, --channels, --annotation-size, --doubly-stochastic, and the
// shared --cell, --hidden, --embed, --attention-size when given (its own defaults otherwise: H 128, E 16); --lr-drop
// is 0.7 unless given (or --warmup is).
#include "models/captioner.hpp"

#include <CLI/CLI.hpp>
#include <numeric>
#include <optional>
#include <sstream>

#include "apps/commands.hpp"
#include "apps/flags.hpp"
#include "apps/model.hpp"
#include "plot/svg.hpp"

namespace attend::app {

namespace {

class CaptionerModel : public Model {
 public:
  explicit CaptionerModel(const models::CaptionerConfig& config) : model_(config) {}
  const char* format() const override { return "attend-captioner"; }
  nn::Module<float>& module() override { return model_; }
  nlohmann::json config_json() const override { return model_.config().to_json(); }

  // "model patches (8×8, stride 2) → bahdanau gru over 825 positions"
  std::string describe() const override {
    const models::CaptionerConfig& c = model_.config();
    std::ostringstream text;
    text << "model " << models::to_string(c.encoder);
    if (c.encoder == models::ImageEncoderKind::patches) {
      text << " (" << c.patch_height << "×" << c.patch_width << ", stride " << c.patch_stride << ")";
    }
    text << " → bahdanau " << nn::to_string(c.cell) << " over " << c.grid_rows() * c.grid_columns() << " positions";
    return text.str();
  }

  Variable<float> loss(Tape<float>& tape, const TrainingBatch& batch) override {
    std::vector<const data::Image*> pictures;
    for (const data::Image& image : batch.images) pictures.push_back(&image);
    // the penalty is a mean over images: a shard's share of the images over its share of the tokens
    const double factor = batch.whole_rows == 0 ? 1.0
                                                : (static_cast<double>(batch.rows()) * batch.whole_tokens) /
                                                      (static_cast<double>(batch.whole_rows) * batch.tokens);
    return model_.loss(tape, models::make_image_batch<float>(pictures, batch.targets, model_.config()), factor);
  }

  std::vector<models::Hypothesis> decode(const ModelInputs& inputs, const models::SearchOptions& search) override {
    const std::vector<const data::Image*>& images = inputs.images;
    const std::size_t batch_size = decode_batch_size;
    model_.eval();
    std::vector<models::Hypothesis> result(images.size());
    decode_batches(
        (images.size() + batch_size - 1) / batch_size, search, [&](std::size_t b, const models::SearchOptions& each) {
          const std::size_t start = b * batch_size, end = std::min(images.size(), start + batch_size);
          const std::vector<const data::Image*> chunk(images.begin() + static_cast<std::ptrdiff_t>(start),
                                                      images.begin() + static_cast<std::ptrdiff_t>(end));
          const models::ImageBatch<float> batch = models::make_image_batch<float>(chunk, {}, model_.config());
          std::vector<std::size_t> places(end - start);
          std::iota(places.begin(), places.end(), start);
          std::optional<models::PartObserver> part;
          std::vector<models::Hypothesis> decoded =
              models::decode(model_, batch.images, models::for_part(each, std::move(places), part));
          std::move(decoded.begin(), decoded.end(), result.begin() + static_cast<std::ptrdiff_t>(start));
        });
    return result;
  }

  // left_to_right: the fraction of outputs whose attention moves from left to right (captioner.hpp).
  void add_scores(const std::vector<models::Hypothesis>& outputs, Scores& scores) const override {
    double moving = 0;
    for (const auto& h : outputs) moving += models::moves_left_to_right(model_.config(), h) ? 1 : 0;
    scores.emplace_back("left_to_right", outputs.empty() ? 0.0 : moving / static_cast<double>(outputs.size()));
  }

  AttentionLayout attention_layout() const override {
    return {1, 1, model_.config().grid_rows(), model_.config().grid_columns()};
  }

  // Besides the search and its weights, "pixels": each output token's cross-attention row spread over the image's
  // pixels, one map per row (height · width values, row by row, summing to the row's Σ α = 1) — where it looked, as
  // `attend predict --svg` draws it.
  Explanation explain(const ModelInputs& one, models::SearchOptions search) override {
    Explanation result = Model::explain(one, search);
    std::vector<std::vector<double>> maps;
    for (const auto& row : result.output.attention) maps.push_back(models::attention_map(model_.config(), row));
    result.extras["pixels"] = {
        {"height", model_.config().image_height}, {"width", model_.config().image_width}, {"maps", std::move(maps)}};
    return result;
  }

  // Over the image's pixels, from a blank image (models::attribution_inputs for a Captioner).
  std::vector<models::Attribution<float>> attribute(const ModelInputs& one, const models::Hypothesis& output,
                                                    std::size_t steps, const std::function<bool()>& wanted) override {
    return models::gradient_attributions<float>(model_, data::to_tensor(*one.images.at(0)), output, steps, {}, wanted);
  }

  // One panel per output token: its attention spread over the pixels of each grid position.
  std::string picture(const PictureInput& input, const std::vector<std::string>& rows, const models::Hypothesis& output,
                      const std::string& title) const override {
    std::vector<std::vector<double>> maps;
    for (std::size_t t = 0; t < rows.size(); ++t) {
      maps.push_back(models::attention_map(model_.config(), output.attention[t]));
    }
    plot::ImageAttentionOptions picture;
    picture.title = title;
    return plot::image_attention_svg(data::to_tensor(*input.image), rows, maps, picture);
  }

 private:
  models::Captioner<float> model_;
};

class CaptionerKind : public ModelKind {
 public:
  const char* name() const override { return "captioner"; }
  const char* format() const override { return "attend-captioner"; }
  InputKind input() const override { return InputKind::image; }

  std::vector<CLI::Option*> add_flags(CLI::App& train) override {
    return {
        train.add_option("--encoder", encoder_, "digits: image encoder")
            ->check(CLI::IsMember({"patches", "conv"}))
            ->capture_default_str(),
        train.add_option("--patch", config_.patch_width, "digits, patches: patch side (square patches)")
            ->check(whole(64))
            ->capture_default_str(),
        train.add_option("--stride", config_.patch_stride, "digits, patches: step between patches")
            ->check(whole(64))
            ->capture_default_str(),
        train
            .add_option("--patch-hidden", config_.patch_hidden,
                        "digits, patches: size of the per-patch hidden layer (0: a_i linear in the pixels)")
            ->check(CLI::Range(0, 1 << 16))
            ->capture_default_str(),
        train.add_option("--channels", config_.channels, "digits, conv: channels of the first convolution")
            ->check(whole(1024))
            ->capture_default_str(),
        train.add_option("--annotation-size", config_.annotation_size, "digits: size A of each annotation a_i")
            ->check(whole(16384))
            ->capture_default_str(),
        train
            .add_option("--doubly-stochastic", config_.doubly_stochastic,
                        "digits: λ of the regulariser λ Σ_i (1 − Σ_t α_ti)² (0: none)")
            ->check(number_in(0.0, 1e6))
            ->capture_default_str(),
    };
  }

  // The configuration's own sizes, and chapter 13's schedule: the last 30% of the steps at a tenth of the learning
  // rate (docs/results.md, digits). No --layers, no --dropout.
  ModelFlags defaults() const override {
    const models::CaptionerConfig c;
    ModelFlags d;
    d.cell = nn::to_string(c.cell);
    d.hidden_size = c.hidden_size;
    d.embedding_dim = c.embedding_dim;
    d.attention_size = c.attention_size;
    d.lr_drop = 0.7;
    return d;
  }

  void finish(const ModelFlags& flags, const Task& task) override {
    config_.encoder = models::image_encoder_from_string(encoder_);
    config_.patch_height = config_.patch_width;
    config_.cell = nn::cell_kind_from_string(*flags.cell);
    config_.hidden_size = *flags.hidden_size;
    config_.embedding_dim = *flags.embedding_dim;
    config_.attention_size = *flags.attention_size;
    config_.seed = task.settings.seed;
  }

  // The vocabulary is not known yet: the smallest a caption model accepts stands in.
  void check(const Task& task) const override { configured(task, models::unk_id + 2); }

  std::unique_ptr<Model> build(const Task& task, const data::Vocabulary&,
                               const data::Vocabulary& target) const override {
    return std::make_unique<CaptionerModel>(configured(task, target.size()));
  }

  std::unique_ptr<Model> load(const std::string& path, const nlohmann::json& json, const data::Vocabulary&,
                              const data::Vocabulary& target) const override {
    const auto c = models::CaptionerConfig::from_json(json);
    if (c.vocab_size != target.size()) {
      throw InputError("model file " + path + ": the vocabulary size does not match the model configuration");
    }
    // the image (H × W: its patches or pooled grid), the projection of a patch or feature (A × ph·pw, A × 2C), the
    // hidden layer (K × ph·pw, A × K), the recurrent weight (H × H), the attention's (A' × H), the embedding (V × E);
    // the position embeddings (L × A) once the grid's size is known to be sane
    const std::uint64_t patch = c.patch_height * c.patch_width;
    check_sizes_fit(path,
                    {{c.image_height, c.image_width},
                     {c.annotation_size, patch},
                     {c.patch_hidden, patch},
                     {c.annotation_size, c.patch_hidden},
                     {c.annotation_size, 2 * c.channels},
                     {c.hidden_size, c.hidden_size},
                     {c.attention_size, c.hidden_size},
                     {c.vocab_size, c.embedding_dim}},
                    1);
    check_sizes_fit(path, {{c.grid_rows() * c.grid_columns(), c.annotation_size}}, 1);
    return std::make_unique<CaptionerModel>(c);
  }

 private:
  // The configuration for the task's images and a caption vocabulary of `vocab_size`, validated.
  models::CaptionerConfig configured(const Task& task, std::size_t vocab_size) const {
    models::CaptionerConfig config = config_;
    std::tie(config.image_height, config.image_width) = task.image_size();
    config.vocab_size = vocab_size;
    config.validate();
    return config;
  }

  models::CaptionerConfig config_;
  std::string encoder_ = "patches";
};

}  // namespace

std::unique_ptr<ModelKind> make_captioner_kind() { return std::make_unique<CaptionerKind>(); }

}  // namespace attend::app
