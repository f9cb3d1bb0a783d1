// The Transformer's layers (nn/transformer.hpp): every layer gradient-checked in double, post- and pre-norm; PyTorch's
// nn.Transformer loaded by name and giving the same output, gradients and attention weights per layer and head
// (fixtures of tests/reference/make_transformer_reference.py); and the bugs other courses shipped, one test each: a
// future target token changes no earlier output, padded source positions change no output, a fully padded query row
// stays finite, and without positions the encoder is permutation equivariant (the sinusoidal encoding breaks it).
// Reference: docs/reference/nn.md ("The Transformer's layers").
#include <algorithm>
#include <cmath>

#include "nn/checkpoint.hpp"
#include "nn/transformer.hpp"
#include "tests/autograd/helpers.hpp"

using namespace attend;
using attend::testing::message_has;
using attend::testing::random_tensor;
using attend::testing::Vars;

namespace {

nn::TransformerLayerConfig small_config(bool norm_first, double dropout = 0.0) {
  nn::TransformerLayerConfig c;
  c.d_model = 4;
  c.heads = 2;
  c.ff = 6;
  c.dropout = dropout;
  c.norm_first = norm_first;
  return c;
}

// (B, T) keep-mask, 1 = real: the second sequence's last `padded` positions are padding.
Mask padding(std::size_t B, std::size_t T, std::size_t padded) {
  Mask m(Shape{B, T});
  m.flat().fill(1);
  for (std::size_t t = T - padded; t < T; ++t) m.at({1, t}) = 0;
  return m;
}

double max_abs_difference(const Tensor<double>& a, const Tensor<double>& b) {
  BOOST_REQUIRE(a.shape() == b.shape());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a.data()[i] - b.data()[i]));
  return worst;
}

// Rows [from, to) of axis 1 of a (B, T, D) tensor.
Tensor<double> positions(const Tensor<double>& x, std::size_t from, std::size_t to) {
  Tensor<double> out(Shape{x.shape()[0], to - from, x.shape()[2]});
  for (std::size_t b = 0; b < x.shape()[0]; ++b) {
    for (std::size_t t = from; t < to; ++t) {
      for (std::size_t d = 0; d < x.shape()[2]; ++d) out.at({b, t - from, d}) = x.at({b, t, d});
    }
  }
  return out;
}

std::string reference_file(const std::string& name) {
  return std::string(ATTEND_SOURCE_DIR) + "/tests/reference/data/transformer/" + name;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transformer)

BOOST_AUTO_TEST_CASE(layer_norm_module_gradients_and_errors) {
  nn::LayerNorm<double> norm(5);
  BOOST_TEST(norm.gamma.value.to_vector() == std::vector<double>(5, 1.0));
  BOOST_TEST(norm.beta.value.to_vector() == std::vector<double>(5, 0.0));
  norm.gamma.assign(random_tensor(Shape{5}, 1));
  norm.beta.assign(random_tensor(Shape{5}, 2));
  const GradcheckFn f = [&norm](Tape<double>&, const Vars& v) { return norm(v[0]); };
  const GradcheckResult r = nn::gradcheck_module(norm, f, {random_tensor(Shape{2, 3, 5}, 3)});
  BOOST_TEST(r.passed, r.message);
  BOOST_CHECK_EXCEPTION(nn::LayerNorm<double>(0), std::invalid_argument, message_has({"LayerNorm", "size"}));
  BOOST_CHECK_EXCEPTION(nn::LayerNorm<double>(3, 0.0), std::invalid_argument, message_has({"LayerNorm", "eps"}));
  Tape<double> tape;
  BOOST_CHECK_EXCEPTION(norm(tape.constant(random_tensor(Shape{2, 4}, 4))), std::invalid_argument,
                        message_has({"layer_norm", "(2,4)"}));
}

