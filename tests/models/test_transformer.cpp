// The Transformer encoder-decoder (models/transformer.hpp): its configuration to and from JSON with every rule an
// error, its loss gradient-checked in double (learned and sinusoidal positions, tied and untied output), decoding with
// the key/value cache giving the same outputs, scores and attention as recomputing the whole prefix at every step
// (greedy and beam), greedy outputs that are the argmax of the teacher-forced logits, PyTorch's benchmark names, and a
// tiny task learned. Reference: docs/reference/models.md ("The Transformer").
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "autograd/helpers.hpp"
#include "models/transformer.hpp"
#include "nn/optim.hpp"
#include "tests/models/tiny_transformer.hpp"

using namespace attend;
using namespace attend::models;
using attend::testing::message_has;

namespace {

TransformerConfig tiny(bool norm_first = false) {
  TransformerConfig c = attend::testing::tiny_transformer(10, 31);
  c.norm_first = norm_first;
  c.max_target_length = 7;
  return c;
}

Batch three_sources() { return make_batch({{4, 5, 6, 7, 8}, {9, 4}, {5, 6, 7}}); }

// A tiny model readied for decoding: its end token favoured, so that some outputs end before the maximum length, and
// in evaluation mode.
template <class T>
void ready_to_decode(TransformerModel<T>& model) {
  model.out.b.value.data()[eos_id] += T(1);
  model.eval();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transformer)

BOOST_AUTO_TEST_CASE(configuration_round_trips_and_refuses_what_cannot_be_built) {
  TransformerConfig c = tiny(true);
  c.positions = PositionKind::learned;
  c.tie_embeddings = true;
  const TransformerConfig back = TransformerConfig::from_json(c.to_json());
  BOOST_TEST(back.to_json() == c.to_json());
  BOOST_TEST(back.norm_first);
  BOOST_TEST((back.positions == PositionKind::learned));

  c = tiny();
  c.heads = 3;
  BOOST_CHECK_EXCEPTION(c.validate(), std::invalid_argument, message_has({"d_model 8", "heads 3"}));
  c = tiny();
  c.positions = PositionKind::learned;
  c.max_target_length = 17;
  BOOST_CHECK_EXCEPTION(c.validate(), std::invalid_argument, message_has({"max_target_length 17", "max_positions"}));
  c = tiny();
  c.dropout = 1.0;
  BOOST_CHECK_EXCEPTION(c.validate(), std::invalid_argument, message_has({"dropout"}));
  nlohmann::json json = tiny().to_json();
  json["norm"] = "middle";
  BOOST_CHECK_EXCEPTION(TransformerConfig::from_json(json), std::invalid_argument, message_has({"norm", "middle"}));
  json = tiny().to_json();
  json.erase("ff");
  BOOST_CHECK_EXCEPTION(TransformerConfig::from_json(json), std::invalid_argument, message_has({"missing", "ff"}));
  json = tiny().to_json();
  json["positions"] = "rotary";
  BOOST_CHECK_EXCEPTION(TransformerConfig::from_json(json), std::invalid_argument, message_has({"rotary"}));
}

// The names of ../shared/bench/torch_transformer.py's model (src_emb.weight → src_emb.W, …), so its weights load.
BOOST_AUTO_TEST_CASE(parameter_names_follow_pytorch_benchmark_model) {
  TransformerModel<float> model(tiny());
  std::vector<std::string> names;
  for (const auto& [name, p] : model.parameters()) names.push_back(name);
  BOOST_TEST(names.front() == "src_emb.W");
  BOOST_TEST(names[1] == "tgt_emb.W");
  BOOST_TEST(names[2] == "transformer.encoder.layers.0.self_attn.W_in");
  BOOST_TEST(names[names.size() - 2] == "out.W");
  BOOST_TEST(names.back() == "out.b");
  BOOST_TEST(nn::pytorch_transformer_name("transformer.decoder.norm.weight") == "transformer.decoder.norm.gamma");
  TransformerConfig tied = tiny();
  tied.tie_embeddings = true;
  tied.positions = PositionKind::learned;
  TransformerModel<float> tied_model(tied);
  BOOST_TEST(tied_model.parameters().size() == model.parameters().size() - 1 + 2);  // no out.W; src_pos, tgt_pos
  BOOST_TEST(tied_model.parameters().back().first == "out.b");
}

BOOST_AUTO_TEST_CASE(loss_gradients_in_double) {
  for (const bool learned : {false, true}) {
    BOOST_TEST_CONTEXT("learned positions and tied output " << learned) {
      TransformerConfig c = tiny(learned);
      c.d_model = 4;
      c.ff = 6;
      c.encoder_layers = 1;
      c.decoder_layers = 1;
      c.positions = learned ? PositionKind::learned : PositionKind::sinusoidal;
      c.tie_embeddings = learned;
      TransformerModel<double> model(c);
      const Batch batch = make_batch({{4, 5, 6}, {7, 8}}, {{5, 6}, {8, 7, 4}});
      const GradcheckFn f = [&](Tape<double>& tape, const std::vector<Variable<double>>&) {
        return model.loss(tape, batch, 0.1);
      };
      const GradcheckResult r = nn::gradcheck_module(model, f, {});
      BOOST_TEST(r.passed, r.message);
    }
  }
}

// The cache changes nothing: every output token, log-probability and attention row of the cached search equals the
// search that runs the decoder over the whole prefix at every step — greedy and beam, post- and pre-norm, each
// layer's and head's view.
BOOST_AUTO_TEST_CASE(cached_decoding_equals_recomputing_the_prefix) {
  for (const bool norm_first : {false, true}) {
    TransformerModel<double> model(tiny(norm_first));
    ready_to_decode(model);
    const Batch batch = three_sources();
    for (const std::size_t beam : {1u, 3u}) {
      for (const AttentionView view : {AttentionView{}, AttentionView{0, 1}, AttentionView{-1, -1, true}}) {
        BOOST_TEST_CONTEXT("norm_first " << norm_first << ", beam " << beam << ", layer " << view.layer) {
          const SearchOptions options{beam};
          const auto cached = decode(model, batch.source, batch.source_lengths, options, view);
          const auto recomputed = decode(model, batch.source, batch.source_lengths, options, view, true);
          std::size_t finished = 0;
          for (std::size_t b = 0; b < 3; ++b) {
            BOOST_TEST(cached[b].tokens == recomputed[b].tokens, boost::test_tools::per_element());
            BOOST_TEST(std::abs(cached[b].log_prob - recomputed[b].log_prob) < 1e-12);
            BOOST_TEST(cached[b].attention.size() == recomputed[b].attention.size());
            for (std::size_t j = 0; j < cached[b].attention.size(); ++j) {
              for (std::size_t i = 0; i < cached[b].attention[j].size(); ++i) {
                BOOST_TEST(std::abs(cached[b].attention[j][i] - recomputed[b].attention[j][i]) < 1e-6);
              }
            }
            finished += cached[b].finished ? 1 : 0;
          }
          BOOST_TEST(finished >= 1u);  // the comparison covers an end token
        }
      }
    }
  }
}

// The view of every map records, for each output token, each layer's every head one after the other: block l·H + h
// is what the view of layer l, head h records alone; the outputs are those of any other view.
BOOST_AUTO_TEST_CASE(the_view_of_every_map_holds_each_layer_and_head) {
  TransformerModel<double> model(tiny());
  ready_to_decode(model);
  const Batch batch = three_sources();
  const std::size_t L = 2, H = 2;
  for (const std::size_t beam : {1u, 3u}) {
    const SearchOptions options{beam};
    const auto every = decode(model, batch.source, batch.source_lengths, options, AttentionView{-1, -1, true});
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t h = 0; h < H; ++h) {
        const AttentionView one{static_cast<int>(l), static_cast<int>(h)};
        const auto single = decode(model, batch.source, batch.source_lengths, options, one);
        for (std::size_t b = 0; b < 3; ++b) {
          BOOST_TEST(every[b].tokens == single[b].tokens, boost::test_tools::per_element());
          BOOST_TEST(every[b].log_prob == single[b].log_prob);
          BOOST_REQUIRE(every[b].attention.size() == single[b].attention.size());
          const auto S = static_cast<std::size_t>(batch.source_lengths[b]);
          for (std::size_t j = 0; j < every[b].attention.size(); ++j) {
            BOOST_REQUIRE(every[b].attention[j].size() == L * H * S);
            const auto block = every[b].attention[j].begin() + static_cast<std::ptrdiff_t>((l * H + h) * S);
            const std::vector<float> part(block, block + static_cast<std::ptrdiff_t>(S));
            BOOST_TEST(part == single[b].attention[j], boost::test_tools::per_element());
          }
        }
      }
    }
  }
}

