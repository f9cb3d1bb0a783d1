// Gradient attribution (models/attribution.hpp): the gradients of each output token's log-probability with respect to
// the source's embeddings equal central differences in double; integrated gradients are complete; float follows
// double; the rank correlation that compares attribution with attention.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "autograd/helpers.hpp"
#include "models/attribution.hpp"
#include "models/batch.hpp"
#include "tests/models/tiny_transformer.hpp"

using namespace attend;
using namespace attend::models;
using attend::testing::message_has;

namespace {

Seq2seqConfig small_model(const std::string& decoder, nn::CellKind cell, bool bidirectional) {
  Seq2seqConfig config;
  config.source_vocab_size = 11;
  config.target_vocab_size = 9;
  config.cell = cell;
  config.bidirectional = bidirectional;
  config.embedding_dim = 6;
  config.hidden_size = 7;
  config.set_decoder(decoder);
  config.seed = 17;
  return config;
}

const std::vector<std::int64_t> source{4, 9, 5, 7, 10};
const std::vector<std::int64_t> output{3, 8, 5, 2};  // the last is <eos>

// log p(y_j | y_<j, x) for one input x (S, E), by the function attributed, without gradients.
double log_prob(const AttributionInputs<double>& in, const Tensor<double>& x, std::size_t j) {
  Tape<double> tape;
  NoGradGuard<double> no_grad(tape);
  const Variable<double> lp =
      in.log_probs(tape, tape.constant(Tensor<double>(Shape{1, x.shape()[0], x.shape()[1]}, x.data(), x.size())), {j});
  return lp.value().data()[static_cast<std::size_t>(in.outputs[j])];
}

// log p(y_j | y_<j, source) for every output token by the model's own teacher-forced forward pass (the logits of every
// step, as training computes them): what the attributed function's gathered rows must equal.
template <class Model>
std::vector<double> forward_log_probs(Model& model) {
  Tape<double> tape;
  NoGradGuard<double> no_grad(tape);
  const Batch batch = make_batch({source}, {std::vector<std::int64_t>(output.begin(), output.end() - 1)});
  Variable<double> logits;
  if constexpr (std::is_same_v<Model, Seq2seq<double>>) {
    logits = model.forward(tape, batch).logits;
  } else {
    logits = model.forward(tape, batch);
  }
  const Tensor<double> lp = log_softmax(logits, -1).value();
  const std::size_t V = lp.shape()[2];
  std::vector<double> result;
  for (std::size_t j = 0; j < output.size(); ++j) result.push_back(lp.data()[j * V + output[j]]);
  return result;
}

// Every row j of output_gradients: within 1e-6·‖g_j‖ + 1e-9 of central differences, and gradient × input's a_ji the
// norm of the central differences ⊙ x_i, within 1e-6 of it or of the row's largest (a pixel's a_ji can be 10⁻⁵ of it).
// The log-probabilities are the model's (`expected`, from its forward pass).
void check_rows(const AttributionInputs<double>& in, const std::vector<double>& expected) {
  const OutputGradients<double> g = output_gradients(in);
  const Attribution<double> gi = gradient_times_input(in);
  const std::size_t J = in.outputs.size(), n = in.x.size(), S = in.x.shape()[0], F = n / S;
  BOOST_TEST(g.gradients.shape() == (Shape{J, S, F}));
  const double eps = 1e-6;
  for (std::size_t j = 0; j < J; ++j) {
    BOOST_TEST(g.log_probs[j] == expected[j], boost::test_tools::tolerance(1e-12));
    BOOST_TEST(log_prob(in, in.x, j) == expected[j], boost::test_tools::tolerance(1e-12));
    double norm = 0, worst = 0;
    for (std::size_t e = 0; e < n; ++e) norm += g.gradients.data()[j * n + e] * g.gradients.data()[j * n + e];
    norm = std::sqrt(norm);
    BOOST_TEST(norm > 1e-6);                  // something to compare
    std::vector<double> by_position(S, 0.0);  // ‖numeric gradient ⊙ x_i‖², gradient × input's
    for (std::size_t e = 0; e < n; ++e) {
      Tensor<double> plus = in.x, minus = in.x;
      plus.data()[e] += eps;
      minus.data()[e] -= eps;
      const double numeric = (log_prob(in, plus, j) - log_prob(in, minus, j)) / (2 * eps);
      worst = std::max(worst, std::abs(numeric - g.gradients.data()[j * n + e]));
      by_position[e / F] += numeric * in.x.data()[e] * numeric * in.x.data()[e];
    }
    BOOST_TEST_INFO("row " << j << ": ‖g‖ " << norm << ", worst difference " << worst);
    BOOST_TEST(worst <= 1e-6 * norm + 1e-9);
    const double largest = std::sqrt(*std::max_element(by_position.begin(), by_position.end()));
    for (std::size_t i = 0; i < S; ++i) {  // within 1e-6 of itself or of the row's largest
      const double a = gi.values.data()[j * S + i], numeric = std::sqrt(by_position[i]);
      BOOST_TEST(std::abs(a - numeric) <= 1e-6 * std::max(numeric, largest),
                 "a_" << j << i << " " << a << ", " << numeric);
    }
  }
}

// Integrated gradients with `steps` points: each row sums to log p(y_j | x) − log p(y_j | x') within 1 % (+ `floor`);
// both methods' rows are shares (≥ 0, summing to 1).
void check_complete(const AttributionInputs<double>& in, std::size_t steps, double floor) {
  const Attribution<double> ig = integrated_gradients(in, steps);
  const Attribution<double> gi = gradient_times_input(in);
  const std::size_t S = in.x.shape()[0];
  BOOST_TEST(ig.steps == steps);
  BOOST_TEST(to_string(ig.method) == "integrated_gradients");
  for (std::size_t j = 0; j < in.outputs.size(); ++j) {
    double total = 0, ig_share = 0, gi_share = 0;
    for (std::size_t i = 0; i < S; ++i) {
      total += ig.values.data()[j * S + i];
      ig_share += ig.rows.data()[j * S + i];
      gi_share += gi.rows.data()[j * S + i];
      BOOST_TEST(gi.rows.data()[j * S + i] >= 0.0);
    }
    BOOST_TEST_INFO("row " << j << ": Σ a " << total << ", change " << ig.change[j]);
    BOOST_TEST(std::abs(ig.change[j]) > 1e-3);
    BOOST_TEST(std::abs(total - ig.change[j]) <= 0.01 * std::abs(ig.change[j]) + floor);
    BOOST_TEST(ig_share == 1.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(gi_share == 1.0, boost::test_tools::tolerance(1e-12));
  }
  // the change is the log-probability at x less that at the baseline
  BOOST_TEST(ig.change[0] == log_prob(in, in.x, 0) - log_prob(in, in.baseline, 0), boost::test_tools::tolerance(1e-9));
}

TransformerConfig small_transformer() { return attend::testing::tiny_transformer(11, 23); }

// A tiny captioner of 8×8 images: 4×4 patches with stride 2 (a 3×3 grid; `hidden` > 0 adds the patches' hidden
// layer), or the conv encoder (a 2×2 grid).
CaptionerConfig small_captioner(ImageEncoderKind encoder, std::size_t hidden) {
  CaptionerConfig c;
  c.encoder = encoder;
  c.image_height = 8, c.image_width = 8;
  c.patch_height = 4, c.patch_width = 4, c.patch_stride = 2;
  c.patch_hidden = hidden;
  c.channels = 2;
  c.annotation_size = 6;
  c.vocab_size = 14;
  c.embedding_dim = 3;
  c.hidden_size = 5;
  c.attention_size = 4;
  c.seed = 3;
  return c;
}

Tensor<double> small_image() {
  Rng rng(21);
  return rng.uniform_tensor<double>(Shape{8, 8}, 0.0, 1.0);
}

const std::vector<std::int64_t> caption{4, 9, 6, 2};  // the last is <eos>

// log p(y_j | y_<j, image) for every caption token by the captioner's own teacher-forced forward pass.
std::vector<double> forward_log_probs(Captioner<double>& model, const Tensor<double>& image) {
  Tape<double> tape;
  NoGradGuard<double> no_grad(tape);
  ImageBatch<double> batch;
  batch.images = image.reshaped(Shape{1, 8, 8});
  batch.target_in = Ids(Shape{1, caption.size()});
  batch.target_out = Ids(Shape{1, caption.size()});
  batch.target_in.data()[0] = sos_id;
  for (std::size_t j = 0; j < caption.size(); ++j) {
    if (j + 1 < caption.size()) batch.target_in.data()[j + 1] = caption[j];
    batch.target_out.data()[j] = caption[j];
  }
  const Tensor<double> lp = log_softmax(model.forward(tape, batch).logits, -1).value();
  const std::size_t V = lp.shape()[2];
  std::vector<double> result;
  for (std::size_t j = 0; j < caption.size(); ++j) result.push_back(lp.data()[j * V + caption[j]]);
  return result;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(attribution)

// Every row, for each decoder kind and cell (the Luong decoders with input feeding read earlier contexts, the
// bidirectional encoder both directions), and for the Transformer (the source embeddings before √D and positions).
BOOST_AUTO_TEST_CASE(gradients_equal_central_differences_on_every_row) {
  const struct {
    const char* decoder;
    nn::CellKind cell;
    bool bidirectional;
  } kinds[] = {{"bahdanau", nn::CellKind::gru, true},
               {"luong-general", nn::CellKind::lstm, false},
               {"luong-concat", nn::CellKind::rnn_tanh, false},
               {"vanilla", nn::CellKind::gru, false}};
  for (const auto& kind : kinds) {
    BOOST_TEST_CONTEXT(kind.decoder << " " << nn::to_string(kind.cell)) {
      Seq2seq<double> model(small_model(kind.decoder, kind.cell, kind.bidirectional));
      model.eval();
      check_rows(attribution_inputs(model, source, output, output.size()), forward_log_probs(model));
    }
  }
  for (const bool norm_first : {false, true}) {
    BOOST_TEST_CONTEXT("transformer, norm_first " << norm_first) {
      TransformerConfig config = small_transformer();
      config.norm_first = norm_first;
      TransformerModel<double> model(config);
      model.eval();
      check_rows(attribution_inputs(model, source, output, output.size()), forward_log_probs(model));
    }
  }
}

// The captioner, over the image's pixels: every row equals central differences — through every patch that holds a
// pixel (with and without the patches' hidden layer) and through the conv encoder — and integrated gradients from a
// blank image are complete within 1 % at 64 steps (with the patches' hidden layer: without it, this model's log p of
// one token moves by only 1e-5 from the blank image to this one, too little to compare; the conv encoder's ReLUs and
// max-pooling put kinks in the path, whose error falls as 1/m only, as the Transformer's below).
BOOST_AUTO_TEST_CASE(captioner_pixels_equal_central_differences_on_every_row) {
  const Tensor<double> image = small_image();
  for (const auto& [encoder, hidden] :
       {std::pair{ImageEncoderKind::patches, std::size_t{0}}, std::pair{ImageEncoderKind::patches, std::size_t{5}},
        std::pair{ImageEncoderKind::conv, std::size_t{0}}}) {
    BOOST_TEST_CONTEXT((encoder == ImageEncoderKind::conv ? "conv" : "patches") << ", hidden " << hidden) {
      Captioner<double> model(small_captioner(encoder, hidden));
      model.eval();
      const AttributionInputs<double> in = attribution_inputs(model, image, caption, caption.size());
      BOOST_TEST(in.x.shape() == (Shape{64, 1}));
      check_rows(in, forward_log_probs(model, image));
      if (hidden > 0) check_complete(in, 64, 0.0);
    }
  }
  Captioner<double> model(small_captioner(ImageEncoderKind::patches, 0));
  BOOST_CHECK_EXCEPTION(attribution_inputs(model, Tensor<double>(Shape{8, 9}), caption, 4), std::invalid_argument,
                        message_has({"an image (8,9)", "expected (8,8)"}));
}

// A row's gradient is its own token's: token 0's log-probability does not depend on the later output tokens, so its
// gradient is the same whatever they are.
BOOST_AUTO_TEST_CASE(each_row_is_its_own_tokens) {
  Seq2seq<double> model(small_model("bahdanau", nn::CellKind::gru, false));
  model.eval();
  const OutputGradients<double> a = output_gradients(attribution_inputs(model, source, output, output.size()));
  const OutputGradients<double> b = output_gradients(attribution_inputs(model, source, {3, 4, 4, 6, 2}, 5));
  const std::size_t n = source.size() * 6;
  for (std::size_t e = 0; e < n; ++e) BOOST_TEST(a.gradients.data()[e] == b.gradients.data()[e]);
  double differ = 0;  // and row 1 does depend on y_1
  for (std::size_t e = 0; e < n; ++e) differ += std::abs(a.gradients.data()[n + e] - b.gradients.data()[n + e]);
  BOOST_TEST(differ > 1e-6);
}

// Integrated gradients are complete: the recurrent decoders (smooth: the midpoint rule's error falls as 1/m²) within
// 1 % at 64 steps; the Transformer, whose feed-forward ReLU puts kinks in the path (the error falls as 1/m: 2.7e-3 at
// 64 steps, 4.8e-4 at 512 on its row whose change is 0.010), within 1 % + 1e-3 at 512.
BOOST_AUTO_TEST_CASE(integrated_gradients_are_complete) {
  for (const char* decoder : {"bahdanau", "luong-dot"}) {
    BOOST_TEST_CONTEXT(decoder) {
      Seq2seq<double> model(small_model(decoder, nn::CellKind::gru, false));
      model.eval();
      check_complete(attribution_inputs(model, source, output, output.size()), 64, 0.0);
    }
  }
  BOOST_TEST_CONTEXT("transformer") {
    TransformerModel<double> model(small_transformer());
    model.eval();
    const AttributionInputs<double> in = attribution_inputs(model, source, output, output.size());
    check_complete(in, 512, 1e-3);
    BOOST_CHECK_EXCEPTION(integrated_gradients(in, 0), std::invalid_argument, message_has({"0 steps"}));
  }
}

// Rollout by hand: identity self-attention leaves the cross-attention as it is; a layer whose heads average to the
// uniform U gives cross · ½(U + I); two layers multiply.
BOOST_AUTO_TEST_CASE(attention_rollout_by_hand) {
  nn::AttentionWeights<double> w;
  w.cross.push_back(Tensor<double>(Shape{1, 1, 2, 2}, {1.0, 0.0, 0.25, 0.75}));
  w.encoder.push_back(Tensor<double>(Shape{1, 1, 2, 2}, {1.0, 0.0, 0.0, 1.0}));
  Attribution<double> r = attention_rollout(w, 2);
  BOOST_TEST(to_string(r.method) == "attention_rollout");
  BOOST_TEST(std::vector<double>(r.rows.data(), r.rows.data() + 4) == (std::vector<double>{1.0, 0.0, 0.25, 0.75}),
             boost::test_tools::per_element());
  // heads I and the swap average to U = ½·1: Â = [[.75, .25], [.25, .75]]
  w.encoder[0] = Tensor<double>(Shape{1, 2, 2, 2}, {1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0});
  r = attention_rollout(w, 1);
  BOOST_TEST(r.rows.shape() == (Shape{1, 2}));
  BOOST_TEST(r.rows.data()[0] == 0.75, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.rows.data()[1] == 0.25, boost::test_tools::tolerance(1e-12));
  // twice: Â² = [[.625, .375], [.375, .625]]
  w.encoder.push_back(w.encoder[0]);
  r = attention_rollout(w, 1);
  BOOST_TEST(r.rows.data()[0] == 0.625, boost::test_tools::tolerance(1e-12));
  BOOST_CHECK_EXCEPTION(attention_rollout(w, 3), std::invalid_argument, message_has({"3 output tokens"}));
  w.encoder[1] = Tensor<double>(Shape{1, 1, 3, 3});
  BOOST_CHECK_EXCEPTION(attention_rollout(w, 1), std::invalid_argument, message_has({"(1, heads, 2, 2)"}));
}

// The model's parameters keep their gradients: attribution reads the inputs' gradients only.
BOOST_AUTO_TEST_CASE(parameter_gradients_are_left_alone) {
  Seq2seq<double> model(small_model("bahdanau", nn::CellKind::gru, false));
  model.eval();
  const auto parameters = model.parameters();
  for (const auto& [name, p] : parameters) p->grad = Tensor<double>(p->value.shape(), 0.25);
  const AttributionInputs<double> in = attribution_inputs(model, source, output, output.size());
  gradient_times_input(in);
  integrated_gradients(in, 4);
  for (const auto& [name, p] : parameters) {
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(std::all_of(p->grad.data(), p->grad.data() + p->grad.size(), [](double g) { return g == 0.25; }));
    }
  }
  AttributionInputs<double> wrong = in;
  wrong.baseline = Tensor<double>(Shape{2, 6});
  BOOST_CHECK_EXCEPTION(integrated_gradients(wrong, 4), std::invalid_argument,
                        message_has({"baseline of shape (2,6)"}));
  wrong.outputs.clear();
  BOOST_CHECK_EXCEPTION(gradient_times_input(wrong), std::invalid_argument, message_has({"0 output tokens"}));
}

// The model in float (the same weights, rounded) gives the same shares within 1e-3.
BOOST_AUTO_TEST_CASE(float_follows_double) {
  const Seq2seqConfig config = small_model("bahdanau", nn::CellKind::gru, true);
  Seq2seq<double> exact(config);
  Seq2seq<float> single(config);
  exact.eval();
  single.eval();
  const auto in64 = attribution_inputs(exact, source, output, output.size());
  const auto in32 = attribution_inputs(single, source, output, output.size());
  const Attribution<double> rows64[] = {gradient_times_input(in64), integrated_gradients(in64, 16)};
  const Attribution<float> rows32[] = {gradient_times_input(in32), integrated_gradients(in32, 16)};
  for (std::size_t m = 0; m < 2; ++m) {
    for (std::size_t e = 0; e < rows64[m].rows.size(); ++e) {
      BOOST_TEST(std::abs(rows32[m].rows.data()[e] - rows64[m].rows.data()[e]) <= 1e-3);
    }
  }
}

// `wanted` is asked before every pass (64 rows: 16 points of 4 tokens), and stops the work when it says no.
BOOST_AUTO_TEST_CASE(an_attribution_no_longer_wanted_stops) {
  Seq2seq<double> model(small_model("bahdanau", nn::CellKind::gru, false));
  model.eval();
  AttributionInputs<double> in = attribution_inputs(model, source, output, output.size());
  std::size_t asked = 0;
  in.wanted = [&asked] { return ++asked < 3; };
  BOOST_CHECK_EXCEPTION(integrated_gradients(in, 62), AttributionStopped, message_has({"no longer wanted"}));
  BOOST_TEST(asked == 3u);
  asked = 0;
  in.wanted = [&asked] { return ++asked > 0; };
  integrated_gradients(in, 62);  // 64 points: 4 passes
  BOOST_TEST(asked == 4u);
}

BOOST_AUTO_TEST_CASE(bad_inputs_are_named) {
  Seq2seq<double> model(small_model("bahdanau", nn::CellKind::gru, false));
  BOOST_CHECK_EXCEPTION(attribution_inputs(model, {4, 99}, output, 2), std::invalid_argument,
                        message_has({"source token 99", "[0, 11)"}));
  BOOST_CHECK_EXCEPTION(attribution_inputs(model, source, output, 5), std::invalid_argument,
                        message_has({"5 of 4 output tokens"}));
  BOOST_CHECK_EXCEPTION(output_gradients(attribution_inputs(model, source, {3, 40}, 2)), std::invalid_argument,
                        message_has({"output token 40", "vocabulary of 9"}));
}

// Spearman's ρ: 1 for the same order, −1 reversed, ties at their mean rank, 0 when a row has no order.
BOOST_AUTO_TEST_CASE(rank_correlation_of_rows) {
  const float a[] = {0.1f, 0.5f, 0.2f, 0.9f};
  const float same[] = {1, 3, 2, 4}, reversed[] = {4, 2, 3, 1}, flat[] = {2, 2, 2, 2};
  BOOST_TEST(rank_correlation(a, same, 4) == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(rank_correlation(a, reversed, 4) == -1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(rank_correlation(a, flat, 4) == 0.0);
  BOOST_TEST(rank_correlation(a, a, 1) == 0.0);
  // ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4): 4.5 / √(4.5 · 5)
  const float tied[] = {1, 2, 2, 3}, rising[] = {1, 2, 3, 4};
  BOOST_TEST(rank_correlation(tied, rising, 4) == 4.5 / std::sqrt(22.5), boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_SUITE_END()