BOOST_AUTO_TEST_CASE(multi_head_attention_gradients_self_and_cross) {
  Rng rng(5);
  nn::MultiHeadAttention<double> mha(4, 2, rng);
  mha.b_in.assign(random_tensor(Shape{12}, 6, -0.5, 0.5));
  mha.out_proj.b.assign(random_tensor(Shape{4}, 7, -0.5, 0.5));
  const Mask keep = padding(2, 3, 1);
  const GradcheckFn self = [&](Tape<double>&, const Vars& v) { return mha.forward(v[0], {&keep, false}); };
  GradcheckResult r = nn::gradcheck_module(mha, self, {random_tensor(Shape{2, 3, 4}, 8)});
  BOOST_TEST(r.passed, r.message);
  const GradcheckFn causal = [&](Tape<double>&, const Vars& v) { return mha.forward(v[0], {nullptr, true}); };
  r = nn::gradcheck_module(mha, causal, {random_tensor(Shape{2, 3, 4}, 9)});
  BOOST_TEST(r.passed, r.message);
  const GradcheckFn cross = [&](Tape<double>&, const Vars& v) { return mha.forward(v[0], v[1], {&keep, false}); };
  r = nn::gradcheck_module(mha, cross, {random_tensor(Shape{2, 2, 4}, 10), random_tensor(Shape{2, 3, 4}, 11)});
  BOOST_TEST(r.passed, r.message);
}

BOOST_AUTO_TEST_CASE(multi_head_attention_self_is_cross_with_itself_and_projections_are_in_proj_rows) {
  Rng rng(12);
  nn::MultiHeadAttention<double> mha(6, 3, rng);
  mha.b_in.assign(random_tensor(Shape{18}, 13));
  Tape<double> tape;
  const Variable<double> x = tape.constant(random_tensor(Shape{2, 4, 6}, 14));
  Tensor<double> w_self, w_cross, w_parts;
  const Tensor<double> y_self = mha.forward(x, {}, &w_self).value();
  const Tensor<double> y_cross = mha.forward(x, x, {}, &w_cross).value();
  const Tensor<double> y_parts = mha.attend(mha.project_q(x), mha.project_k(x), mha.project_v(x), {}, &w_parts).value();
  BOOST_TEST(max_abs_difference(y_self, y_cross) < 1e-13);
  BOOST_TEST(max_abs_difference(y_self, y_parts) < 1e-13);
  BOOST_TEST(max_abs_difference(w_self, w_cross) < 1e-13);
  BOOST_TEST((w_self.shape() == Shape{2, 3, 4, 4}));
  // Q = x W_qᵀ + b_q with W_q the first D rows of in_proj_weight
  const Tensor<double> q = mha.project_q(x).value();
  double worst = 0;
  for (std::size_t t = 0; t < 4; ++t) {
    for (std::size_t i = 0; i < 6; ++i) {
      double sum = mha.b_in.value.at({i});
      for (std::size_t j = 0; j < 6; ++j) sum += mha.W_in.value.at({i, j}) * x.value().at({1, t, j});
      worst = std::max(worst, std::abs(sum - q.at({1, t, i})));
    }
  }
  BOOST_TEST(worst < 1e-13);
}

BOOST_AUTO_TEST_CASE(multi_head_attention_rejects_bad_sizes) {
  Rng rng(15);
  BOOST_CHECK_EXCEPTION(nn::MultiHeadAttention<double>(6, 4, rng), std::invalid_argument,
                        message_has({"MultiHeadAttention", "d_model 6", "heads 4"}));
  BOOST_CHECK_EXCEPTION(nn::MultiHeadAttention<double>(4, 2, rng, 1.0), std::invalid_argument,
                        message_has({"MultiHeadAttention", "dropout"}));
  nn::MultiHeadAttention<double> mha(4, 2, rng);
  Tape<double> tape;
  BOOST_CHECK_EXCEPTION(mha.forward(tape.constant(random_tensor(Shape{2, 3, 5}, 16))), std::invalid_argument,
                        message_has({"MultiHeadAttention", "(2,3,5)"}));
  BOOST_CHECK_EXCEPTION(
      mha.forward(tape.constant(random_tensor(Shape{2, 3, 4}, 17)), tape.constant(random_tensor(Shape{3, 3, 4}, 18))),
      std::invalid_argument, message_has({"MultiHeadAttention", "memory", "(3,3,4)"}));
}

BOOST_AUTO_TEST_CASE(encoder_and_decoder_layers_gradients_post_and_pre_norm) {
  for (const bool norm_first : {false, true}) {
    BOOST_TEST_CONTEXT("norm_first " << norm_first) {
      Rng rng(19);
      nn::TransformerEncoderLayer<double> enc(small_config(norm_first), rng);
      nn::TransformerDecoderLayer<double> dec(small_config(norm_first), rng);
      const Mask keep = padding(2, 3, 1);
      const GradcheckFn fe = [&](Tape<double>&, const Vars& v) { return enc.forward(v[0], &keep); };
      GradcheckResult r = nn::gradcheck_module(enc, fe, {random_tensor(Shape{2, 3, 4}, 20)});
      BOOST_TEST(r.passed, r.message);
      const GradcheckFn fd = [&](Tape<double>&, const Vars& v) { return dec.forward(v[0], v[1], &keep); };
      r = nn::gradcheck_module(dec, fd, {random_tensor(Shape{2, 2, 4}, 21), random_tensor(Shape{2, 3, 4}, 22)});
      BOOST_TEST(r.passed, r.message);
    }
  }
}