// Every attention of a decoded output, from one teacher-forced pass of its source and tokens (nn::AttentionWeights):
// its cross-attention rows are those the cached search recorded token by token, greedy and beam, and every row of every
// kind sums to 1 over the real positions (the encoder's over the source, the decoder's over the output so far).
BOOST_AUTO_TEST_CASE(a_teacher_forced_pass_gives_the_attention_the_search_recorded) {
  TransformerModel<double> model(tiny());
  ready_to_decode(model);
  const Batch batch = three_sources();
  const std::size_t L = 2, H = 2;
  for (const std::size_t beam : {1u, 3u}) {
    const auto outputs =
        decode(model, batch.source, batch.source_lengths, SearchOptions{beam}, AttentionView{-1, -1, true});
    std::vector<std::vector<std::int64_t>> sources, targets;
    for (std::size_t b = 0; b < 3; ++b) {
      sources.emplace_back(batch.source.data() + b * batch.source.shape()[1],
                           batch.source.data() + b * batch.source.shape()[1] + batch.source_lengths[b]);
      targets.push_back(outputs[b].tokens);
    }
    Tape<double> tape;
    NoGradGuard<double> no_grad(tape);
    nn::AttentionWeights<double> weights;
    model.forward(tape, make_batch(sources, targets), &weights);
    BOOST_REQUIRE(weights.encoder.size() == L);
    BOOST_REQUIRE(weights.decoder.size() == L);
    BOOST_REQUIRE(weights.cross.size() == L);
    double worst = 0, worst_sum = 0;
    for (std::size_t b = 0; b < 3; ++b) {
      const auto S = static_cast<std::size_t>(batch.source_lengths[b]);
      for (std::size_t j = 0; j < outputs[b].attention.size(); ++j) {
        for (std::size_t l = 0; l < L; ++l) {
          for (std::size_t h = 0; h < H; ++h) {
            double cross_sum = 0, self_sum = 0, encoder_sum = 0;
            for (std::size_t i = 0; i < S; ++i) {
              const double recorded = outputs[b].attention[j][(l * H + h) * S + i];
              worst = std::max(worst, std::abs(recorded - weights.cross[l].at({b, h, j, i})));
              cross_sum += weights.cross[l].at({b, h, j, i});
              if (j < S) encoder_sum += weights.encoder[l].at({b, h, j, i});
            }
            for (std::size_t u = 0; u <= j; ++u) self_sum += weights.decoder[l].at({b, h, j, u});
            worst_sum = std::max(
                {worst_sum, std::abs(cross_sum - 1), std::abs(self_sum - 1), j < S ? std::abs(encoder_sum - 1) : 0.0});
          }
        }
      }
    }
    BOOST_TEST(worst < 1e-6, "beam " << beam << ": " << worst);  // the search keeps its rows in float
    BOOST_TEST(worst_sum < 1e-12);
  }
}

