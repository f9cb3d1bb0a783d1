// The kinds of model the `attend` program trains, behind one interface: a ModelKind owns its flags and its
// configuration, builds a new model for a task's vocabularies, and reads one back from a model file; a Model computes
// a training batch's loss, decodes inputs and draws its attention. The kinds are one file each in apps/model_kinds/,
// registered in apps/model_kinds/registry.cpp (docs/reference/attend.md describes them).
// A task is trained with the kind `--arch` names, by default the first registered kind that reads its input
// (task.hpp's InputKind).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/task.hpp"
#include "models/attribution.hpp"
#include "models/search.hpp"
#include "nn/module.hpp"

namespace attend::app {

// The flags several model kinds share: the model's (--cell, --hidden, --embed, --attention-size, --layers,
// --dropout) and the training settings a kind may give its own default (--lr, --warmup, --lr-drop). Holds the values
// given on the command line (empty: not given), a kind's defaults (ModelKind::defaults) and the two merged.
struct ModelFlags {
  std::optional<std::string> cell;
  std::optional<std::size_t> hidden_size, embedding_dim, attention_size, layers;
  std::optional<double> dropout;
  std::optional<double> learning_rate, lr_drop;
  std::optional<std::size_t> warmup;
};

// Inputs to decode: token ids (text) or images, as the model reads them.
struct ModelInputs {
  std::vector<std::vector<std::int64_t>> sources;
  std::vector<const data::Image*> images;
};

// One decoded input as its attention picture shows it: its source tokens (text) or its image.
struct PictureInput {
  std::vector<std::string> source_tokens;
  const data::Image* image = nullptr;
};

// The attention a model's decode records for each output token (Hypothesis::attention): `layers` × `heads` maps, each
// over the source's tokens, or for an image model over a grid of grid_rows × grid_columns positions (row by row).
struct AttentionLayout {
  std::size_t layers = 1, heads = 1;
  std::size_t grid_rows = 0, grid_columns = 0;  // 0: the source's tokens
};

// One kind of attention of an explained output, every layer and head: `queries` rows over `keys` columns each,
// weights[((l · heads + h) · queries + q) · keys + k].
struct AttentionMaps {
  std::string name;  // "cross": the output over the input; "encoder": the input over itself; "decoder": the output over
                     // itself so far (causal)
  std::size_t layers = 1, heads = 1, queries = 0, keys = 0;
  std::vector<float> weights;
};

// What attend serve's explorer shows of one input (Model::explain).
struct Explanation {
  models::Hypothesis output;  // as decode gives it; its attention rows hold every map (attention_layout())
  AttentionLayout layout;
  models::SearchTree tree;               // the search; its nodes' attention rows as the output's
  std::vector<AttentionMaps> attention;  // "cross" first (the rows decode recorded), then the model's others
  // What only this kind of model has to show, by name: each key an object that POST /v1/explain's answer carries as it
  // is and the explorer draws in a panel of its own when it knows the name (a recurrent decoder's "equations", an image
  // model's "pixels": docs/reference/serve.md). A kind adds its own in its explain(); nothing else names them.
  nlohmann::ordered_json extras = nlohmann::ordered_json::object();
  // Gradient attribution of the output over the input's positions (Model::attribute), when asked: gradient × input,
  // then integrated gradients.
  std::vector<models::Attribution<float>> attribution;
};

// A float as JSON shows it: the shortest decimal that reads back as the same float (0.1f is 0.1, not
// 0.10000000149011612); and n of them as a JSON array.
double shortest(float value);
nlohmann::ordered_json float_array(const float* values, std::size_t n);

class Model {
 public:
  virtual ~Model() = default;
  virtual const char* format() const = 0;  // the model file's "format": "attend-" and the kind's name
  virtual nn::Module<float>& module() = 0;
  virtual nlohmann::json config_json() const = 0;
  // "model bahdanau gru bidirectional" (the caller adds the parameter count).
  virtual std::string describe() const = 0;
  virtual Variable<float> loss(Tape<float>& tape, const TrainingBatch& batch) = 0;
  // Decodes every input with `search` in batches; the model is put in evaluation mode.
  virtual std::vector<models::Hypothesis> decode(const ModelInputs& inputs, const models::SearchOptions& search) = 0;
  // Scores the model adds to the task's (an image model's left_to_right: how often its attention moves rightwards).
  virtual void add_scores(const std::vector<models::Hypothesis>& outputs, Scores& scores) const;
  // InputError when the model has no attention to draw (the vanilla decoder).
  virtual void check_picture() const {}
  // predict --layer/--head: which of several attentions the picture draws, 1-based, 0 = the default (the last layer,
  // the mean of the heads). InputError when the model has no such layer or head, or (the default) only one attention.
  virtual void choose_attention(std::size_t layer, std::size_t head);
  // Whether decode records attention weights at all (the vanilla decoder has none).
  virtual bool has_attention() const { return true; }
  // attend serve: decode records every map (layers × heads) rather than the one the picture shows, or (false) the
  // picture's again; what a row then holds.
  virtual void record_every_attention(bool every);
  virtual AttentionLayout attention_layout() const { return {}; }
  // One input decoded with `search` (its tree kept, every attention map recorded), and everything the explorer shows of
  // it. This base records the search and the cross-attention; a kind adds what else its model has.
  virtual Explanation explain(const ModelInputs& one, models::SearchOptions search);
  // Gradient attribution of `output` (the search's for `one`) over the input's positions, one row per output token
  // with an attention row (the end token's included when finished): gradient × input, then integrated gradients from
  // the padding baseline with `steps` points (models/attribution.hpp), in float32. Empty for a kind without it.
  // `wanted` is asked between passes; false stops the work with models::AttributionStopped.
  virtual std::vector<models::Attribution<float>> attribute(const ModelInputs& one, const models::Hypothesis& output,
                                                            std::size_t steps, const std::function<bool()>& wanted);
  // The SVG of one output's attention: `rows` are its output tokens (the end token included).
  virtual std::string picture(const PictureInput& input, const std::vector<std::string>& rows,
                              const models::Hypothesis& output, const std::string& title) const = 0;
};

class ModelKind {
 public:
  virtual ~ModelKind() = default;
  virtual const char* name() const = 0;    // the --arch value
  virtual const char* format() const = 0;  // "attend-" and the name
  virtual InputKind input() const = 0;
  // Adds the kind's own flags to `train` and returns them: given with a task whose model is another kind, each is
  // refused.
  virtual std::vector<CLI::Option*> add_flags(CLI::App& train) = 0;
  // The kind's defaults of the shared flags, which --help lists by kind. A model flag (--cell … --dropout) the kind
  // has no default for is one it does not take: given, it is refused ("--layers is only for --arch A, B"). A training
  // setting (--lr, --warmup, --lr-drop) it has none for keeps TrainSettings' default.
  virtual ModelFlags defaults() const = 0;
  // What a refusal of a shared flag adds for this kind ("its sizes are --d-model, --heads and --ff"); empty: nothing.
  virtual std::string refusal_hint() const { return ""; }
  // After parsing, for the chosen task: the shared model flags (given, else the kind's defaults; the ones the kind
  // has no default for are empty) and the task's seed into the configuration. InputError for a value it refuses.
  virtual void finish(const ModelFlags& flags, const Task& task) = 0;
  // Checks the configuration before any data is read (the vocabulary sizes are not known yet: any will do).
  // Throws std::invalid_argument naming the field.
  virtual void check(const Task& task) const = 0;
  // A new model for the task's vocabularies, its initial weights drawn from the configuration's seed.
  virtual std::unique_ptr<Model> build(const Task& task, const data::Vocabulary& source,
                                       const data::Vocabulary& target) const = 0;
  // The model a file's metadata describes (its weights are loaded by the caller). Throws InputError naming the file
  // when the configuration does not fit the vocabularies or asks for more weights than the file holds.
  virtual std::unique_ptr<Model> load(const std::string& path, const nlohmann::json& config,
                                      const data::Vocabulary& source, const data::Vocabulary& target) const = 0;
};

// ---- the registry (apps/model_kinds/registry.cpp: one line a kind) ----
// Every kind, new and unconfigured, in registration order.
std::vector<std::unique_ptr<ModelKind>> model_kinds();
// The first kind that reads `input`, and the kind of a model file's format (nullptr: none).
std::unique_ptr<ModelKind> model_kind_for(InputKind input);
// Every kind's name, in registration order, for --arch.
std::vector<std::string> model_kind_names();
std::unique_ptr<ModelKind> model_kind_of_format(const std::string& format);

// Runs decode_batch(b, options) for every batch b in [0, batches): one after the other, or — when search.threads > 1
// and there are several batches — on min(search.threads, batches) threads at once, one batch a thread, longest first
// (the highest b), each batch with one thread for its products (OpenBLAS's and oneDNN's thread count is 1 while they
// run, then restored) and options.threads = 1 for its search. The batches are then the parallelism, as a training
// step's shards are (nn::BatchParallel): a step of a batch is many small products and elementwise ops, which threads
// inside each product share poorly. A batch decodes the same whatever thread runs it, so the outputs are the same
// bytes for every thread count. An exception in any batch is rethrown here once every thread has stopped.
// search.trees (one search's trees) is for a single batch: std::invalid_argument with several.
void decode_batches(std::size_t batches, const models::SearchOptions& search,
                    const std::function<void(std::size_t, const models::SearchOptions&)>& decode_batch);

// How many inputs eval and predict decode together (decode_by_length's batches, and each model kind's): 64. A batch
// of 256 gives each product more rows, but the states and gates of all its positions are four times as large: fresh
// memory (page faults) in each decoding thread, and beyond the caches. Measured on 2,000 test inputs
// (docs/performance.md, "Batches of 64"), 64 decoded as fast or faster for every model kind, precision (float32, int8)
// and search (greedy, beam 5) tried, up to 3.9×.
constexpr std::size_t decode_batch_size = 64;

// The decoder's outputs for many sources, decoded in batches of `batch_size` sources of similar length (little
// padding) by `decode_batch`, through decode_batches (on search.threads threads); the results come back in the
// sources' order.
using DecodeBatch = std::function<std::vector<models::Hypothesis>(const std::vector<std::vector<std::int64_t>>&,
                                                                  const models::SearchOptions&)>;
std::vector<models::Hypothesis> decode_by_length(const std::vector<std::vector<std::int64_t>>& sources,
                                                 std::size_t batch_size, const models::SearchOptions& search,
                                                 const DecodeBatch& decode_batch);

// The attention heatmap of a text model's output: source tokens across, output tokens (rows) down.
std::string text_attention_picture(const PictureInput& input, const std::vector<std::string>& rows,
                                   const models::Hypothesis& output, const std::string& title);

// Throws InputError unless the weights a configuration asks for fit in the file: `products` are element counts of
// some of the model's weights (a × b each); `tensors` a lower bound on the number of tensors it has.
void check_sizes_fit(const std::string& path, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& products,
                     std::uint64_t tensors);

}  // namespace attend::app