// A causal encoder stack (a decoder-only language model's): its outputs up to position t do not move when the inputs
// after t change, and one causal layer's output at t is the plain layer's at t on the prefix up to t. Gradients check.
BOOST_AUTO_TEST_CASE(a_causal_encoder_sees_only_the_prefix) {
  for (const bool norm_first : {false, true}) {
    BOOST_TEST_CONTEXT("norm_first " << norm_first) {
      Rng rng(31);
      nn::TransformerEncoder<double> stack(small_config(norm_first), 2, rng);
      nn::TransformerEncoderLayer<double> layer(small_config(norm_first), rng);
      const std::size_t B = 2, S = 5, D = 4;
      const Tensor<double> x = random_tensor(Shape{B, S, D}, 32);
      const nn::AttentionMask causal{nullptr, true};
      Tape<double> tape;
      const Tensor<double> y = stack.forward(tape.constant(x), causal).value();
      const Tensor<double> y1 = layer.forward(tape.constant(x), causal).value();
      for (std::size_t t = 0; t < S; ++t) {
        Tensor<double> changed = x, prefix(Shape{B, t + 1, D});
        const Tensor<double> noise = random_tensor(Shape{B, S, D}, 40 + t);
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t i = 0; i < S; ++i)
            for (std::size_t d = 0; d < D; ++d) {
              if (i > t) changed.at({b, i, d}) = noise.at({b, i, d});
              if (i <= t) prefix.at({b, i, d}) = x.at({b, i, d});
            }
        const Tensor<double> y_changed = stack.forward(tape.constant(changed), causal).value();
        const Tensor<double> y_prefix = layer.forward(tape.constant(prefix)).value();
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t d = 0; d < D; ++d) {
            for (std::size_t i = 0; i <= t; ++i) BOOST_TEST(y_changed.at({b, i, d}) == y.at({b, i, d}));
            BOOST_TEST(y_prefix.at({b, t, d}) == y1.at({b, t, d}), boost::test_tools::tolerance(1e-12));
          }
      }
      const GradcheckFn f = [&](Tape<double>&, const Vars& v) { return layer.forward(v[0], causal); };
      const GradcheckResult r = nn::gradcheck_module(layer, f, {random_tensor(Shape{2, 3, 4}, 33)});
      BOOST_TEST(r.passed, r.message);
    }
  }
}

BOOST_AUTO_TEST_CASE(stacks_gradients_with_dropout) {
  // dropout on: every evaluation restores the module's generators first, so that each draws the same masks and the
  // loss is one fixed function of the inputs and parameters
  Rng rng(23);
  nn::Transformer<double> model(small_config(true, 0.2), 2, 1, rng);
  const Mask keep = padding(2, 3, 2);
  std::vector<Rng> start;
  for (const auto& [name, g] : model.generators()) start.push_back(*g);
  BOOST_TEST(start.size() ==
             2 * 4 + 1 * 6);  // per layer: attention weights, dropout, dropout1, dropout2 (3 in decoders)
  const GradcheckFn f = [&](Tape<double>&, const Vars& v) {
    std::size_t k = 0;
    for (const auto& [name, g] : model.generators()) *g = start[k++];
    return model.forward(v[0], v[1], &keep);
  };
  const GradcheckResult r =
      nn::gradcheck_module(model, f, {random_tensor(Shape{2, 3, 4}, 24), random_tensor(Shape{2, 2, 4}, 25)});
  BOOST_TEST(r.passed, r.message);
  BOOST_TEST(model.parameters().size() == 2 * 12 + 2 + 1 * 18 + 2);
}