// A source decodes to the same outputs alone and in a batch with others, padded or not: the same tokens, and the
// log-probability and every attention weight equal up to float rounding (OpenBLAS's sums depend on the number of
// rows of a product, so the last bits may differ) — greedy and beam, the picture's view and every map.
BOOST_AUTO_TEST_CASE(a_source_decodes_the_same_alone_and_in_a_batch) {
  TransformerModel<float> model(tiny());
  ready_to_decode(model);
  const std::vector<std::vector<std::int64_t>> sources{{4, 5, 6, 7}, {9, 4}, {5, 6, 7, 4, 8}, {8, 8, 8, 8}};
  const Batch batch = make_batch(sources);
  for (const std::size_t beam : {1u, 3u}) {
    for (const AttentionView view : {AttentionView{}, AttentionView{-1, -1, true}}) {
      const auto together = decode(model, batch.source, batch.source_lengths, SearchOptions{beam}, view);
      for (std::size_t b = 0; b < sources.size(); ++b) {
        const Batch alone = make_batch({sources[b]});
        const Hypothesis h = decode(model, alone.source, alone.source_lengths, SearchOptions{beam}, view)[0];
        BOOST_TEST(h.tokens == together[b].tokens, boost::test_tools::per_element());
        BOOST_TEST(h.log_prob == together[b].log_prob, boost::test_tools::tolerance(1e-5));
        BOOST_REQUIRE(h.attention.size() == together[b].attention.size());
        for (std::size_t j = 0; j < h.attention.size(); ++j) {
          BOOST_REQUIRE(h.attention[j].size() == together[b].attention[j].size());
          for (std::size_t i = 0; i < h.attention[j].size(); ++i)
            BOOST_TEST(std::abs(h.attention[j][i] - together[b].attention[j][i]) < 1e-5);
        }
      }
    }
  }
}

