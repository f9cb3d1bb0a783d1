// The seq2seq model kind (model.hpp): models::Seq2seq, an encoder over the source and a vanilla, Bahdanau or Luong
// decoder (docs/reference/models.md); reads text. Its flags: --decoder (kept in the model's configuration),
// --bidirectional,
// --no-input-feeding, and the shared --cell, --hidden, --embed, --attention-size, --layers, --dropout (between encoder
// layers), with the defaults of defaults().
#include "models/seq2seq.hpp"

#include <CLI/CLI.hpp>
#include <cmath>

#include "apps/flags.hpp"
#include "apps/model.hpp"
#include "models/attribution.hpp"

namespace attend::app {

namespace {

class Seq2seqModel : public Model {
 public:
  explicit Seq2seqModel(const models::Seq2seqConfig& config) : model_(config) {}
  const char* format() const override { return "attend-seq2seq"; }
  nn::Module<float>& module() override { return model_; }
  nlohmann::json config_json() const override { return model_.config().to_json(); }

  std::string describe() const override {
    const models::Seq2seqConfig& c = model_.config();
    return "model " + c.decoder_name() + " " + nn::to_string(c.cell) + (c.bidirectional ? " bidirectional" : "");
  }

  Variable<float> loss(Tape<float>& tape, const TrainingBatch& batch) override {
    return model_.loss(tape, models::make_batch(batch.sources, batch.targets));
  }

  std::vector<models::Hypothesis> decode(const ModelInputs& inputs, const models::SearchOptions& search) override {
    model_.eval();
    return decode_by_length(
        inputs.sources, decode_batch_size, search,
        [&](const std::vector<std::vector<std::int64_t>>& chunk, const models::SearchOptions& each) {
          const models::Batch batch = models::make_batch(chunk);
          return models::decode(model_, batch.source, batch.source_lengths, each);
        });
  }

  bool has_attention() const override { return model_.config().decoder != models::DecoderKind::vanilla; }

  void check_picture() const override {
    if (!has_attention()) {
      throw InputError("--svg: the vanilla decoder has no attention weights to draw");
    }
  }

  std::string picture(const PictureInput& input, const std::vector<std::string>& rows, const models::Hypothesis& output,
                      const std::string& title) const override {
    return text_attention_picture(input, rows, output, title);
  }

  // Besides the search and its weights, "equations": the numbers of the seed's equations at each output token j — the
  // score's name ("additive", "dot", "general", "concat"), the scores e_ij over the input (α_j is their softmax),
  // ‖c_j‖, and ‖h_i‖ of each input annotation — from one teacher-forced pass of the input and the output.
  Explanation explain(const ModelInputs& one, models::SearchOptions search) override {
    Explanation result = Model::explain(one, search);
    if (!has_attention()) return result;
    TapeWithContext<float> on(Context{nullptr, search.products});  // the products of the search's precision
    Tape<float>& tape = on.tape;
    NoGradGuard<float> no_grad(tape);
    const models::Batch batch = models::make_batch({one.sources.at(0)}, {result.output.tokens});
    const models::TeacherForced<float> forced = model_.forward(tape, batch);
    const std::size_t S = one.sources[0].size();
    const auto norm = [](const float* x, std::size_t n) {
      double total = 0;
      for (std::size_t k = 0; k < n; ++k) total += static_cast<double>(x[k]) * x[k];
      return static_cast<float>(std::sqrt(total));
    };
    nlohmann::ordered_json energies = nlohmann::ordered_json::array();
    std::vector<float> context_norms, annotation_norms;
    for (std::size_t j = 0; j < result.output.attention.size(); ++j) {
      energies.push_back(float_array(forced.energies.at(j).value().data(), S));
      context_norms.push_back(norm(forced.context[j].value().data(), forced.context[j].shape()[1]));
    }
    const Tensor<float>& h = model_.encode(tape, batch.source, batch.source_lengths).memory.annotations.value();
    for (std::size_t i = 0; i < S; ++i) annotation_norms.push_back(norm(h.data() + i * h.shape()[2], h.shape()[2]));
    result.extras["equations"] = {{"score", models::to_string(model_.config().score)},
                                  {"energies", std::move(energies)},
                                  {"context_norms", float_array(context_norms.data(), context_norms.size())},
                                  {"annotation_norms", float_array(annotation_norms.data(), annotation_norms.size())}};
    return result;
  }

