// The decoders and the encoder–decoder model: finite-difference gradient checks of decoding steps for every decoder,
// score, cell and encoder shape; teacher forcing; masking of padded sources; the model configuration's JSON form; and
// that each decoder can fit a tiny batch (models/decoder.hpp, models/seq2seq.hpp).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/helpers.hpp"
#include "models/seq2seq.hpp"
#include "nn/optim.hpp"

using namespace attend;
using namespace attend::models;
using attend::testing::message_has;
using attend::testing::random_tensor;

namespace {

struct StepCase {
  const char* name;
  DecoderKind kind;
  ScoreKind score;
  nn::CellKind cell;
  std::size_t layers;
  std::size_t directions;
  bool input_feeding;
};

const StepCase step_cases[] = {
    {"vanilla gru", DecoderKind::vanilla, ScoreKind::additive, nn::CellKind::gru, 1, 1, true},
    {"vanilla lstm bidirectional", DecoderKind::vanilla, ScoreKind::additive, nn::CellKind::lstm, 1, 2, true},
    {"bahdanau gru", DecoderKind::bahdanau, ScoreKind::additive, nn::CellKind::gru, 1, 1, true},
    {"bahdanau lstm 2 layers bidirectional", DecoderKind::bahdanau, ScoreKind::additive, nn::CellKind::lstm, 2, 2,
     true},
    {"bahdanau rnn", DecoderKind::bahdanau, ScoreKind::additive, nn::CellKind::rnn_tanh, 1, 1, true},
    {"luong dot gru", DecoderKind::luong, ScoreKind::dot, nn::CellKind::gru, 1, 1, true},
    {"luong general gru bidirectional", DecoderKind::luong, ScoreKind::general, nn::CellKind::gru, 1, 2, true},
    {"luong concat gru 2 layers", DecoderKind::luong, ScoreKind::concat, nn::CellKind::gru, 2, 1, true},
    {"luong general lstm without input feeding", DecoderKind::luong, ScoreKind::general, nn::CellKind::lstm, 1, 1,
     false},
};

constexpr std::size_t B = 2, S = 3, H = 3, E = 2, V = 6;

DecoderConfig config_of(const StepCase& c) {
  DecoderConfig config;
  config.kind = c.kind;
  config.score = c.score;
  config.cell = c.cell;
  config.vocab_size = V;
  config.embedding_dim = E;
  config.hidden_size = H;
  config.num_layers = c.layers;
  config.encoder_directions = c.directions;
  config.annotation_size = c.directions * H;
  config.attention_size = 4;
  config.input_feeding = c.input_feeding;
  return config;
}

Seq2seqConfig tiny_model(const std::string& decoder, nn::CellKind cell = nn::CellKind::gru) {
  Seq2seqConfig config;
  config.source_vocab_size = 9;
  config.target_vocab_size = 8;
  config.cell = cell;
  config.embedding_dim = 8;
  config.hidden_size = 16;
  config.set_decoder(decoder);
  config.max_target_length = 8;
  config.seed = 5;
  return config;
}

// four pairs of different lengths: the target is the source reversed, shifted into the target vocabulary
Batch tiny_batch() {
  const std::vector<std::vector<std::int64_t>> sources{{4, 5, 6, 7}, {8, 4}, {5, 5, 6}, {7}};
  std::vector<std::vector<std::int64_t>> targets;
  for (const auto& s : sources) targets.emplace_back(s.rbegin(), s.rend());
  for (auto& t : targets)
    for (auto& y : t) y = 3 + (y % 5);
  return make_batch(sources, targets);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(decoders)

// target_loss gathers the real target positions before the output layer: the same loss and the same gradients as
// cross_entropy over every position's logits with <pad> ignored, with label smoothing too.
BOOST_AUTO_TEST_CASE(target_loss_equals_the_padded_loss) {
  Rng rng(5);
  nn::Linear<double> out(5, 7, rng);
  const Tensor<double> fv = rng.uniform_tensor<double>(Shape{3, 4, 5}, -1.0, 1.0);
  const Ids target_out(Shape{3, 4}, {4, 5, eos_id, pad_id, 6, eos_id, pad_id, pad_id, 4, 4, 6, eos_id});
  for (const double smoothing : {0.0, 0.1}) {
    Tape<double> padded_tape, packed_tape;
    const Variable<double> f1 = padded_tape.leaf(fv), f2 = packed_tape.leaf(fv);
    const Variable<double> padded = cross_entropy(out(f1), target_out, pad_id, smoothing);
    padded_tape.backward(padded);
    const Tensor<double> dW = out.W.grad;
    out.W.zero_grad();
    const Variable<double> packed =
        target_loss<double>(f2, target_out, packed_tape.param(out.W), packed_tape.param(out.b), smoothing);
    BOOST_TEST(packed.value().item() == padded.value().item(), boost::test_tools::tolerance(1e-14));
    packed_tape.backward(packed);
    for (std::size_t i = 0; i < dW.size(); ++i) {
      BOOST_TEST(out.W.grad.data()[i] == dW.data()[i], boost::test_tools::tolerance(1e-13));
    }
    for (std::size_t i = 0; i < fv.size(); ++i) {
      BOOST_TEST(f2.grad().data()[i] == f1.grad().data()[i], boost::test_tools::tolerance(1e-13));
    }
    out.W.zero_grad();
    out.b.zero_grad();
  }
  Tape<double> tape;
  BOOST_CHECK_THROW(
      target_loss<double>(tape.leaf(fv), Ids(Shape{3, 4}, pad_id), tape.param(out.W), tape.param(out.b), 0.0),
      std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(two_decoding_steps_match_finite_differences) {
  for (const StepCase& c : step_cases) {
    BOOST_TEST_CONTEXT(c.name) {
      Rng rng(11);
      DecoderConfig config = config_of(c);
      auto decoder = make_decoder<double>(config, rng);
      const bool lstm = c.cell == nn::CellKind::lstm;
      const std::size_t finals = c.layers * c.directions;
      GradcheckFn f = [&](Tape<double>&, const std::vector<Variable<double>>& in) {
        // inputs: the annotations h_i, then each final encoder state (and memory cell)
        nn::RecurrentOutput<double> encoded;
        encoded.outputs = in[0];
        for (std::size_t k = 0; k < finals; ++k) encoded.h_final.push_back(in[1 + k]);
        if (lstm)
          for (std::size_t k = 0; k < finals; ++k) encoded.c_final.push_back(in[1 + finals + k]);
        SourceMemory<double> memory = decoder->memory(encoded, {3, 2});
        DecoderState<double> state = decoder->initial_state(encoded);
        Ids y1(Shape{B}, {1, 1});
        DecoderStep<double> first = decoder->step(y1, state, memory);
        Ids y2(Shape{B}, {4, 5});
        DecoderStep<double> second = decoder->step(y2, first.state, memory);
        return decoder->logits(second.output);
      };
      std::vector<Tensor<double>> inputs{random_tensor({B, S, c.directions * H}, 12)};
      for (std::size_t k = 0; k < finals * (lstm ? 2 : 1); ++k) inputs.push_back(random_tensor({B, H}, 13 + k));
      const GradcheckResult result = nn::gradcheck_module(*decoder, f, inputs);
      BOOST_TEST(result.passed, result.message);
      BOOST_TEST(result.checked > decoder->parameter_count());
    }
  }
}

BOOST_AUTO_TEST_CASE(attention_weights_of_every_step_sum_to_one_over_the_real_positions) {
  for (const char* name : {"bahdanau", "luong-dot", "luong-general", "luong-concat"}) {
    BOOST_TEST_CONTEXT(name) {
      Seq2seq<float> model(tiny_model(name));
      Tape<float> tape;
      const Batch batch = tiny_batch();
      TeacherForced<float> out = model.forward(tape, batch);
      const std::size_t steps = batch.target_in.shape()[1];
      BOOST_TEST(out.alpha.size() == steps);
      BOOST_TEST(out.logits.shape() == (Shape{4, steps, 8}));
      const std::size_t S_max = batch.source.shape()[1];
      for (const Variable<float>& alpha : out.alpha) {
        for (std::size_t b = 0; b < batch.size(); ++b) {
          double total = 0;
          for (std::size_t i = 0; i < S_max; ++i) {
            const float a = alpha.value().data()[b * S_max + i];
            if (static_cast<std::int64_t>(i) >= batch.source_lengths[b]) BOOST_TEST(a == 0.0f);
            total += a;
          }
          BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-5));
        }
      }
    }
  }
}

// What the explorer's equation panel shows for a step j, from the teacher-forced outputs: the weights are the softmax
// of the scores e_j over the real positions, α_ij = exp(e_ij) / Σ_k exp(e_kj), and the context is c_j = Σ_i α_ij h_i.
BOOST_AUTO_TEST_CASE(the_scores_give_the_weights_and_the_weights_the_context) {
  for (const char* name : {"bahdanau", "luong-dot", "luong-general", "luong-concat"}) {
    BOOST_TEST_CONTEXT(name) {
      Seq2seq<double> model(tiny_model(name));
      Tape<double> tape;
      const Batch batch = tiny_batch();
      const TeacherForced<double> out = model.forward(tape, batch);
      const Tensor<double>& h = model.encode(tape, batch.source, batch.source_lengths).memory.annotations.value();
      const std::size_t steps = batch.target_in.shape()[1], S_max = batch.source.shape()[1], A = h.shape()[2];
      BOOST_TEST_REQUIRE(out.energies.size() == steps);
      BOOST_TEST_REQUIRE(out.context.size() == steps);
      double worst_alpha = 0, worst_context = 0;
      for (std::size_t j = 0; j < steps; ++j) {
        for (std::size_t b = 0; b < batch.size(); ++b) {
          const auto S = static_cast<std::size_t>(batch.source_lengths[b]);
          double total = 0;
          for (std::size_t i = 0; i < S; ++i) total += std::exp(out.energies[j].value().at({b, i}));
          for (std::size_t i = 0; i < S; ++i) {
            const double alpha = std::exp(out.energies[j].value().at({b, i})) / total;
            worst_alpha = std::max(worst_alpha, std::abs(alpha - out.alpha[j].value().at({b, i})));
          }
          for (std::size_t a = 0; a < A; ++a) {
            double c = 0;
            for (std::size_t i = 0; i < S_max; ++i) c += out.alpha[j].value().at({b, i}) * h.at({b, i, a});
            worst_context = std::max(worst_context, std::abs(c - out.context[j].value().at({b, a})));
          }
        }
      }
      BOOST_TEST(worst_alpha < 1e-12);
      BOOST_TEST(worst_context < 1e-12);
    }
  }
}

BOOST_AUTO_TEST_CASE(padding_the_source_further_changes_nothing) {
  // the same sentences with two more padding columns: every logit is the same (the mask hides the padding)
  for (const char* name : {"vanilla", "bahdanau", "luong-general"}) {
    BOOST_TEST_CONTEXT(name) {
      Seq2seqConfig config = tiny_model(name, nn::CellKind::lstm);
      config.bidirectional = true;
      Seq2seq<double> model(config);
      const Batch batch = tiny_batch();
      Batch wider = batch;
      const std::size_t S_max = batch.source.shape()[1];
      wider.source = Ids(Shape{batch.size(), S_max + 2});
      for (std::size_t b = 0; b < batch.size(); ++b) {
        std::copy(batch.source.data() + b * S_max, batch.source.data() + (b + 1) * S_max,
                  wider.source.data() + b * (S_max + 2));
      }
      Tape<double> tape;
      const Tensor<double>& narrow_logits = model.forward(tape, batch).logits.value();
      const Tensor<double>& wide_logits = model.forward(tape, wider).logits.value();
      BOOST_REQUIRE(narrow_logits.shape() == wide_logits.shape());
      for (std::size_t k = 0; k < narrow_logits.size(); ++k) {
        BOOST_TEST(narrow_logits.data()[k] == wide_logits.data()[k], boost::test_tools::tolerance(1e-12));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(teacher_forcing_feeds_the_true_previous_token) {
  // forward() over the batch equals running the steps by hand with y_{j-1} taken from target_in
  Seq2seq<double> model(tiny_model("bahdanau"));
  const Batch batch = tiny_batch();
  Tape<double> tape;
  const Tensor<double> logits = model.forward(tape, batch).logits.value();
  Encoded<double> encoded = model.encode(tape, batch.source, batch.source_lengths);
  DecoderState<double> state = encoded.state;
  const std::size_t T = batch.target_in.shape()[1];
  for (std::size_t j = 0; j < T; ++j) {
    Ids y_prev(Shape{batch.size()});
    for (std::size_t b = 0; b < batch.size(); ++b) y_prev.data()[b] = batch.target_in.data()[b * T + j];
    DecoderStep<double> step = model.decoder->step(y_prev, state, encoded.memory);
    const Tensor<double>& by_hand = model.decoder->logits(step.output).value();
    for (std::size_t b = 0; b < batch.size(); ++b) {
      for (std::size_t v = 0; v < 8; ++v) {
        BOOST_TEST(logits.data()[(b * T + j) * 8 + v] == by_hand.data()[b * 8 + v],
                   boost::test_tools::tolerance(1e-12));
      }
    }
    state = step.state;
  }
  BOOST_TEST(batch.target_in.data()[0] == sos_id);
  BOOST_TEST(batch.target_out.data()[4] == eos_id);  // the first target has 4 tokens
}

BOOST_AUTO_TEST_CASE(every_decoder_fits_a_tiny_batch) {
  for (const char* name : {"vanilla", "bahdanau", "luong-dot", "luong-general", "luong-concat"}) {
    for (nn::CellKind cell : {nn::CellKind::gru, nn::CellKind::lstm}) {
      BOOST_TEST_CONTEXT(name << " " << nn::to_string(cell)) {
        Seq2seq<float> model(tiny_model(name, cell));
        nn::Adam<float> adam(model.parameters(), {0.02});
        const Batch batch = tiny_batch();
        Tape<float> tape;
        float first = 0, last = 0;
        for (int step = 0; step < 150; ++step) {
          tape.clear();
          adam.zero_grad();
          Variable<float> loss = model.loss(tape, batch);
          tape.backward(loss);
          adam.step();
          if (step == 0) first = loss.value().item();
          last = loss.value().item();
        }
        BOOST_TEST(first > 1.5f);
        BOOST_TEST(last < 0.02f, "loss after 150 steps " << last);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(parameters_are_named_by_module_and_equation) {
  Seq2seqConfig config = tiny_model("luong-concat", nn::CellKind::lstm);
  config.bidirectional = true;
  Seq2seq<float> model(config);
  std::vector<std::string> names;
  for (auto& [name, p] : model.parameters()) names.push_back(name);
  for (const char* expected : {"encoder.embedding.W", "encoder.rnn.layers.0.backward.W_hh", "decoder.embedding.W",
                               "decoder.cells.0.W_ih", "decoder.bridge.0.W", "decoder.bridge_c.0.b", "decoder.output.W",
                               "decoder.score.W_a", "decoder.score.v_a", "decoder.W_c"}) {
    BOOST_TEST((std::find(names.begin(), names.end(), expected) != names.end()), expected << " is missing");
  }
  // the same configuration (seed included) gives the same weights; another seed, other weights
  Seq2seq<float> again(config);
  config.seed += 1;
  Seq2seq<float> other(config);
  BOOST_TEST(model.parameters()[5].second->value.flat() == again.parameters()[5].second->value.flat());
  BOOST_TEST(!(model.parameters()[5].second->value.flat() == other.parameters()[5].second->value.flat()));
}

BOOST_AUTO_TEST_CASE(config_goes_to_json_and_back) {
  Seq2seqConfig config = tiny_model("luong-general", nn::CellKind::lstm);
  config.bidirectional = true;
  config.num_layers = 2;
  config.input_feeding = false;
  config.dropout = 0.25;
  const Seq2seqConfig back = Seq2seqConfig::from_json(config.to_json());
  BOOST_TEST(back.to_json() == config.to_json());
  BOOST_TEST(back.decoder_name() == "luong-general");
  BOOST_TEST(back.num_layers == 2u);
  BOOST_TEST(!back.input_feeding);

  nlohmann::json missing = config.to_json();
  missing.erase("hidden_size");
  BOOST_CHECK_EXCEPTION(Seq2seqConfig::from_json(missing), std::invalid_argument, message_has({"hidden_size"}));
  nlohmann::json wrong = config.to_json();
  wrong["num_layers"] = "two";
  BOOST_CHECK_EXCEPTION(Seq2seqConfig::from_json(wrong), std::invalid_argument, message_has({"num_layers", "two"}));
  wrong = config.to_json();
  wrong["decoder"] = "luong-cosine";
  BOOST_CHECK_EXCEPTION(Seq2seqConfig::from_json(wrong), std::invalid_argument,
                        message_has({"luong-cosine", "bahdanau", "luong-general"}));
  wrong = config.to_json();
  wrong["decoder"] = "luong-dot";
  BOOST_CHECK_EXCEPTION(Seq2seqConfig::from_json(wrong), std::invalid_argument, message_has({"dot", "bidirectional"}));
  wrong = config.to_json();
  wrong["hidden_size"] = 0;
  BOOST_CHECK_EXCEPTION(Seq2seqConfig::from_json(wrong), std::invalid_argument, message_has({"hidden_size"}));
  BOOST_CHECK_EXCEPTION(Seq2seqConfig::from_json(nlohmann::json::array()), std::invalid_argument,
                        message_has({"object"}));
}

BOOST_AUTO_TEST_CASE(bad_batches_and_steps_name_the_problem) {
  Seq2seq<float> model(tiny_model("bahdanau"));
  Tape<float> tape;
  Batch no_targets = make_batch({{4, 5}, {6}});
  BOOST_CHECK_EXCEPTION(model.forward(tape, no_targets), std::invalid_argument, message_has({"no targets"}));
  BOOST_CHECK_EXCEPTION(make_batch({{4}, {}}), std::invalid_argument, message_has({"source 1", "empty"}));
  BOOST_CHECK_EXCEPTION(make_batch({{4}}, {{5}, {6}}), std::invalid_argument, message_has({"1 sources", "2 targets"}));
  BOOST_CHECK_EXCEPTION(make_batch({}), std::invalid_argument, message_has({"empty batch"}));
  Encoded<float> encoded = model.encode(tape, no_targets.source, no_targets.source_lengths);
  BOOST_CHECK_EXCEPTION(model.decoder->step(Ids(Shape{3}), encoded.state, encoded.memory), std::invalid_argument,
                        message_has({"(3,)", "batch of 2"}));
}

BOOST_AUTO_TEST_CASE(batch_order_covers_every_example_once) {
  Rng rng(3);
  const auto batches = batch_order(10, 4, &rng);
  BOOST_TEST(batches.size() == 3u);
  BOOST_TEST(batches.back().size() == 2u);
  std::vector<std::size_t> seen;
  for (const auto& b : batches) seen.insert(seen.end(), b.begin(), b.end());
  std::sort(seen.begin(), seen.end());
  for (std::size_t i = 0; i < 10; ++i) BOOST_TEST(seen[i] == i);
  const auto in_order = batch_order(5, 2, nullptr);
  BOOST_TEST(in_order[0] == (std::vector<std::size_t>{0, 1}), boost::test_tools::per_element());
  Rng same(3);
  BOOST_TEST(batch_order(10, 4, &same) == batches);
}

BOOST_AUTO_TEST_CASE(bucketed_batches_cover_every_example_once_and_group_similar_lengths) {
  Rng lengths_rng(5);
  std::vector<std::size_t> lengths;
  for (int i = 0; i < 1000; ++i) lengths.push_back(1 + lengths_rng.next() % 40);
  Rng rng(6);
  const auto batches = bucketed_batch_order(lengths, 16, rng);
  std::vector<std::size_t> seen;
  double spread = 0;
  for (const auto& b : batches) {
    BOOST_TEST((!b.empty() && b.size() <= 16u));
    seen.insert(seen.end(), b.begin(), b.end());
    std::size_t lo = 100, hi = 0;
    for (std::size_t i : b) {
      lo = std::min(lo, lengths[i]);
      hi = std::max(hi, lengths[i]);
    }
    spread += static_cast<double>(hi - lo);
  }
  std::sort(seen.begin(), seen.end());
  BOOST_TEST_REQUIRE(seen.size() == 1000u);
  for (std::size_t i = 0; i < 1000; ++i) BOOST_TEST(seen[i] == i);
  // random batches of 16 lengths in 1..40 span about 30; sorted windows of 32 batches span about 2
  BOOST_TEST(spread / static_cast<double>(batches.size()) < 5.0);
  Rng same(6);
  BOOST_TEST(bucketed_batch_order(lengths, 16, same) == batches);
  BOOST_TEST(!(bucketed_batch_order(lengths, 16, rng) == batches));  // the next epoch has another order
  BOOST_TEST(bucketed_batch_order({}, 4, rng).empty());
}

BOOST_AUTO_TEST_SUITE_END()