// PyTorch's nn.Transformer state_dict, loaded by name: the same output and the same gradients of sum(out · r).
BOOST_AUTO_TEST_CASE(equals_pytorch_nn_transformer_post_and_pre_norm) {
  for (const std::string norm : {"post", "pre"}) {
    BOOST_TEST_CONTEXT(norm << "-norm") {
      const std::string path = reference_file(norm + ".safetensors");
      // [docs:load-transformer]
      // Python:  model = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
      //                                       dim_feedforward=12, dropout=0.0, batch_first=True, norm_first=...)
      //          safetensors.torch.save_file(model.state_dict(), "post.safetensors")
      nn::TransformerLayerConfig config;
      config.d_model = 8;
      config.heads = 2;
      config.ff = 12;
      config.dropout = 0.0;
      config.norm_first = norm == "pre";
      Rng none = Rng::no_init();
      nn::Transformer<double> model(config, 2, 2, none);
      std::map<std::string, Tensor<double>> state;
      for (auto& [name, tensor] : nn::read_tensors<double>(path)) {
        state[nn::pytorch_transformer_name(name)] = std::move(tensor);
      }
      model.load(state);  // strict: every parameter named, every tensor used, every shape checked
      // [docs:end]
      const auto io = nn::read_tensors<double>(reference_file(norm + "_io.safetensors"));
      Mask keep(Shape{2, 5});
      for (std::size_t i = 0; i < keep.size(); ++i) keep.data()[i] = io.at("src_keep").data()[i] != 0.0;
      Tape<double> tape;
      const Variable<double> src = tape.leaf(io.at("src"));
      const Variable<double> tgt = tape.leaf(io.at("tgt"));
      const Variable<double> out = model.forward(src, tgt, &keep);
      BOOST_TEST(max_abs_difference(out.value(), io.at("out")) < 1e-12);
      tape.backward(sum(out * tape.constant(io.at("r"))));
      BOOST_TEST(max_abs_difference(src.grad(), io.at("grad.src")) < 1e-11);
      BOOST_TEST(max_abs_difference(tgt.grad(), io.at("grad.tgt")) < 1e-11);
      std::size_t compared = 0;
      for (const auto& [torch_name, expected] : io) {
        if (torch_name.rfind("grad.", 0) != 0 || torch_name == "grad.src" || torch_name == "grad.tgt") continue;
        const std::string name = nn::pytorch_transformer_name(torch_name.substr(5));
        for (const auto& [pname, p] : model.parameters()) {
          if (pname != name) continue;
          BOOST_TEST(max_abs_difference(p->grad, expected) < 1e-11, name);
          ++compared;
        }
      }
      BOOST_TEST(compared == model.parameters().size());
    }
  }
}

// PyTorch's nn.Transformer loaded by name into a model of T (its weights rounded to T).
template <class T>
void load_pytorch_transformer(nn::Transformer<T>& model, const std::string& norm) {
  std::map<std::string, Tensor<T>> state;
  for (auto& [name, tensor] : nn::read_tensors<double>(reference_file(norm + ".safetensors"))) {
    Tensor<T> value(tensor.shape(), uninitialized);
    std::transform(tensor.data(), tensor.data() + tensor.size(), value.data(), [](double x) { return T(x); });
    state[nn::pytorch_transformer_name(name)] = std::move(value);
  }
  model.load(state);
}