// Greedy decoding computes what training computes: fed back as the teacher-forced target, each decoded token is the
// argmax of its logits (pad and sos aside), and its log-probability their sum.
BOOST_AUTO_TEST_CASE(greedy_outputs_are_the_argmax_of_the_teacher_forced_logits) {
  TransformerModel<double> model(tiny());
  ready_to_decode(model);
  const Batch batch = three_sources();
  const auto outputs = decode(model, batch.source, batch.source_lengths);
  for (std::size_t b = 0; b < 3; ++b) {
    const std::vector<std::int64_t> source(batch.source.data() + b * 5,
                                           batch.source.data() + b * 5 + batch.source_lengths[b]);
    Tape<double> tape;
    const Batch one = make_batch({source}, {outputs[b].tokens});
    const Variable<double> logp = log_softmax(model.forward(tape, one), -1);
    const std::size_t V = 9, steps = outputs[b].tokens.size() + (outputs[b].finished ? 1 : 0);
    double total = 0;
    for (std::size_t j = 0; j < steps; ++j) {
      const double* row = logp.value().data() + j * V;
      std::size_t best = eos_id;
      for (std::size_t v = 0; v < V; ++v) {
        if (v != pad_id && v != sos_id && row[v] > row[best]) best = v;
      }
      const std::int64_t token = j < outputs[b].tokens.size() ? outputs[b].tokens[j] : eos_id;
      BOOST_TEST(static_cast<std::int64_t>(best) == token);
      total += row[token];
    }
    BOOST_TEST(std::abs(total - outputs[b].log_prob) < 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_with_the_reason) {
  TransformerConfig learned = tiny();
  learned.positions = PositionKind::learned;
  TransformerModel<float> model(learned);
  Tape<float> tape;
  BOOST_CHECK_EXCEPTION(model.encode(tape, Ids(Shape{2, 17}, 4), {17, 17}), std::invalid_argument,
                        message_has({"source of 17 positions", "max_positions 16"}));
  BOOST_CHECK_EXCEPTION(model.encode(tape, Ids(Shape{2, 3}, 4), {3}), std::invalid_argument,
                        message_has({"(2,3)", "1 lengths"}));
  BOOST_CHECK_EXCEPTION(model.encode(tape, Ids(Shape{2, 3}, 4), {3, 4}), std::invalid_argument,
                        message_has({"from 1 to S"}));
  // sinusoidal positions have no limit
  TransformerModel<float> sinusoidal(tiny());
  BOOST_TEST(sinusoidal.encode(tape, Ids(Shape{1, 40}, 4), {40}).memory.shape()[1] == 40u);
  const Batch batch = three_sources();
  BOOST_CHECK_EXCEPTION(decode(model, batch.source, batch.source_lengths, SearchOptions{1, 20}), std::invalid_argument,
                        message_has({"maximum length 20", "16 positions"}));
  BOOST_CHECK_EXCEPTION(decode(model, batch.source, batch.source_lengths, {}, AttentionView{2, -1}),
                        std::invalid_argument, message_has({"attention layer 2", "2 layers"}));
  BOOST_CHECK_EXCEPTION(decode(model, batch.source, batch.source_lengths, {}, AttentionView{-1, 2}),
                        std::invalid_argument, message_has({"attention head 2", "2 heads"}));
}

// A tiny task learned: reverse short sequences, with the warm-up schedule; then decoded with a beam.
BOOST_AUTO_TEST_CASE(learns_to_reverse_short_sequences) {
  TransformerConfig c = tiny();
  c.d_model = 32;
  c.heads = 4;
  c.ff = 64;
  c.source_vocab_size = c.target_vocab_size = 10;
  TransformerModel<float> model(c);
  nn::Adam<float> adam(model.parameters(), {1.0, 0.9, 0.98, 1e-9});
  nn::NoamLR schedule(adam, c.d_model, 50, 0.5);  // peak η 0.0125 at step 50
  const std::vector<std::vector<std::int64_t>> sources{{4, 5, 6}, {7, 8}, {9, 4, 8, 5}, {6, 6, 7}, {5, 9}};
  std::vector<std::vector<std::int64_t>> targets;
  for (const auto& s : sources) targets.emplace_back(s.rbegin(), s.rend());
  const Batch batch = make_batch(sources, targets);
  Tape<float> tape;
  for (int step = 0; step < 100; ++step) {
    tape.clear();
    adam.zero_grad();
    tape.backward(model.loss(tape, batch));
    adam.step();
    schedule.step();
  }
  model.eval();
  const auto outputs = decode(model, batch.source, batch.source_lengths, SearchOptions{3});
  for (std::size_t b = 0; b < sources.size(); ++b) {
    BOOST_TEST(outputs[b].tokens == targets[b], boost::test_tools::per_element());
    BOOST_TEST(outputs[b].attention.size() == targets[b].size() + 1);
  }
}

BOOST_AUTO_TEST_SUITE_END()
