// The transformer model kind (model.hpp): models::TransformerModel, Vaswani et al.'s encoder-decoder
// (docs/14-transformer.md, docs/reference/models.md); reads text. Its flags: --d-model, --heads, --ff, --norm,
// --positions, --label-smoothing, --tie-embeddings, and the shared --layers (encoder and decoder layers each, default
// 2) and --dropout (0.1); when not given, --lr is 0.001 (the peak) and --warmup 1000. --cell, --hidden, --embed and
// --attention-size are the recurrent models' and refused.
#include "models/transformer.hpp"

#include <CLI/CLI.hpp>

#include "apps/commands.hpp"
#include "apps/flags.hpp"
#include "apps/model.hpp"
#include "models/attribution.hpp"

namespace attend::app {

namespace {

// Every layer's weights of one kind for the first row of a batch, (1, H, T_q, T_k) each, cut to `queries` × `keys`.
AttentionMaps maps(const char* name, const std::vector<Tensor<float>>& layers, std::size_t queries, std::size_t keys) {
  AttentionMaps result{name, layers.size(), layers.at(0).shape()[1], queries, keys, {}};
  for (const Tensor<float>& w : layers) {
    for (std::size_t h = 0; h < result.heads; ++h) {
      for (std::size_t q = 0; q < queries; ++q) {
        const float* row = w.data() + (h * w.shape()[2] + q) * w.shape()[3];
        result.weights.insert(result.weights.end(), row, row + keys);
      }
    }
  }
  return result;
}

class TransformerKindModel : public Model {
 public:
  TransformerKindModel(const models::TransformerConfig& config, double label_smoothing)
      : model_(config), label_smoothing_(label_smoothing) {}
  const char* format() const override { return "attend-transformer"; }
  nn::Module<float>& module() override { return model_; }

  // The model's configuration, and the label smoothing its training uses (so that a resumed run keeps it).
  nlohmann::json config_json() const override {
    nlohmann::json json = model_.config().to_json();
    json["label_smoothing"] = label_smoothing_;
    return json;
  }

  std::string describe() const override {
    const models::TransformerConfig& c = model_.config();
    return "model transformer " + std::string(c.norm_first ? "pre" : "post") + "-norm, " +
           std::to_string(c.encoder_layers) + "+" + std::to_string(c.decoder_layers) + " layers, d " +
           std::to_string(c.d_model) + ", " + std::to_string(c.heads) + " heads, ff " + std::to_string(c.ff);
  }

  Variable<float> loss(Tape<float>& tape, const TrainingBatch& batch) override {
    return model_.loss(tape, models::make_batch(batch.sources, batch.targets), label_smoothing_);
  }

  std::vector<models::Hypothesis> decode(const ModelInputs& inputs, const models::SearchOptions& search) override {
    model_.eval();
    return decode_by_length(
        inputs.sources, decode_batch_size, search,
        [&](const std::vector<std::vector<std::int64_t>>& chunk, const models::SearchOptions& each) {
          const models::Batch batch = models::make_batch(chunk);
          return models::decode(model_, batch.source, batch.source_lengths, each, view_);
        });
  }

  void choose_attention(std::size_t layer, std::size_t head) override {
    const models::TransformerConfig& c = model_.config();
    if (layer > c.decoder_layers) {
      throw InputError("--layer " + std::to_string(layer) + ": the model has " + std::to_string(c.decoder_layers) +
                       " decoder layers");
    }
    if (head > c.heads) {
      throw InputError("--head " + std::to_string(head) + ": the model has " + std::to_string(c.heads) + " heads");
    }
    view_.layer = static_cast<int>(layer) - 1;  // 0 (the default) → −1: the last layer
    view_.head = static_cast<int>(head) - 1;    // 0 → −1: the mean of the heads
  }

  void record_every_attention(bool every) override { view_.every = every; }

  AttentionLayout attention_layout() const override {
    if (!view_.every) return {};
    return {model_.config().decoder_layers, model_.config().heads};
  }

  // Besides the search and the cross-attention it recorded, the encoder's and the decoder's self-attention, from one
  // teacher-forced pass of the input and the output (whose cross-attention rows are the search's: a models test).
  Explanation explain(const ModelInputs& one, models::SearchOptions search) override {
    Explanation result = Model::explain(one, search);
    TapeWithContext<float> on(Context{nullptr, search.products});  // the products of the search's precision
    Tape<float>& tape = on.tape;
    NoGradGuard<float> no_grad(tape);
    nn::AttentionWeights<float> weights;
    model_.forward(tape, models::make_batch({one.sources.at(0)}, {result.output.tokens}), &weights);
    const std::size_t rows = result.output.attention.size();  // the output's tokens, the end token included
    result.attention.push_back(maps("encoder", weights.encoder, one.sources[0].size(), one.sources[0].size()));
    result.attention.push_back(maps("decoder", weights.decoder, rows, rows));
    return result;
  }

  // Besides the gradients, attention rollout through the encoder (models::attention_rollout).
  std::vector<models::Attribution<float>> attribute(const ModelInputs& one, const models::Hypothesis& output,
                                                    std::size_t steps, const std::function<bool()>& wanted) override {
    std::vector<models::Attribution<float>> result =
        models::gradient_attributions<float>(model_, one.sources.at(0), output, steps, {}, wanted);
    if (result.empty()) return result;
    Tape<float> tape;
    NoGradGuard<float> no_grad(tape);
    nn::AttentionWeights<float> weights;
    model_.forward(tape, models::make_batch({one.sources.at(0)}, {output.tokens}), &weights);
    result.push_back(models::attention_rollout(weights, result[0].rows.shape()[0]));
    return result;
  }