// Every attention's weights, per layer and head — encoder self, decoder self (causal), cross — as PyTorch's
// MultiheadAttention gives them with need_weights=True, average_attn_weights=False, in double and in float.
template <class T>
void check_weights_equal_pytorch(double tolerance) {
  for (const std::string norm : {"post", "pre"}) {
    BOOST_TEST_CONTEXT(norm << "-norm, " << sizeof(T) * 8 << "-bit") {
      Rng none = Rng::no_init();
      // the reference's sizes, as in equals_pytorch_nn_transformer_post_and_pre_norm
      nn::Transformer<T> model(nn::TransformerLayerConfig{8, 2, 12, 0.0, norm == "pre"}, 2, 2, none);
      load_pytorch_transformer(model, norm);
      const auto io = nn::read_tensors<double>(reference_file(norm + "_io.safetensors"));
      const auto expected = nn::read_tensors<double>(reference_file(norm + "_weights.safetensors"));
      Mask keep(Shape{2, 5});
      for (std::size_t i = 0; i < keep.size(); ++i) keep.data()[i] = io.at("src_keep").data()[i] != 0.0;
      const auto as_t = [](const Tensor<double>& x) {
        Tensor<T> y(x.shape(), uninitialized);
        std::transform(x.data(), x.data() + x.size(), y.data(), [](double v) { return T(v); });
        return y;
      };
      Tape<T> tape;
      nn::AttentionWeights<T> weights;
      model.forward(tape.constant(as_t(io.at("src"))), tape.constant(as_t(io.at("tgt"))), &keep, &weights);
      const std::vector<std::pair<std::string, const std::vector<Tensor<T>>*>> kinds{
          {"encoder", &weights.encoder}, {"decoder", &weights.decoder}, {"cross", &weights.cross}};
      for (const auto& [kind, got] : kinds) {
        BOOST_TEST_REQUIRE(got->size() == 2u);
        for (std::size_t l = 0; l < 2; ++l) {
          const Tensor<double>& want = expected.at(kind + "." + std::to_string(l));
          BOOST_TEST_REQUIRE(((*got)[l].shape() == want.shape()), kind << " " << l);
          double worst = 0;
          for (std::size_t i = 0; i < want.size(); ++i) {
            worst = std::max(worst, std::abs(static_cast<double>((*got)[l].data()[i]) - want.data()[i]));
          }
          BOOST_TEST(worst < tolerance, kind << " layer " << l << ": " << worst);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_attention_weight_equals_pytorch_per_layer_and_head) {
  check_weights_equal_pytorch<double>(1e-12);
  check_weights_equal_pytorch<float>(1e-6);
}

// Incremental decoding: position by position with the key/value cache, the decoder gives what it gives for the whole
// prefix at once (the causal mask), and each layer's self- and cross-attention weights are the whole prefix's rows.
BOOST_AUTO_TEST_CASE(decoder_step_with_cache_equals_the_whole_prefix) {
  for (const bool norm_first : {false, true}) {
    BOOST_TEST_CONTEXT("norm_first " << norm_first) {
      Rng rng(38);
      nn::TransformerDecoder<double> decoder(small_config(norm_first), 2, rng);
      decoder.eval();
      const Mask keep = padding(2, 3, 1);
      Tape<double> tape;
      const Variable<double> memory = tape.constant(random_tensor(Shape{2, 3, 4}, 39));
      const Tensor<double> y = random_tensor(Shape{2, 5, 4}, 40);
      std::vector<Tensor<double>> whole_self, whole_cross;
      const Tensor<double> whole = decoder.forward(tape.constant(y), memory, &keep, &whole_self, &whole_cross).value();
      std::vector<nn::DecoderLayerCache<double>> caches = decoder.start_cache(memory);
      double worst = 0, worst_weights = 0;
      for (std::size_t t = 0; t < 5; ++t) {
        std::vector<Tensor<double>> step_self, step_cross;
        const Tensor<double> out =
            decoder.step(tape.constant(positions(y, t, t + 1)), caches, &keep, &step_self, &step_cross).value();
        worst = std::max(worst, max_abs_difference(out, positions(whole, t, t + 1)));
        for (std::size_t l = 0; l < 2; ++l) {
          BOOST_TEST((step_cross[l].shape() == Shape{2, 2, 1, 3}));
          BOOST_TEST((step_self[l].shape() == Shape{2, 2, 1, t + 1}));
          for (std::size_t b = 0; b < 2; ++b) {
            for (std::size_t h = 0; h < 2; ++h) {
              for (std::size_t i = 0; i < 3; ++i) {
                worst_weights =
                    std::max(worst_weights, std::abs(step_cross[l].at({b, h, 0, i}) - whole_cross[l].at({b, h, t, i})));
              }
              for (std::size_t u = 0; u < 5; ++u) {  // the whole prefix's row is 0 after t
                const double step_value = u <= t ? step_self[l].at({b, h, 0, u}) : 0.0;
                worst_weights = std::max(worst_weights, std::abs(step_value - whole_self[l].at({b, h, t, u})));
              }
            }
          }
        }
      }
      BOOST_TEST(caches[0].self_k.shape()[1] == 5u);
      BOOST_TEST(worst < 1e-13);
      BOOST_TEST(worst_weights < 1e-13);
    }
  }
  Rng rng(41);
  nn::TransformerDecoderLayer<double> layer(small_config(false), rng);
  nn::DecoderLayerCache<double> empty;
  Tape<double> tape;
  BOOST_CHECK_EXCEPTION(layer.step(tape.constant(random_tensor(Shape{2, 1, 4}, 42)), empty), std::invalid_argument,
                        message_has({"TransformerDecoderLayer::step", "cache_memory"}));
}

BOOST_AUTO_TEST_CASE(pytorch_names) {
  BOOST_TEST(nn::pytorch_transformer_name("encoder.layers.0.self_attn.in_proj_weight") ==
             "encoder.layers.0.self_attn.W_in");
  BOOST_TEST(nn::pytorch_transformer_name("decoder.layers.1.multihead_attn.in_proj_bias") ==
             "decoder.layers.1.multihead_attn.b_in");
  BOOST_TEST(nn::pytorch_transformer_name("decoder.layers.1.multihead_attn.out_proj.weight") ==
             "decoder.layers.1.multihead_attn.out_proj.W");
  BOOST_TEST(nn::pytorch_transformer_name("encoder.layers.0.linear2.bias") == "encoder.layers.0.linear2.b");
  BOOST_TEST(nn::pytorch_transformer_name("decoder.layers.0.norm3.weight") == "decoder.layers.0.norm3.gamma");
  BOOST_TEST(nn::pytorch_transformer_name("encoder.norm.bias") == "encoder.norm.beta");
  BOOST_TEST(nn::pytorch_transformer_name("norm.weight") == "norm.gamma");
  BOOST_TEST(nn::pytorch_transformer_name("weight") == "W");
  BOOST_TEST(nn::pytorch_transformer_name("something.else") == "something.else");
}

// Causal mask: changing target position t changes no output at positions before t.
BOOST_AUTO_TEST_CASE(a_future_target_token_changes_no_earlier_output) {
  for (const bool norm_first : {false, true}) {
    Rng rng(26);
    nn::Transformer<double> model(small_config(norm_first), 1, 2, rng);
    Tape<double> tape;
    const Tensor<double> src = random_tensor(Shape{2, 3, 4}, 27);
    Tensor<double> tgt = random_tensor(Shape{2, 5, 4}, 28);
    const Tensor<double> before = model.forward(tape.constant(src), tape.constant(tgt)).value();
    // not the same amount in every column: LayerNorm removes a constant, which pre-norm layers would never see
    for (std::size_t d = 0; d < 4; ++d) tgt.at({0, 3, d}) += 0.5 * d;
    const Tensor<double> after = model.forward(tape.constant(src), tape.constant(tgt)).value();
    BOOST_TEST(max_abs_difference(positions(before, 0, 3), positions(after, 0, 3)) == 0.0);
    BOOST_TEST(max_abs_difference(positions(before, 3, 5), positions(after, 3, 5)) > 1e-3);  // the test can see
  }
}

// Padding mask on the encoder's self-attention and on cross-attention: what a padded source position holds changes
// no decoder output and no encoder output at a real position.
BOOST_AUTO_TEST_CASE(padded_source_positions_change_no_output) {
  for (const bool norm_first : {false, true}) {
    Rng rng(29);
    nn::Transformer<double> model(small_config(norm_first), 2, 2, rng);
    const Mask keep = padding(2, 4, 2);
    Tensor<double> src = random_tensor(Shape{2, 4, 4}, 30);
    const Tensor<double> tgt = random_tensor(Shape{2, 3, 4}, 31);
    Tape<double> tape;
    const Tensor<double> memory = model.encoder.forward(tape.constant(src), &keep).value();
    const Tensor<double> out = model.forward(tape.constant(src), tape.constant(tgt), &keep).value();
    for (std::size_t t = 2; t < 4; ++t) {
      for (std::size_t d = 0; d < 4; ++d) src.at({1, t, d}) = 100.0 * (d + 1.0);
    }
    const Tensor<double> memory2 = model.encoder.forward(tape.constant(src), &keep).value();
    const Tensor<double> out2 = model.forward(tape.constant(src), tape.constant(tgt), &keep).value();
    BOOST_TEST(max_abs_difference(out, out2) == 0.0);
    BOOST_TEST(max_abs_difference(positions(memory, 0, 2), positions(memory2, 0, 2)) == 0.0);
    // without the mask the padded values do reach the output: the test can fail
    const Tensor<double> unmasked = model.forward(tape.constant(src), tape.constant(tgt)).value();
    BOOST_TEST(max_abs_difference(out, unmasked) > 1e-3);
  }
}

// A sequence whose every source position is padding: finite outputs everywhere and no gradient into its source.
BOOST_AUTO_TEST_CASE(a_fully_padded_source_is_finite_and_leaks_no_gradient) {
  Rng rng(32);
  nn::Transformer<double> model(small_config(false), 1, 1, rng);
  const Mask keep = padding(2, 3, 3);
  Tape<double> tape;
  const Variable<double> src = tape.leaf(random_tensor(Shape{2, 3, 4}, 33));
  const Variable<double> out = model.forward(src, tape.constant(random_tensor(Shape{2, 2, 4}, 34)), &keep);
  for (double v : out.value().to_vector()) BOOST_TEST(std::isfinite(v));
  tape.backward(sum(out));
  for (std::size_t t = 0; t < 3; ++t) {
    for (std::size_t d = 0; d < 4; ++d) {
      BOOST_TEST(std::isfinite(src.grad().at({0, t, d})));
      BOOST_TEST(src.grad().at({1, t, d}) == 0.0);
    }
  }
}

// Without positions, self-attention sees a set: permuting the source positions permutes the encoder's output the same
// way. Adding the sinusoidal encoding breaks that.
BOOST_AUTO_TEST_CASE(positions_matter_only_with_the_positional_encoding) {
  Rng rng(35);
  nn::TransformerEncoder<double> encoder(small_config(false), 2, rng);
  const Tensor<double> x = random_tensor(Shape{1, 5, 4}, 36);
  const std::vector<std::size_t> perm{3, 0, 4, 1, 2};
  const auto permuted = [&perm](const Tensor<double>& t) {
    Tensor<double> out(t.shape());
    for (std::size_t i = 0; i < perm.size(); ++i) {
      for (std::size_t d = 0; d < t.shape()[2]; ++d) out.at({0, i, d}) = t.at({0, perm[i], d});
    }
    return out;
  };
  const Tensor<double> pe = nn::sinusoidal_positions<double>(5, 4);
  const auto positioned = [&pe](const Tensor<double>& t) {
    Tensor<double> out = t;
    for (std::size_t i = 0; i < 5; ++i) {
      for (std::size_t d = 0; d < 4; ++d) out.at({0, i, d}) += pe.at({i, d});
    }
    return out;
  };
  Tape<double> tape;
  const Tensor<double> y = encoder.forward(tape.constant(x)).value();
  const Tensor<double> y_perm = encoder.forward(tape.constant(permuted(x))).value();
  BOOST_TEST(max_abs_difference(permuted(y), y_perm) < 1e-12);
  const Tensor<double> z = encoder.forward(tape.constant(positioned(x))).value();
  const Tensor<double> z_perm = encoder.forward(tape.constant(positioned(permuted(x)))).value();
  BOOST_TEST(max_abs_difference(permuted(z), z_perm) > 1e-2);
}

BOOST_AUTO_TEST_CASE(sinusoidal_positions_follow_the_formula) {
  const Tensor<double> pe = nn::sinusoidal_positions<double>(50, 6);
  BOOST_TEST((pe.shape() == Shape{50, 6}));
  for (std::size_t p : {0u, 1u, 7u, 49u}) {
    for (std::size_t i = 0; i < 3; ++i) {
      const double angle = p / std::pow(10000.0, 2.0 * i / 6.0);
      BOOST_TEST(pe.at({p, 2 * i}) == std::sin(angle));
      BOOST_TEST(pe.at({p, 2 * i + 1}) == std::cos(angle));
    }
  }
  // odd d_model: the last column is a sine
  const Tensor<float> odd = nn::sinusoidal_positions<float>(3, 5);
  BOOST_TEST(odd.at({2, 4}) == static_cast<float>(std::sin(2.0 / std::pow(10000.0, 4.0 / 5.0))));
}

BOOST_AUTO_TEST_CASE(layers_reject_bad_configurations) {
  Rng rng(37);
  nn::TransformerLayerConfig c = small_config(false);
  c.ff = 0;
  BOOST_CHECK_EXCEPTION(nn::TransformerEncoderLayer<double>(c, rng), std::invalid_argument,
                        message_has({"TransformerEncoderLayer", "ff"}));
  c = small_config(false, 1.5);
  BOOST_CHECK_EXCEPTION(nn::TransformerDecoderLayer<double>(c, rng), std::invalid_argument,
                        message_has({"TransformerDecoderLayer", "dropout"}));
  BOOST_CHECK_EXCEPTION(nn::TransformerEncoder<double>(small_config(false), 0, rng), std::invalid_argument,
                        message_has({"TransformerEncoder", "num_layers"}));
}

BOOST_AUTO_TEST_SUITE_END()