  std::vector<models::Attribution<float>> attribute(const ModelInputs& one, const models::Hypothesis& output,
                                                    std::size_t steps, const std::function<bool()>& wanted) override {
    return models::gradient_attributions<float>(model_, one.sources.at(0), output, steps, {}, wanted);
  }

 private:
  models::Seq2seq<float> model_;
};

class Seq2seqKind : public ModelKind {
 public:
  const char* name() const override { return "seq2seq"; }
  const char* format() const override { return "attend-seq2seq"; }
  InputKind input() const override { return InputKind::text; }

  std::vector<CLI::Option*> add_flags(CLI::App& train) override {
    return {
        train.add_option("--decoder", decoder_, "seq2seq: decoder and attention score")
            ->check(CLI::IsMember({"vanilla", "bahdanau", "luong-dot", "luong-general", "luong-concat"}))
            ->capture_default_str(),
        train.add_flag("--bidirectional", bidirectional_, "read the source in both directions"),
        train.add_flag("--no-input-feeding", no_input_feeding_, "Luong: do not feed h̃_{j-1} into the next step"),
    };
  }

  ModelFlags defaults() const override {
    ModelFlags d;
    d.cell = "gru";
    d.hidden_size = 128;
    d.embedding_dim = 32;
    d.attention_size = 0;
    d.layers = 1;
    d.dropout = 0.0;
    return d;
  }

  void finish(const ModelFlags& flags, const Task& task) override {
    if (*flags.layers > 8) {
      throw InputError("--layers: the recurrent model takes 1 to 8 layers, not " + std::to_string(*flags.layers));
    }
    config_.cell = nn::cell_kind_from_string(*flags.cell);
    config_.num_layers = *flags.layers;
    config_.dropout = *flags.dropout;
    config_.hidden_size = *flags.hidden_size;
    config_.embedding_dim = *flags.embedding_dim;
    config_.attention_size = *flags.attention_size;
    config_.bidirectional = bidirectional_;
    config_.input_feeding = !no_input_feeding_;
    config_.seed = task.settings.seed;
  }

  void check(const Task&) const override { configured(data::Vocabulary().size(), data::Vocabulary().size()); }

  std::unique_ptr<Model> build(const Task&, const data::Vocabulary& source,
                               const data::Vocabulary& target) const override {
    return std::make_unique<Seq2seqModel>(configured(source.size(), target.size()));
  }

  std::unique_ptr<Model> load(const std::string& path, const nlohmann::json& json, const data::Vocabulary& source,
                              const data::Vocabulary& target) const override {
    const auto config = models::Seq2seqConfig::from_json(json);
    if (config.source_vocab_size != source.size() || config.target_vocab_size != target.size()) {
      throw InputError("model file " + path + ": the vocabulary sizes do not match the model configuration");
    }
    // the embeddings (V × E), one recurrent weight (H × H), the attention's (A × H), a tensor or more per layer
    check_sizes_fit(path,
                    {{config.source_vocab_size, config.embedding_dim},
                     {config.target_vocab_size, config.embedding_dim},
                     {config.hidden_size, config.hidden_size},
                     {config.attention_size, config.hidden_size}},
                    config.num_layers);
    return std::make_unique<Seq2seqModel>(config);
  }

 private:
  models::Seq2seqConfig configured(std::size_t source_size, std::size_t target_size) const {
    models::Seq2seqConfig config = config_;
    config.set_decoder(decoder_);
    config.source_vocab_size = source_size;
    config.target_vocab_size = target_size;
    config.validate();
    return config;
  }

  models::Seq2seqConfig config_;
  std::string decoder_ = "bahdanau";
  bool bidirectional_ = false;
  bool no_input_feeding_ = false;
};

}  // namespace

std::unique_ptr<ModelKind> make_seq2seq_kind() { return std::make_unique<Seq2seqKind>(); }

}  // namespace attend::app