  // The heatmap shows one decoder layer's cross-attention (default: the last), one head's or the mean of the heads.
  std::string picture(const PictureInput& input, const std::vector<std::string>& rows, const models::Hypothesis& output,
                      const std::string& title) const override {
    const std::size_t layers = model_.config().decoder_layers;
    const std::string layer = "layer " + std::to_string(view_.layer < 0 ? layers : std::size_t(view_.layer) + 1) +
                              " of " + std::to_string(layers);
    const std::string head = view_.head < 0 ? "mean of the heads" : "head " + std::to_string(view_.head + 1);
    return text_attention_picture(input, rows, output, title + " (" + layer + ", " + head + ")");
  }

 private:
  models::TransformerModel<float> model_;
  double label_smoothing_;
  models::AttentionView view_;  // what decode records for the picture
};

class TransformerKind : public ModelKind {
 public:
  const char* name() const override { return "transformer"; }
  const char* format() const override { return "attend-transformer"; }
  InputKind input() const override { return InputKind::text; }

  std::vector<CLI::Option*> add_flags(CLI::App& train) override {
    return {
        train.add_option("--d-model", config_.d_model, "transformer: the model's width D")
            ->check(whole(16384))
            ->capture_default_str(),
        train.add_option("--heads", config_.heads, "transformer: attention heads (D a multiple of them)")
            ->check(whole(1024))
            ->capture_default_str(),
        train.add_option("--ff", config_.ff, "transformer: the feed-forward's inner size")
            ->check(whole(65536))
            ->capture_default_str(),
        train.add_option("--norm", norm_, "transformer: post (the paper: x = norm(x + f(x))) or pre (x + f(norm(x)))")
            ->check(CLI::IsMember({"post", "pre"}))
            ->capture_default_str(),
        train.add_option("--positions", positions_, "transformer: sinusoidal or learned positions")
            ->check(CLI::IsMember({"sinusoidal", "learned"}))
            ->capture_default_str(),
        train.add_option("--label-smoothing", label_smoothing_, "transformer: ε of the label-smoothed loss")
            ->check(number_in(0.0, 0.99))
            ->capture_default_str(),
        train.add_flag("--tie-embeddings", config_.tie_embeddings,
                       "transformer: the output layer's weight is the target embedding"),
    };
  }

  // The base model's schedule (Vaswani et al. 2017, §5.3) at the course's scale: a peak rate of 0.001, 1000 warm-up
  // steps; 2 layers each side, dropout 0.1.
  ModelFlags defaults() const override {
    ModelFlags d;
    d.layers = 2;
    d.dropout = 0.1;
    d.learning_rate = 1e-3;
    d.warmup = 1000;
    return d;
  }

  std::string refusal_hint() const override { return "the Transformer's sizes are --d-model, --heads and --ff"; }

  void finish(const ModelFlags& flags, const Task& task) override {
    config_.encoder_layers = config_.decoder_layers = *flags.layers;
    config_.dropout = *flags.dropout;
    config_.norm_first = norm_ == "pre";
    config_.positions = models::position_kind_from_string(positions_);
    if (config_.positions == models::PositionKind::learned && task.settings.max_source_length > config_.max_positions) {
      throw InputError("--max-length " + std::to_string(task.settings.max_source_length) + ": learned positions hold " +
                       std::to_string(config_.max_positions) + " positions (--positions sinusoidal has no limit)");
    }
    config_.seed = task.settings.seed;
  }

  void check(const Task&) const override { configured(data::Vocabulary().size(), data::Vocabulary().size()); }

  std::unique_ptr<Model> build(const Task&, const data::Vocabulary& source,
                               const data::Vocabulary& target) const override {
    return std::make_unique<TransformerKindModel>(configured(source.size(), target.size()), label_smoothing_);
  }

  std::unique_ptr<Model> load(const std::string& path, const nlohmann::json& json, const data::Vocabulary& source,
                              const data::Vocabulary& target) const override {
    const auto c = models::TransformerConfig::from_json(json);
    if (c.source_vocab_size != source.size() || c.target_vocab_size != target.size()) {
      throw InputError("model file " + path + ": the vocabulary sizes do not match the model configuration");
    }
    double label_smoothing = 0.0;
    try {
      label_smoothing = json.at("label_smoothing").get<double>();
    } catch (const nlohmann::json::exception&) {
      throw std::invalid_argument("model config: missing or malformed field \"label_smoothing\"");
    }
    // the embeddings (V × D), a feed-forward weight (F × D), an attention's (3D × D), tensors in every layer
    check_sizes_fit(path,
                    {{c.source_vocab_size, c.d_model},
                     {c.target_vocab_size, c.d_model},
                     {c.ff, c.d_model},
                     {3 * c.d_model, c.d_model}},
                    c.encoder_layers + c.decoder_layers);
    return std::make_unique<TransformerKindModel>(c, label_smoothing);
  }

 private:
  models::TransformerConfig configured(std::size_t source_size, std::size_t target_size) const {
    models::TransformerConfig config = config_;
    config.source_vocab_size = source_size;
    config.target_vocab_size = target_size;
    config.validate();
    return config;
  }

  models::TransformerConfig config_;
  std::string norm_ = "post";
  std::string positions_ = "sinusoidal";
  double label_smoothing_ = 0.1;
};

}  // namespace

std::unique_ptr<ModelKind> make_transformer_kind() { return std::make_unique<TransformerKind>(); }

}  // namespace attend::app
