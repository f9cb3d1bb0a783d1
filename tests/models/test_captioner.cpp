// The image captioner of the visual-attention chapter: patches, the encoders' equations, s_0 from the mean annotation,
// the doubly stochastic regulariser, gradients of the whole model, its configuration, and decoding over a grid.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>

#include "models/captioner.hpp"
#include "nn/module.hpp"

using namespace attend;
using namespace attend::models;

namespace {

// A tiny model: 8×8 images; patches 4×4 with stride 2 (a 3×3 grid) or the conv encoder (a 2×2 grid).
CaptionerConfig tiny(ImageEncoderKind encoder, nn::CellKind cell, double lambda = 0.0) {
  CaptionerConfig c;
  c.encoder = encoder;
  c.image_height = 8, c.image_width = 8;
  c.patch_height = 4, c.patch_width = 4, c.patch_stride = 2;
  c.patch_hidden = 0;
  c.channels = 2;
  c.annotation_size = 6;
  c.cell = cell;
  c.vocab_size = 14;
  c.embedding_dim = 3;
  c.hidden_size = 5;
  c.attention_size = 4;
  c.max_length = 5;
  c.doubly_stochastic = lambda;
  c.seed = 3;
  return c;
}

// A picture as make_image_batch reads one: any type with height, width and pixels (data::Image is one).
struct Picture {
  std::size_t height = 0, width = 0;
  std::vector<float> pixels;
};

template <class T>
ImageBatch<T> tiny_batch(const CaptionerConfig& config) {
  Rng rng(21);
  const std::size_t H = config.image_height, W = config.image_width;
  std::vector<Picture> images(2, Picture{H, W, std::vector<float>(H * W)});
  for (Picture& image : images)
    for (float& v : image.pixels) v = static_cast<float>(rng.uniform());
  return make_image_batch<T>(std::vector<const Picture*>{&images[0], &images[1]}, {{4, 5, 6}, {7, 8}}, config);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(captioner)

BOOST_AUTO_TEST_CASE(patches_are_cut_row_by_row_from_the_grid) {
  CaptionerConfig config;
  config.image_height = 3, config.image_width = 4;
  config.patch_height = 2, config.patch_width = 2, config.patch_stride = 1;
  BOOST_TEST(config.grid_rows() == 2u);
  BOOST_TEST(config.grid_columns() == 3u);
  // the image 0 1 2 3 / 4 5 6 7 / 8 9 10 11
  Tensor<float> image(Shape{1, 3, 4});
  for (std::size_t i = 0; i < 12; ++i) image.data()[i] = static_cast<float>(i);
  const Tensor<float> x = extract_patches(image, config);
  BOOST_TEST((x.shape() == Shape{1, 6, 4}));
  // position 0 is the top-left 2×2 patch; position 4 is grid row 1, column 1
  const std::vector<float> first(x.data(), x.data() + 4), fifth(x.data() + 16, x.data() + 20);
  BOOST_TEST((first == std::vector<float>{0, 1, 4, 5}));
  BOOST_TEST((fifth == std::vector<float>{5, 6, 9, 10}));
  // where attention on grid column k looks: the centre of its pixel columns
  BOOST_TEST(config.pixel_column(2) == 2.5);
  // (13.8) m_t = Σ_i α_ti · column(i): a one-hot α gives its position's column, a half-half α the midpoint
  std::vector<float> alpha(6, 0.0f);
  alpha[4] = 1.0f;  // grid row 1, column 1: pixel columns 1 … 2
  BOOST_TEST(mean_column(config, alpha) == 1.5);
  alpha[4] = 0.5f, alpha[2] = 0.5f;  // and grid row 0, column 2
  BOOST_TEST(mean_column(config, alpha) == 2.0);
  // the left-to-right test: m_t strictly increasing over the tokens' rows; the end token's row does not count
  Hypothesis h;
  h.tokens = {4, 5};
  h.attention = {{1, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 0}, {1, 0, 0, 0, 0, 0}};  // m = 0.5, 1.5, then <eos> back at 0.5
  BOOST_TEST(moves_left_to_right(config, h));
  h.attention[1] = {0, 0, 0, 1, 0, 0};  // grid row 1, column 0: m = 0.5 again, not to the right
  BOOST_TEST(!moves_left_to_right(config, h));
  h.attention[1] = {0, 0, 0, 0, 0, 0.5f};  // half a weight on column 2: m = 1.25, to the right
  BOOST_TEST(moves_left_to_right(config, h));
  std::swap(h.attention[0], h.attention[1]);  // 1.25 then 0.5
  BOOST_TEST(!moves_left_to_right(config, h));
  // the attention map spreads each weight over its patch's pixels: α_4 = 0.5 over rows 1–2, columns 1–2
  const std::vector<double> map = attention_map(config, alpha);
  BOOST_TEST_REQUIRE(map.size() == 12u);
  BOOST_TEST(map[1 * 4 + 1] == 0.125);
  BOOST_TEST(map[0 * 4 + 2] == 0.125);  // α_2 = 0.5 over rows 0–1, columns 2–3
  BOOST_TEST(map[1 * 4 + 2] == 0.25);   // both patches cover row 1, column 2
  BOOST_TEST(map[2 * 4 + 0] == 0.0);
  config.encoder = ImageEncoderKind::conv;
  BOOST_TEST(config.pixel_column(2) == 9.5);
}

BOOST_AUTO_TEST_CASE(patch_annotations_are_the_projection_plus_the_position_embedding) {
  CaptionerConfig config = tiny(ImageEncoderKind::patches, nn::CellKind::gru);
  for (std::size_t hidden : {0u, 7u}) {
    config.patch_hidden = hidden;
    Captioner<double> model(config);
    const ImageBatch<double> batch = tiny_batch<double>(config);
    Tape<double> tape;
    const Variable<double> a = model.annotate(tape, batch.images);
    auto& encoder = static_cast<PatchEncoder<double>&>(*model.encoder);
    const Tensor<double> x = extract_patches(batch.images, config);
    const std::size_t L = 9, P = 16, A = 6;
    BOOST_TEST_REQUIRE((a.shape() == Shape{2, L, A}));
    BOOST_TEST_REQUIRE((encoder.W_h != nullptr) == (hidden > 0));
    double worst = 0;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t i = 0; i < L; ++i) {
        // the patch x_i, or with the hidden layer h_i = relu(W_h x_i + b_h)
        std::vector<double> h(x.data() + (b * L + i) * P, x.data() + (b * L + i + 1) * P);
        if (hidden) {
          std::vector<double> relu_h(hidden);
          for (std::size_t k = 0; k < hidden; ++k) {
            double pre = encoder.W_h->b.value.data()[k];
            for (std::size_t p = 0; p < P; ++p) pre += encoder.W_h->W.value.data()[k * P + p] * h[p];
            relu_h[k] = std::max(0.0, pre);
          }
          h = relu_h;
        }
        for (std::size_t k = 0; k < A; ++k) {
          // a_i = W_p h_i + b_p + P_i
          double expected = encoder.W_p.b.value.data()[k] + encoder.P.value.data()[i * A + k];
          for (std::size_t p = 0; p < h.size(); ++p) expected += encoder.W_p.W.value.data()[k * h.size() + p] * h[p];
          worst = std::max(worst, std::abs(a.value().data()[(b * L + i) * A + k] - expected));
        }
      }
    BOOST_TEST(worst < 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(the_first_state_is_tanh_of_the_mean_annotation) {
  for (nn::CellKind cell : {nn::CellKind::gru, nn::CellKind::lstm}) {
    const CaptionerConfig config = tiny(ImageEncoderKind::conv, cell);
    Captioner<double> model(config);
    const ImageBatch<double> batch = tiny_batch<double>(config);
    Tape<double> tape;
    const Encoded<double> encoded = model.encode(tape, batch.images);
    const Tensor<double>& a = encoded.memory.annotations.value();
    const std::size_t L = 4, A = 6, H = 5;
    BOOST_TEST_REQUIRE((a.shape() == Shape{2, L, A}));
    BOOST_TEST((encoded.state.c.size() == (cell == nn::CellKind::lstm ? 1u : 0u)));
    double worst = 0;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t h = 0; h < H; ++h) {
        // s_0 = tanh(W_init ā + b_init), ā = (1/L) Σ_i a_i; c_0 = W_init_c ā + b_init_c
        double pre = model.init_h.b.value.data()[h], pre_c = model.init_c ? model.init_c->b.value.data()[h] : 0.0;
        for (std::size_t k = 0; k < A; ++k) {
          double mean = 0;
          for (std::size_t i = 0; i < L; ++i) mean += a.data()[(b * L + i) * A + k] / L;
          pre += model.init_h.W.value.data()[h * A + k] * mean;
          if (model.init_c) pre_c += model.init_c->W.value.data()[h * A + k] * mean;
        }
        worst = std::max(worst, std::abs(encoded.state.h[0].value().data()[b * H + h] - std::tanh(pre)));
        if (model.init_c) worst = std::max(worst, std::abs(encoded.state.c[0].value().data()[b * H + h] - pre_c));
      }
    BOOST_TEST(worst < 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(the_regulariser_is_lambda_times_the_squared_shortfall_of_each_position) {
  const CaptionerConfig config = tiny(ImageEncoderKind::patches, nn::CellKind::gru, 0.7);
  Captioner<double> model(config);
  const ImageBatch<double> batch = tiny_batch<double>(config);
  Tape<double> tape;
  const TeacherForced<double> out = model.forward(tape, batch);
  const std::size_t B = 2, T = 4, L = 9;
  BOOST_TEST_REQUIRE(out.alpha.size() == T);
  // by hand: Σ_b Σ_i (1 − Σ_{t real} α_ti)² / B; the second caption has 3 real steps of 4 (2 digits and the end)
  double expected = 0;
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t real_steps = b == 0 ? 4 : 3;
    for (std::size_t i = 0; i < L; ++i) {
      double total = 0;
      for (std::size_t t = 0; t < real_steps; ++t) total += out.alpha[t].value().data()[b * L + i];
      expected += (1 - total) * (1 - total) / B;
    }
  }
  const double penalty = model.doubly_stochastic_penalty(out.alpha, batch.target_out).value().item();
  BOOST_TEST(penalty == expected, boost::test_tools::tolerance(1e-12));
  // the loss is the cross-entropy plus λ times it
  const double ce = cross_entropy(out.logits, batch.target_out, pad_id).value().item();
  Tape<double> tape2;
  BOOST_TEST(model.loss(tape2, batch).value().item() == ce + 0.7 * expected, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(the_whole_model_matches_finite_differences) {
  for (ImageEncoderKind encoder : {ImageEncoderKind::patches, ImageEncoderKind::conv}) {
    for (nn::CellKind cell : {nn::CellKind::gru, nn::CellKind::lstm}) {
      BOOST_TEST_CONTEXT(to_string(encoder) << " " << nn::to_string(cell)) {
        CaptionerConfig config = tiny(encoder, cell, 0.5);
        config.patch_hidden = cell == nn::CellKind::gru ? 5 : 0;  // with and without the hidden layer
        Captioner<double> model(config);
        const ImageBatch<double> batch = tiny_batch<double>(config);
        GradcheckFn f = [&](Tape<double>& tape, const std::vector<Variable<double>>&) {
          return model.loss(tape, batch);
        };
        const GradcheckResult result = nn::gradcheck_module(model, f, {});
        BOOST_TEST(result.passed, result.message);
        BOOST_TEST(result.checked == model.parameter_count());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(parameters_are_named_by_module_and_equation) {
  Captioner<float> patches(tiny(ImageEncoderKind::patches, nn::CellKind::lstm));
  Captioner<float> conv(tiny(ImageEncoderKind::conv, nn::CellKind::gru));
  std::vector<std::string> names;
  for (const auto& [name, p] : patches.parameters()) names.push_back(name);
  for (const char* expected : {"encoder.W_p.W", "encoder.W_p.b", "encoder.P", "init_h.W", "init_c.W",
                               "decoder.score.W_a", "decoder.output.W"}) {
    BOOST_TEST((std::find(names.begin(), names.end(), expected) != names.end()), expected);
  }
  names.clear();
  for (const auto& [name, p] : conv.parameters()) names.push_back(name);
  for (const char* expected : {"encoder.conv1.W", "encoder.conv2.b", "encoder.P", "init_h.b"}) {
    BOOST_TEST((std::find(names.begin(), names.end(), expected) != names.end()), expected);
  }
  BOOST_TEST((std::find(names.begin(), names.end(), "init_c.W") == names.end()));
  // the same configuration gives the same weights
  Captioner<float> again(tiny(ImageEncoderKind::conv, nn::CellKind::gru));
  BOOST_TEST((conv.parameters().front().second->value.flat() == again.parameters().front().second->value.flat()));
}

BOOST_AUTO_TEST_CASE(config_goes_to_json_and_back_and_bad_fields_are_named) {
  const CaptionerConfig config = tiny(ImageEncoderKind::conv, nn::CellKind::lstm, 0.25);
  const CaptionerConfig back = CaptionerConfig::from_json(config.to_json());
  BOOST_TEST(back.to_json() == config.to_json());
  auto expect_error = [](auto change, const std::string& part) {
    CaptionerConfig c = tiny(ImageEncoderKind::patches, nn::CellKind::gru);
    change(c);
    try {
      c.validate();
      BOOST_FAIL("no error for " << part);
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(std::string(e.what()).find(part) != std::string::npos, e.what());
    }
  };
  expect_error([](CaptionerConfig& c) { c.patch_width = 9; }, "do not fit");
  expect_error([](CaptionerConfig& c) { c.patch_stride = 0; }, "patch_stride is 0");
  expect_error([](CaptionerConfig& c) { c.vocab_size = 4; }, "vocab_size 4");
  expect_error([](CaptionerConfig& c) { c.doubly_stochastic = -1; }, "doubly_stochastic");
  expect_error([](CaptionerConfig& c) { c.doubly_stochastic = std::nan(""); }, "doubly_stochastic");
  expect_error([](CaptionerConfig& c) { c.encoder = ImageEncoderKind::conv, c.image_height = 3; }, "at least 4×4");
  nlohmann::json json = config.to_json();
  json.erase("channels");
  BOOST_CHECK_EXCEPTION(CaptionerConfig::from_json(json), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()).find("\"channels\"") != std::string::npos;
  });
  BOOST_CHECK_THROW(image_encoder_from_string("resnet"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(decoding_an_image_reports_attention_over_every_grid_position) {
  const CaptionerConfig config = tiny(ImageEncoderKind::patches, nn::CellKind::gru);
  Captioner<float> model(config);
  model.eval();
  const ImageBatch<float> batch = tiny_batch<float>(config);
  for (std::size_t beam : {1u, 3u}) {
    const std::vector<Hypothesis> out = decode(model, batch.images, SearchOptions{beam, 0, 1.0});
    BOOST_TEST_REQUIRE(out.size() == 2u);
    for (const Hypothesis& h : out) {
      BOOST_TEST(h.tokens.size() <= config.max_length);
      BOOST_TEST(h.attention.size() == h.tokens.size() + (h.finished ? 1 : 0));
      for (const auto& row : h.attention) {
        BOOST_TEST_REQUIRE(row.size() == 9u);
        double total = 0;
        for (float w : row) total += w;
        BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-5));
      }
    }
  }
  // a wrong image size is named
  BOOST_CHECK_EXCEPTION(
      decode(model, Tensor<float>(Shape{1, 8, 9})), std::invalid_argument,
      [](const std::invalid_argument& e) { return std::string(e.what()).find("(1,8,9)") != std::string::npos; });
}

BOOST_AUTO_TEST_SUITE_END()
