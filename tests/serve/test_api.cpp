// The API against a real `attend serve`: every endpoint, the answers equal to `attend predict`'s for many clients at
// once, per-input errors, the attention of every layer and head, images as base64 PGM.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>

#include "apps/model_file.hpp"
#include "apps/task.hpp"
#include "data/image.hpp"
#include "data/text.hpp"
#include "models/attribution.hpp"
#include "precision/precision.hpp"
#include "tests/needs_data.hpp"
#include "tests/serve/serve_helpers.hpp"

using namespace serve_test;
using nlohmann::json;

namespace {

// Inputs of several forms and lengths (the tiny models write poor dates, which is all the same for the comparison).
std::vector<std::string> date_inputs() {
  const std::vector<std::string> months = {"January", "March", "May", "July", "October", "December"};
  std::vector<std::string> inputs;
  for (int k = 0; k < 36; ++k) {
    const std::string day = std::to_string(1 + (k * 7) % 28), year = std::to_string(1950 + k * 3);
    const std::string& month = months[static_cast<std::size_t>(k) % months.size()];
    switch (k % 4) {
      case 0:
        inputs.push_back(month + " " + day + ", " + year);
        break;
      case 1:
        inputs.push_back(day + "/" + std::to_string(1 + k % 12) + "/" + year);
        break;
      case 2:
        inputs.push_back(year + "-0" + std::to_string(1 + k % 9) + "-1" + std::to_string(k % 10));
        break;
      default:
        inputs.push_back(day + " " + month + " " + year);
        break;
    }
  }
  return inputs;
}

// "output TAB score", the score to 4 decimals as predict prints it, or (digits) `decimals` as given.
std::string with_score(const json& output, int decimals = 4) {
  char score[40];
  std::snprintf(score, sizeof score, "%.*f", decimals, output.at("score").get<double>());
  return output.at("output").get<std::string>() + "\t" + score;
}

// An answer of the server ("output TAB score", the score as sent) is predict's line for the same input: the same
// output, and the score predict prints to 4 decimals. The last bits of a score depend on its batch's shape — how many
// rows its products had (OpenBLAS's sums are not the same for every row count) and how far its sources were padded —
// so the score is compared to what predict printed within half its last digit and 10⁻⁶, not as text (text differs
// when a score falls next to a rounding boundary: predict's own scores do, given other inputs beside it).
void same_answer(const std::string& answered, const std::string& expected, const std::string& input) {
  const std::size_t tab = answered.find('\t'), expected_tab = expected.find('\t');
  BOOST_TEST_REQUIRE(tab != std::string::npos, input);
  BOOST_TEST(answered.substr(0, tab) == expected.substr(0, expected_tab), input);
  const double score = std::stod(answered.substr(tab + 1)), printed = std::stod(expected.substr(expected_tab + 1));
  BOOST_TEST(std::abs(score - printed) <= 0.5e-4 + 1e-6, input << ": " << score << " printed as " << printed);
}

// `attend predict --scores` on the inputs, one line each.
std::vector<std::string> predicted(const std::string& model, const std::vector<std::string>& inputs, std::size_t beam,
                                   const std::string& precision = "float32") {
  std::string lines;
  for (const std::string& input : inputs) lines += input + "\n";
  const Run run = run_attend(
      "predict --scores --beam " + std::to_string(beam) + " --precision " + precision + " --model '" + model + "'",
      lines);
  BOOST_TEST_REQUIRE(run.status == 0, run.err);
  return cli_test::lines_of(run.out);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(api)

BOOST_AUTO_TEST_CASE(every_endpoint_answers) {
  Server server("--model '" + models().rnn + "' --model '" + models().transformer + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  BOOST_TEST(server.ready_line.find("(dates, dates-transformer)") != std::string::npos, server.ready_line);
  const Reply health = get(server.port, "/healthz");
  BOOST_TEST(health.status == 200);
  BOOST_TEST(health.json() == json({{"status", "ok"}}));
  const json listed = get(server.port, "/v1/models").json();
  BOOST_TEST_REQUIRE(listed["models"].size() == 2u);
  const json& rnn = listed["models"][0];
  BOOST_TEST(rnn["name"] == "dates");
  BOOST_TEST(rnn["kind"] == "seq2seq");
  BOOST_TEST(rnn["task"] == "dates");
  BOOST_TEST(rnn["input"] == "text");
  BOOST_TEST(rnn["source_vocabulary"].get<int>() > 20);
  BOOST_TEST(rnn["target_vocabulary"].get<int>() > 10);
  BOOST_TEST(rnn["parameters"].get<int>() > 1000);
  BOOST_TEST(rnn["max_input_length"] == 64);
  BOOST_TEST(rnn["training"]["epoch"].get<int>() >= 1);
  BOOST_TEST(rnn["training"].contains("validation_exact_match"));
  BOOST_TEST(!rnn["training"].contains("state"));  // the optimizer's state is no client's business
  BOOST_TEST(listed["models"][1]["kind"] == "transformer");
  // every answer so far is counted, by status
  const Reply metrics = get(server.port, "/metrics");
  BOOST_TEST(metrics.status == 200);
  BOOST_TEST(metrics.content_type.find("text/plain; version=0.0.4") == 0u);
  BOOST_TEST(metric(metrics.body, "attend_requests_total{code=\"200\"}") == 2);
  BOOST_TEST(metric(metrics.body, "attend_request_duration_seconds_count") == 2);
  BOOST_TEST(metric(metrics.body, "attend_queue_inputs{model=\"dates-transformer\"}") == 0);
  BOOST_TEST(metric(metrics.body, "attend_open_connections") >= 1);  // this one (the others may be closing)
  // a path the API has not, a method a path does not take
  const Reply missing = get(server.port, "/v2/predict");
  BOOST_TEST(missing.status == 404);
  BOOST_TEST(missing.json()["error"].get<std::string>().find("no such path: /v2/predict") == 0u, missing.body);
  const Reply wrong = get(server.port, "/v1/predict");
  BOOST_TEST(wrong.status == 405);
  BOOST_TEST(wrong.allow == "POST");
  BOOST_TEST(wrong.json()["error"] == "GET /v1/predict: the method is not allowed (use POST)");
  BOOST_TEST(request(server.port, http::verb::delete_, "/healthz").allow == "GET");
  const std::string after = get(server.port, "/metrics").body;
  BOOST_TEST(metric(after, "attend_requests_total{code=\"404\"}") == 1);
  BOOST_TEST(metric(after, "attend_requests_total{code=\"405\"}") == 2);
  // each error is one line of the log
  BOOST_TEST(server.stop() == 0);
  BOOST_TEST(cli_test::count(server.log(), " → 40") == 3u, server.log());
}

// Many clients at once, each with one or two inputs, decoded in whatever batches their timing makes: every answer is
// attend predict's (same_answer) — for the recurrent model and the Transformer, greedy and with a beam of 4. The
// CI-sized form of bench/serve_equality (16 clients, as there).
BOOST_AUTO_TEST_CASE(answers_equal_attend_predict_across_many_clients) {
  const std::vector<std::string> inputs = date_inputs();
  constexpr std::size_t n = 16;  // clients
  for (const std::string& model : {models().rnn, models().transformer}) {
    Server server("--model '" + model + "' --max-wait-ms 50 --max-batch 16");
    BOOST_TEST_REQUIRE(server.port != 0, server.log());
    for (const std::size_t beam : {1u, 4u}) {
      BOOST_TEST_CONTEXT(model << ", beam " << beam) {
        const std::vector<std::string> expected = predicted(model, inputs, beam);
        BOOST_TEST_REQUIRE(expected.size() == inputs.size());
        std::vector<std::string> answered(inputs.size());
        std::vector<std::thread> clients;
        for (std::size_t c = 0; c < n; ++c) {
          clients.emplace_back([&, c] {
            // client c sends inputs c, c + n, …, one or two a request
            for (std::size_t k = c; k < inputs.size(); k += 2 * n) {
              json body = {{"inputs", {inputs[k]}}, {"beam", beam}, {"scores", true}};
              if (k + n < inputs.size()) body["inputs"].push_back(inputs[k + n]);
              const Reply reply = post(server.port, body.dump());
              if (reply.status != 200) continue;
              const json outputs = reply.json()["outputs"];
              for (std::size_t i = 0; i < outputs.size(); ++i) answered[k + n * i] = with_score(outputs[i], 17);
            }
          });
        }
        for (std::thread& t : clients) t.join();
        for (std::size_t k = 0; k < inputs.size(); ++k) same_answer(answered[k], expected[k], inputs[k]);
      }
    }
    BOOST_TEST(metric(get(server.port, "/metrics").body, "attend_inputs_decoded_total") == 2.0 * inputs.size());
  }
}

// --precision int8 (the weights quantized when the models are loaded): every answer is `attend predict --precision
// int8`'s, and the scores are not float32's (the products were quantized). Without oneDNN: one line, exit 2.
BOOST_AUTO_TEST_CASE(int8_answers_equal_attend_predict_int8) {
  const std::vector<std::string> inputs = date_inputs();
  const std::string unavailable = attend::find_precision("int8")->unavailable();
  for (const std::string& model : {models().rnn, models().transformer}) {
    Server server("--model '" + model + "' --precision int8");
    if (!unavailable.empty()) {
      BOOST_TEST(server.port == 0);
      BOOST_TEST(server.wait() == 2);
      BOOST_TEST(server.log().find("--precision int8: " + unavailable) != std::string::npos, server.log());
      continue;
    }
    BOOST_TEST_REQUIRE(server.port != 0, server.log());
    BOOST_TEST(server.log().find("attend serve: products in int8: ") != std::string::npos, server.log());
    const std::vector<std::string> expected = predicted(model, inputs, 1, "int8"),
                                   float32 = predicted(model, inputs, 1);
    BOOST_TEST_REQUIRE(expected.size() == inputs.size());
    BOOST_TEST_REQUIRE(float32.size() == inputs.size());
    std::size_t differ = 0;
    for (std::size_t k = 0; k < inputs.size(); k += 2) {  // two inputs a request
      const Reply reply = post(server.port, json({{"inputs", {inputs[k], inputs[k + 1]}}, {"scores", true}}).dump());
      BOOST_TEST_REQUIRE(reply.status == 200, reply.body);
      for (std::size_t i = 0; i < 2; ++i) {
        const std::string answered = with_score(reply.json()["outputs"][i], 17);
        same_answer(answered, expected[k + i], inputs[k + i]);
        differ += float32[k + i] != expected[k + i];
      }
    }
    BOOST_TEST(differ > 0u, model);
  }
}

// Eight clients' requests, sent at once while another client keeps a connection open (so that the worker waits for
// more, up to --max-wait-ms): one batch of eight inputs, decoded as soon as it is full.
BOOST_AUTO_TEST_CASE(the_inputs_of_several_clients_are_decoded_in_one_batch) {
  Server server("--model '" + models().rnn + "' --max-wait-ms 5000 --max-batch 8");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  Raw idle(server.port);  // connected, sends nothing
  const std::vector<std::string> inputs = date_inputs();
  std::vector<std::string> answered(8);
  std::vector<std::thread> clients;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      const Reply reply = post(server.port, json({{"inputs", {inputs[c]}}}).dump());
      if (reply.status == 200) answered[c] = reply.json()["outputs"][0]["output"];
    });
  }
  for (std::thread& t : clients) t.join();
  BOOST_TEST(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 4.5);  // not the wait
  const std::string metrics = get(server.port, "/metrics").body;
  BOOST_TEST(metric(metrics, "attend_batch_size_count") == 1, metrics);
  BOOST_TEST(metric(metrics, "attend_batch_size_sum") == 8);
  const std::vector<std::string> expected = predicted(models().rnn, {inputs.begin(), inputs.begin() + 8}, 1);
  for (std::size_t c = 0; c < 8; ++c) BOOST_TEST(answered[c] == expected[c].substr(0, expected[c].find('\t')));
}

// A bad input among good ones gets its own error, in its place; the others are answered as predict answers them.
BOOST_AUTO_TEST_CASE(a_bad_input_gets_its_own_error) {
  Server server("--model '" + models().rnn + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const std::string long_input(65, '1');
  const json body = {{"inputs",
                      {"May 9, 2018", "",
                       std::string("9\0"
                                   "9",
                                   3),
                       long_input, "2018-05-09"}}};
  const Reply reply = post(server.port, body.dump());
  BOOST_TEST_REQUIRE(reply.status == 200, reply.body);
  const json outputs = reply.json()["outputs"];
  BOOST_TEST_REQUIRE(outputs.size() == 5u);
  const std::vector<std::string> expected = predicted(models().rnn, {"May 9, 2018", "2018-05-09"}, 1);
  BOOST_TEST(outputs[0]["output"] == expected[0].substr(0, expected[0].find('\t')));
  BOOST_TEST(outputs[4]["output"] == expected[1].substr(0, expected[1].find('\t')));
  BOOST_TEST(outputs[1]["error"] == "input 2: empty input: nothing to read");
  // a NUL does not cut the message short: control characters are shown escaped
  BOOST_TEST(outputs[2]["error"] ==
             "input 3: input \"9\\u00009\": the character \"\\u0000\" was never seen in training");
  BOOST_TEST(outputs[3]["error"].get<std::string>().find("input 4: input \"1111") == 0u);
  BOOST_TEST(outputs[3]["error"].get<std::string>().find("65 characters long; the model reads at most 64") !=
             std::string::npos);
  // nothing readable: every input its error, nothing decoded
  const Reply none = post(server.port, json({{"inputs", {""}}}).dump());
  BOOST_TEST(none.status == 200);
  BOOST_TEST(none.json()["outputs"][0]["error"] == "input 1: empty input: nothing to read");
}

// The attention of each output token: the Transformer's per decoder layer and head, the recurrent model's one map;
// the input's and the output's tokens with it; each row a distribution over the input.
BOOST_AUTO_TEST_CASE(attention_per_layer_and_head_with_the_tokens) {
  Server server("--model '" + models().rnn + "' --model '" + models().transformer + "' --model '" + models().vanilla +
                "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  for (const auto& [name, layers, heads] :
       {std::tuple<std::string, std::size_t, std::size_t>{"dates", 1, 1}, {"dates-transformer", 2, 2}}) {
    for (const std::size_t beam : {1u, 2u}) {
      BOOST_TEST_CONTEXT(name << ", beam " << beam) {
        const json body = {{"model", name}, {"inputs", {"May 9, 2018", "9.5.18"}}, {"attention", true}, {"beam", beam}};
        const Reply reply = post(server.port, body.dump());
        BOOST_TEST_REQUIRE(reply.status == 200, reply.body);
        const json answer = reply.json();
        const json& first = answer["outputs"][0];
        const json& attention = first["attention"];
        BOOST_TEST(attention["source"] == json({"M", "a", "y", " ", "9", ",", " ", "2", "0", "1", "8"}));
        BOOST_TEST(attention["layers"] == layers);
        BOOST_TEST(attention["heads"] == heads);
        const std::size_t T = attention["target"].size();
        BOOST_TEST(T >= 1u);
        // the output's tokens, then <eos> when it ended (a tiny model may run to the maximum length instead)
        const bool ended = attention["target"][T - 1] == "<eos>";
        std::string joined;
        for (std::size_t j = 0; j < T - (ended ? 1 : 0); ++j) joined += attention["target"][j].get<std::string>();
        BOOST_TEST(joined == first["output"].get<std::string>());
        BOOST_TEST_REQUIRE(attention["weights"].size() == layers);
        for (const json& layer : attention["weights"]) {
          BOOST_TEST_REQUIRE(layer.size() == heads);
          for (const json& head : layer) {
            BOOST_TEST_REQUIRE(head.size() == T);
            for (const json& row : head) {
              BOOST_TEST_REQUIRE(row.size() == 11u);
              double total = 0;
              for (const json& a : row) total += a.get<double>();
              BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-5));
            }
          }
        }
        BOOST_TEST(!answer["outputs"][1]["attention"].empty());
      }
    }
  }
  // the heads differ (they are not one map repeated)
  const json body = {{"model", "dates-transformer"}, {"inputs", {"May 9, 2018"}}, {"attention", true}};
  const json weights = post(server.port, body.dump()).json()["outputs"][0]["attention"]["weights"];
  BOOST_TEST(weights[0][0] != weights[0][1]);
  BOOST_TEST(weights[0][0] != weights[1][0]);
  // not asked for: not there; asked of a model without attention: refused
  const json plain = post(server.port, json({{"model", "dates"}, {"inputs", {"May 9, 2018"}}}).dump()).json();
  BOOST_TEST(!plain["outputs"][0].contains("attention"));
  BOOST_TEST(!plain["outputs"][0].contains("score"));
  const Reply vanilla =
      post(server.port, json({{"model", "dates-vanilla"}, {"inputs", {"May 9, 2018"}}, {"attention", true}}).dump());
  BOOST_TEST(vanilla.status == 400);
  BOOST_TEST(vanilla.json()["error"].get<std::string>().find("has no attention weights") != std::string::npos,
             vanilla.body);
}

namespace {

Reply explain(unsigned short port, const json& body) {
  return request(port, http::verb::post, "/v1/explain", body.dump());
}

// The largest |Σ row − 1| over every row of every map of an explanation's attention.
double worst_row_sum(const json& attention) {
  double worst = 0;
  for (const json& maps : attention) {
    for (const json& layer : maps["weights"]) {
      for (const json& head : layer) {
        for (const json& row : head) {
          double total = 0;
          for (const json& a : row) total += a.get<double>();
          worst = std::max(worst, std::abs(total - 1));
        }
      }
    }
  }
  return worst;
}

}  // namespace

// POST /v1/explain, what the explorer page shows of one input: the output and the weights /v1/predict gives for it,
// every attention of the Transformer (the encoder's and the decoder's too, the decoder's causal), the search's tree
// with the output as a path, and a recurrent decoder's scores, whose softmax is α.
BOOST_AUTO_TEST_CASE(explain_gives_every_attention_the_tree_and_the_equations) {
  Server server("--model '" + models().rnn + "' --model '" + models().transformer + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  for (const std::string name : {"dates", "dates-transformer"}) {
    for (const std::size_t beam : {1u, 3u}) {
      BOOST_TEST_CONTEXT(name << ", beam " << beam) {
        const Reply reply = explain(server.port, {{"model", name}, {"input", "May 9, 2018"}, {"beam", beam}});
        BOOST_TEST_REQUIRE(reply.status == 200, reply.body);
        const json x = reply.json()["explanation"];
        const json predicted = post(server.port, json({{"model", name},
                                                       {"inputs", {"May 9, 2018"}},
                                                       {"beam", beam},
                                                       {"attention", true},
                                                       {"scores", true}})
                                                     .dump())
                                   .json()["outputs"][0];
        BOOST_TEST(x["output"] == predicted["output"]);
        BOOST_TEST(x["score"].get<double>() == predicted["score"].get<double>(), boost::test_tools::tolerance(1e-6));
        BOOST_TEST(x["target"] == predicted["attention"]["target"]);
        BOOST_TEST(x["source"] == predicted["attention"]["source"]);
        const json& attention = x["attention"];
        BOOST_TEST_REQUIRE(attention.size() == (name == "dates" ? 1u : 3u));
        BOOST_TEST(attention[0]["name"] == "cross");
        BOOST_TEST(attention[0]["weights"] == predicted["attention"]["weights"]);  // the numbers predict --svg draws
        BOOST_TEST(worst_row_sum(attention) < 1e-5);
        const std::size_t S = x["source"].size(), T = x["target"].size();
        if (name == "dates-transformer") {
          BOOST_TEST(attention[1]["name"] == "encoder");
          BOOST_TEST(attention[2]["name"] == "decoder");
          BOOST_TEST(attention[1]["weights"][1][1].size() == S);
          BOOST_TEST(attention[1]["weights"][1][1][0].size() == S);
          const json& self = attention[2]["weights"][1][0];
          BOOST_TEST_REQUIRE(self.size() == T);
          for (std::size_t j = 0; j < T; ++j) {
            BOOST_TEST_REQUIRE(self[j].size() == T);
            for (std::size_t u = j + 1; u < T; ++u) BOOST_TEST(self[j][u].get<double>() == 0.0);  // causal
          }
          BOOST_TEST(attention[1]["weights"][0][0] != attention[1]["weights"][0][1]);  // the heads differ
          BOOST_TEST(!x.contains("equations"));
        } else {
          const json& e = x["equations"]["energies"];
          BOOST_TEST(x["equations"]["score"] == "additive");
          BOOST_TEST_REQUIRE(e.size() == T);
          BOOST_TEST(x["equations"]["annotation_norms"].size() == S);
          BOOST_TEST(x["equations"]["context_norms"].size() == T);
          double worst = 0;
          for (std::size_t j = 0; j < T; ++j) {
            BOOST_TEST_REQUIRE(e[j].size() == S);
            double total = 0;
            for (const json& v : e[j]) total += std::exp(v.get<double>());
            for (std::size_t i = 0; i < S; ++i) {
              const double alpha = std::exp(e[j][i].get<double>()) / total;
              worst = std::max(worst, std::abs(alpha - attention[0]["weights"][0][0][j][i].get<double>()));
            }
          }
          BOOST_TEST(worst < 1e-5);
        }
        // the tree: the output is a path of it, with the output's log-probability
        const json& tree = x["beam"];
        bool found = false;
        for (std::size_t s = 0; s < tree.size(); ++s) {
          for (std::size_t n = 0; n < tree[s].size(); ++n) {
            std::vector<std::string> path;
            for (std::int64_t at = static_cast<std::int64_t>(n), t = static_cast<std::int64_t>(s); t >= 0; --t) {
              const json& node = tree[static_cast<std::size_t>(t)][static_cast<std::size_t>(at)];
              path.insert(path.begin(), node["token"].get<std::string>());
              at = node["parent"].get<std::int64_t>();
            }
            if (path == x["target"].get<std::vector<std::string>>() &&
                std::abs(tree[s][n]["log_prob"].get<double>() - x["log_prob"].get<double>()) < 1e-9) {
              found = true;
              BOOST_TEST(tree[s][n]["attention"].size() == attention[0]["layers"].get<std::size_t>());
            }
          }
          std::size_t open = 0;
          for (const json& node : tree[s]) open += node["finished"].get<bool>() ? 0 : 1;
          BOOST_TEST(open <= beam);
        }
        BOOST_TEST(found, "the output " << x["target"] << " is no path of the tree");
      }
    }
  }
  // bad requests, as /v1/predict's
  BOOST_TEST(explain(server.port, {{"model", "dates"}}).json()["error"] == "no \"input\": give the input to explain");
  BOOST_TEST(explain(server.port, {{"input", "x"}}).status == 400);  // two models: which?
  BOOST_TEST(explain(server.port, {{"model", "nope"}, {"input", "x"}}).status == 404);
  const Reply unreadable = explain(server.port, {{"model", "dates"}, {"input", ""}});
  BOOST_TEST(unreadable.status == 400);
  BOOST_TEST(unreadable.json()["error"].get<std::string>().find("input 1: ") == 0u, unreadable.body);
  BOOST_TEST(explain(server.port, {{"model", "dates"}, {"input", "x"}, {"beam", 0}}).status == 400);
  BOOST_TEST(explain(server.port, {{"model", "dates"}, {"input", "x"}, {"temperature", 1}}).status == 400);
}

// POST /v1/explain's "precision": the input decoded in the precision the request names, whatever the server's
// (--precision): its output and score are `attend predict --precision P`'s (to predict's 4 decimals), its scores to
// the last digit are not the server's own precision's, and the answer names P. GET /v1/models lists the server's
// precision and those a request may name. A name no precision has, or one this CPU cannot run (where one cannot), is a
// 400 naming it.
BOOST_AUTO_TEST_CASE(explain_decodes_in_the_precision_a_request_names) {
  std::vector<std::string> inputs;
  for (std::size_t k = 0; k < date_inputs().size(); k += 3) inputs.push_back(date_inputs()[k]);
  const std::vector<std::string> available = attend::app::serve::available_precisions();
  const std::map<std::string, std::string> files = {{"dates", models().rnn},
                                                    {"dates-transformer", models().transformer}};
  for (const std::string own : {"float32", "int8"}) {
    if (std::find(available.begin(), available.end(), own) == available.end()) continue;  // int8_answers_… says why
    Server server("--model '" + models().rnn + "' --model '" + models().transformer + "' --precision " + own);
    BOOST_TEST_REQUIRE(server.port != 0, server.log());
    const json listed_models = get(server.port, "/v1/models").json();  // kept: the loop reads into it
    for (const json& listed : listed_models["models"]) {
      BOOST_TEST(listed["precision"] == own);
      BOOST_TEST(listed["precisions"] == json(available));
    }
    for (const auto& [name, file] : files) {
      std::map<std::string, std::vector<std::string>> answered;  // precision → the answers at full length
      for (const std::string& precision : available) {
        BOOST_TEST_CONTEXT("server in " << own << ", " << name << " explained in " << precision) {
          const std::vector<std::string> expected = predicted(file, inputs, 1, precision);
          BOOST_TEST_REQUIRE(expected.size() == inputs.size());
          for (std::size_t k = 0; k < inputs.size(); ++k) {
            const Reply reply = explain(server.port, {{"model", name}, {"input", inputs[k]}, {"precision", precision}});
            BOOST_TEST_REQUIRE(reply.status == 200, reply.body);
            BOOST_TEST(reply.json()["precision"] == precision);
            const json x = reply.json()["explanation"];
            same_answer(with_score(x), expected[k], inputs[k]);
            answered[precision].push_back(with_score(x, 17));
          }
        }
      }
      for (const std::string& precision : available)  // each was used: its scores are not the server's own
        if (precision != own) BOOST_TEST(answered[precision] != answered[own], name << ": " << precision);
    }
    // not named: the server's own
    const Reply plain = explain(server.port, {{"model", "dates"}, {"input", inputs[0]}});
    BOOST_TEST(plain.json()["precision"] == own);
  }
  Server server("--model '" + models().rnn + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const Reply unknown = explain(server.port, {{"input", inputs[0]}, {"precision", "fp8"}});
  BOOST_TEST(unknown.status == 400);
  BOOST_TEST(unknown.json()["error"].get<std::string>().find(
                 "\"precision\": no precision is named \"fp8\" (there are float32") == 0u,
             unknown.body);
  BOOST_TEST(explain(server.port, {{"input", inputs[0]}, {"precision", 8}}).status == 400);
  for (const attend::PrecisionBackend& backend : attend::precisions()) {
    const std::string why = backend.unavailable();
    if (why.empty()) continue;
    const Reply refused = explain(server.port, {{"input", inputs[0]}, {"precision", backend.name}});
    BOOST_TEST(refused.status == 400);
    BOOST_TEST(refused.json()["error"] ==
               "\"precision\": " + std::string(backend.name) + " cannot be used here: " + why);
  }
}

namespace {

// The rows of an explanation's attribution method as J·S numbers, after checking their shape.
std::vector<double> flat_rows(const json& rows, std::size_t J, std::size_t S) {
  std::vector<double> flat;
  BOOST_TEST_REQUIRE(rows.size() == J);
  for (const json& row : rows) {
    BOOST_TEST_REQUIRE(row.size() == S);
    for (const json& v : row) flat.push_back(v.get<double>());
  }
  return flat;
}

// A cross-attention's last layer averaged over its heads, (J, S) row by row, as the server averages it (in float).
std::vector<float> last_layer_mean(const json& cross) {
  const json& layer = cross["weights"].back();
  std::vector<float> mean;
  for (std::size_t h = 0; h < layer.size(); ++h) {
    std::size_t e = 0;
    for (const json& row : layer[h]) {
      for (const json& a : row) {
        if (h == 0) mean.push_back(0.0f);
        mean[e++] += a.get<float>() / static_cast<float>(layer.size());
      }
    }
  }
  return mean;
}

// A served model's file in double (a models::Seq2seq or TransformerModel): its configuration and its float weights,
// exactly.
template <class Model, class Config>
std::unique_ptr<Model> in_double(const attend::app::ModelFile& file) {
  auto exact = std::make_unique<Model>(Config::from_json(file.model->config_json()));
  std::map<std::string, const attend::Tensor<float>*> weights;
  for (const auto& [name, p] : file.model->module().parameters()) weights[name] = &p->value;
  for (const auto& [name, p] : exact->parameters()) {
    const attend::Tensor<float>& w = *weights.at(name);
    p->value = attend::Tensor<double>(w.shape(), w.data(), w.data() + w.size());
  }
  exact->eval();
  return exact;
}

// The attribution of `input`'s output (its `target` tokens) in double, as the server computes it in float.
std::vector<attend::models::Attribution<double>> attribution_in_double(const std::string& path,
                                                                       const std::string& input, const json& target,
                                                                       std::size_t steps) {
  namespace m = attend::models;
  const attend::app::ModelFile file = attend::app::load_model_file(path);
  const attend::app::serve::ReadInput read = attend::app::serve::read_input(file, input, 0);
  const std::vector<std::int64_t>& source = read.source;
  const std::vector<std::int64_t> output = file.target_vocabulary.encode(target.get<std::vector<std::string>>());
  if (std::string(file.model->format()) == "attend-captioner") {  // over the image's pixels
    auto exact = in_double<m::Captioner<double>, m::CaptionerConfig>(file);
    const attend::Tensor<float> pixels = attend::data::to_tensor(read.image);
    const attend::Tensor<double> image(pixels.shape(), pixels.data(), pixels.data() + pixels.size());
    const auto in = m::attribution_inputs(*exact, image, output, output.size());
    return {m::gradient_times_input(in), m::integrated_gradients(in, steps)};
  }
  if (std::string(file.model->format()) == "attend-seq2seq") {
    auto exact = in_double<m::Seq2seq<double>, m::Seq2seqConfig>(file);
    const auto in = m::attribution_inputs(*exact, source, output, output.size());
    return {m::gradient_times_input(in), m::integrated_gradients(in, steps)};
  }
  auto exact = in_double<m::TransformerModel<double>, m::TransformerConfig>(file);
  const auto in = m::attribution_inputs(*exact, source, output, output.size());
  attend::Tape<double> tape;
  attend::nn::AttentionWeights<double> weights;
  std::vector<std::int64_t> tokens = output;
  if (!tokens.empty() && tokens.back() == m::eos_id) tokens.pop_back();
  exact->forward(tape, m::make_batch({source}, {tokens}), &weights);
  return {m::gradient_times_input(in), m::integrated_gradients(in, steps),
          m::attention_rollout(weights, output.size())};
}

}  // namespace

// "attribution": true: gradient × input and integrated gradients over the input's characters (the Transformer adds
// attention rollout), one row a target token, each a share of 1 with its rank correlation to the attention row; the
// float32 numbers within 1e-3 of the same functions in double on the model's weights; the recurrent model's
// integrated gradients complete within 1 % (models suite: the Transformer's ReLU needs more steps).
BOOST_AUTO_TEST_CASE(explain_gives_gradient_attribution) {
  Server server("--model '" + models().rnn + "' --model '" + models().transformer + "' --model '" + models().vanilla +
                "' --max-attribution-steps 128");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const std::string input = "May 9, 2018";
  for (const auto& [name, path] :
       {std::pair<std::string, std::string>{"dates", models().rnn}, {"dates-transformer", models().transformer}}) {
    BOOST_TEST_CONTEXT(name) {
      const Reply reply =
          explain(server.port, {{"model", name}, {"input", input}, {"attribution", true}, {"steps", 128}});
      BOOST_TEST_REQUIRE(reply.status == 200, reply.body);
      const json x = reply.json()["explanation"];
      const std::size_t S = x["source"].size(), J = x["target"].size();
      const json& a = x["attribution"];
      const std::vector<attend::models::Attribution<double>> expected =
          attribution_in_double(path, input, x["target"], 128);
      BOOST_TEST(a["baseline"] == "padding");
      BOOST_TEST_REQUIRE(a["methods"].size() == expected.size());
      BOOST_TEST(a["methods"][1]["steps"] == 128);
      for (std::size_t m = 0; m < expected.size(); ++m) {
        const json& method = a["methods"][m];
        BOOST_TEST_CONTEXT(method["name"]) {
          BOOST_TEST(method["name"] == attend::models::to_string(expected[m].method));
          const std::vector<double> rows = flat_rows(method["rows"], J, S), values = flat_rows(method["values"], J, S);
          const std::vector<float> alpha = last_layer_mean(x["attention"][0]);
          for (std::size_t j = 0; j < J; ++j) {
            double total = 0;
            for (std::size_t i = 0; i < S; ++i) total += rows[j * S + i];
            BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-5));
            // ρ of the row's shares (as floats) and the cross-attention's last layer, heads averaged
            const std::vector<float> row(rows.begin() + static_cast<std::ptrdiff_t>(j * S),
                                         rows.begin() + static_cast<std::ptrdiff_t>((j + 1) * S));
            BOOST_TEST(method["agreement"].at(j).get<double>() ==
                       attend::models::rank_correlation(row.data(), alpha.data() + j * S, S));
          }
          double worst = 0;
          for (std::size_t e = 0; e < J * S; ++e) {
            worst = std::max({worst, std::abs(rows[e] - expected[m].rows.data()[e]),
                              std::abs(values[e] - expected[m].values.data()[e])});
          }
          BOOST_TEST(worst <= 1e-3);
        }
      }
      for (std::size_t j = 0; j < J; ++j) {  // complete: each row sums to its change of log p
        double total = 0;
        for (std::size_t i = 0; i < S; ++i) total += expected[1].values.data()[j * S + i];
        BOOST_TEST(a["methods"][1]["change"][j].get<double>() == expected[1].change[j],
                   boost::test_tools::tolerance(1e-3));
        BOOST_TEST_INFO("row " << j << ": Σ a " << total << ", change " << expected[1].change[j]);
        if (name == "dates")
          BOOST_TEST(std::abs(total - expected[1].change[j]) <= 0.01 * std::abs(expected[1].change[j]));
      }
    }
  }
  // not asked: not there; a model without attention: attribution without agreement; steps out of range: refused
  BOOST_TEST(
      !explain(server.port, {{"model", "dates"}, {"input", input}}).json()["explanation"].contains("attribution"));
  const json vanilla =
      explain(server.port, {{"model", "dates-vanilla"}, {"input", input}, {"attribution", true}}).json()["explanation"];
  BOOST_TEST(vanilla["attribution"]["methods"][1]["steps"] == 32);
  BOOST_TEST(!vanilla["attribution"]["methods"][0].contains("agreement"));
  const Reply many =
      explain(server.port, {{"model", "dates"}, {"input", input}, {"attribution", true}, {"steps", 129}});
  BOOST_TEST(many.status == 400);
  BOOST_TEST(many.json()["error"].get<std::string>().find("--max-attribution-steps") != std::string::npos, many.body);
  BOOST_TEST(explain(server.port, {{"model", "dates"}, {"input", input}, {"steps", 0}}).status == 400);
  BOOST_TEST(explain(server.port, {{"model", "dates"}, {"input", input}, {"attribution", 1}}).status == 400);
  // steps not given: 32, or the limit when lower
  using attend::app::serve::parse_explain_request;
  BOOST_TEST(parse_explain_request(R"({"input": "x", "attribution": true})", {64, 16, 64}).steps == 32u);
  BOOST_TEST(parse_explain_request(R"({"input": "x", "attribution": true})", {64, 16, 8}).steps == 8u);
}

// The value of `series` once `condition` holds of it, polling /metrics for up to `seconds`; its last value otherwise.
double metric_when(unsigned short port, const std::string& series, const std::function<bool(double)>& condition,
                   int seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  double value = metric(get(port, "/metrics").body, series);
  while (!condition(value) && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    value = metric(get(port, "/metrics").body, series);
  }
  return value;
}

// A client that leaves while its request waits for a batch (another connection is open, so the batcher waits for it)
// is noticed then, not when the answer is written: its input is never decoded and is counted as cancelled. Requests
// sent together on one connection (pipelined) are each answered, in order: what the server reads while a request is
// decoded stays for the next.
BOOST_AUTO_TEST_CASE(a_client_that_leaves_cancels_its_request_and_pipelined_ones_are_answered) {
  Server server("--model '" + models().rnn + "' --max-wait-ms 1500");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  {
    Raw idle(server.port);
    Raw client(server.port);
    BOOST_TEST(client.send(raw_post(R"({"inputs": ["1 2 2000"]})")));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    client.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  }
  const std::string metrics = get(server.port, "/metrics").body;
  BOOST_TEST(metric(metrics, "attend_inputs_cancelled_total") == 1, metrics);
  BOOST_TEST(metric(metrics, "attend_inputs_decoded_total") == 0, metrics);
  BOOST_TEST(server.log().find("POST /v1/predict: the client left") != std::string::npos, server.log());
  Raw both(server.port);
  BOOST_TEST(both.send(raw_post(R"({"inputs": ["1 2 2000"]})") + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string answers;
  for (int k = 0; k < 100 && answers.find("\"status\"") == std::string::npos && !both.closed(); ++k) {
    answers += both.receive_for(100);
  }
  const std::size_t outputs = answers.find("{\"model\":\"dates\",\"outputs\""), status = answers.find("\"status\"");
  BOOST_TEST((outputs != std::string::npos && status != std::string::npos && outputs < status), answers);
  BOOST_TEST(!both.closed());
}

// A client that leaves while its explanation's attribution runs (4,096 steps of a 59-character input: thousands of
// passes, far more than 5 s) stops it at the next pass: the input is counted as cancelled within 5 s, and the model
// answers the next request.
BOOST_AUTO_TEST_CASE(a_client_that_leaves_stops_its_attribution) {
  Server server("--model '" + models().rnn + "' --max-attribution-steps 4096");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  {
    Raw client(server.port);
    BOOST_TEST(client.send(
        raw_post(R"({"model": "dates", "input": "Saturday 9 May 2018 Saturday 9 May 2018 Saturday 9 May 2018",)"
                 R"( "attribution": true, "steps": 4096})",
                 "1.1", "/v1/explain")));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    client.close();
  }
  const double cancelled = metric_when(
      server.port, "attend_inputs_cancelled_total", [](double v) { return v == 1; }, 5);
  BOOST_TEST(cancelled == 1, server.log());
  BOOST_TEST(server.log().find("POST /v1/explain: the client left") != std::string::npos, server.log());
  const Reply reply = explain(server.port, {{"model", "dates"}, {"input", "9 May 2018"}});
  BOOST_TEST(reply.status == 200, reply.body);
}

// GET / is the explorer's page, with its stylesheet and script: compiled in, not read from a file.
BOOST_AUTO_TEST_CASE(the_explorer_page_is_served) {
  Server server("--model '" + models().rnn + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  for (const auto& [path, type, words] :
       {std::tuple<const char*, const char*, const char*>{"/", "text/html", "<script src=\"explorer.js\">"},
        {"/index.html", "text/html", "Attention explorer"},
        {"/explorer.css", "text/css", "#heatmap"},
        {"/explorer.js", "text/javascript", "v1/explain"}}) {
    const Reply reply = get(server.port, path);
    BOOST_TEST(reply.status == 200, path);
    BOOST_TEST(reply.content_type.find(type) == 0u, path << ": " << reply.content_type);
    BOOST_TEST(reply.body.find(words) != std::string::npos, path);
    const std::string file = path == std::string("/") ? "/index.html" : path;
    BOOST_TEST(reply.body == read_file(std::string(ATTEND_SOURCE_DIR) + "/apps/serve/explorer" + file), path);
  }
  BOOST_TEST(get(server.port, "/explorer.png").status == 404);
  BOOST_TEST(request(server.port, http::verb::post, "/").status == 405);
}

// The digits captioner reads PGM files sent in base64, and answers as attend predict --image does; its attention is
// over the image's grid.
BOOST_AUTO_TEST_CASE(digit_images_as_base64_pgm, *attend::test::needs_data({"digits/digits.csv.gz"})) {
  Server server("--model '" + models().digits + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const std::string image = models().digits_folder + "/test-0001.pgm";
  const std::string bytes = read_file(image);
  BOOST_TEST_REQUIRE(!bytes.empty());
  const Run predict = run_attend("predict --scores --model '" + models().digits + "' --image '" + image + "'");
  BOOST_TEST_REQUIRE(predict.status == 0, predict.err);
  const json body = {{"inputs", {base64(bytes), "not base64!", base64("P5 2 2 255\n\1\2\3\4")}},
                     {"scores", true},
                     {"attention", true}};
  const Reply reply = post(server.port, body.dump());
  BOOST_TEST_REQUIRE(reply.status == 200, reply.body);
  const json answer = reply.json();
  const json& outputs = answer["outputs"];
  BOOST_TEST(with_score(outputs[0]) + "\n" == predict.out);
  const json& attention = outputs[0]["attention"];
  BOOST_TEST(!attention.contains("source"));
  const std::size_t rows = attention["grid"][0], columns = attention["grid"][1];
  BOOST_TEST(attention["weights"][0][0][0].size() == rows * columns);
  BOOST_TEST(outputs[1]["error"] == "input 2: not base64: 11 characters, not a multiple of 4");
  BOOST_TEST(outputs[2]["error"].get<std::string>().find("input 3: ") == 0u, outputs[2]);
  BOOST_TEST(outputs[2]["error"].get<std::string>().find("2×2") != std::string::npos, outputs[2]);
  // /v1/explain adds each output token's attention over the pixels (predict --svg's maps): one a row, summing to 1
  const json x = explain(server.port, {{"input", base64(bytes)}}).json()["explanation"];
  BOOST_TEST(x["output"] == outputs[0]["output"]);
  BOOST_TEST(x["pixels"]["height"] == 12);
  BOOST_TEST(x["pixels"]["width"] == 64);
  BOOST_TEST_REQUIRE(x["pixels"]["maps"].size() == x["target"].size());
  for (const json& map : x["pixels"]["maps"]) {
    BOOST_TEST_REQUIRE(map.size() == 12u * 64u);
    double total = 0;
    for (const json& v : map) total += v.get<double>();
    BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-5));
  }
  // "attribution": over the pixels, from a blank image, each row beside the attention spread over the pixels; the
  // float32 numbers within 1e-3 of the same functions in double
  const json a = explain(server.port, {{"input", base64(bytes)}, {"attribution", true}, {"steps", 16}})
                     .json()["explanation"]["attribution"];
  BOOST_TEST(a["baseline"] == "blank");
  const std::vector<attend::models::Attribution<double>> expected =
      attribution_in_double(models().digits, base64(bytes), x["target"], 16);
  BOOST_TEST_REQUIRE(a["methods"].size() == 2u);
  const std::size_t J = x["target"].size(), S = 12 * 64;
  for (std::size_t m = 0; m < 2; ++m) {
    BOOST_TEST_CONTEXT(a["methods"][m]["name"]) {
      const std::vector<double> rows = flat_rows(a["methods"][m]["rows"], J, S),
                                values = flat_rows(a["methods"][m]["values"], J, S);
      double worst = 0;
      for (std::size_t e = 0; e < J * S; ++e) {
        worst = std::max({worst, std::abs(rows[e] - expected[m].rows.data()[e]),
                          std::abs(values[e] - expected[m].values.data()[e])});
      }
      BOOST_TEST(worst <= 1e-3);
      for (std::size_t j = 0; j < J; ++j) {
        const std::vector<float> row(rows.begin() + static_cast<std::ptrdiff_t>(j * S),
                                     rows.begin() + static_cast<std::ptrdiff_t>((j + 1) * S));
        const std::vector<float> map = x["pixels"]["maps"][j].get<std::vector<float>>();
        BOOST_TEST(a["methods"][m]["agreement"].at(j).get<double>() ==
                   attend::models::rank_correlation(row.data(), map.data(), S));
      }
    }
  }
}

namespace {

// Each line of a held-out file `attend data --write` wrote, as its tab-separated fields.
std::vector<std::vector<std::string>> tsv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : cli_test::lines_of(read_file(path))) {
    std::vector<std::string> fields;
    std::size_t at = 0;
    for (std::size_t tab; (tab = line.find('\t', at)) != std::string::npos; at = tab + 1)
      fields.push_back(line.substr(at, tab - at));
    fields.push_back(line.substr(at));
    rows.push_back(fields);
  }
  return rows;
}

// A text's characters joined by spaces: a dates line of test.tsv.
std::string spaced(const std::string& text) { return attend::data::join_tokens(attend::app::characters_of(text)); }

}  // namespace

// GET /v1/examples: the test split `attend data --write` writes, each input as a client sends it and the model reads
// it (for a sentence pair, the tokens it was cut into; for the digits, the test image's PGM bytes), with its
// references; a model whose data file is gone is a 404 naming the file, and one put back is read.
BOOST_AUTO_TEST_CASE(examples_are_the_test_split_as_a_client_sends_it,
                     *attend::test::needs_data({"digits/digits.csv.gz"})) {
  Scratch scratch;
  std::string pairs;
  const std::vector<std::string> words = {"red", "cat", "sees", "a", "dog", "big", "runs", "the"};
  for (std::size_t k = 0; k < 120; ++k) {
    pairs += words[k % 8] + " " + words[(k / 8) % 8] + (k % 3 ? "." : " ?") + "\t" + words[(k / 8) % 8] + " " +
             words[k % 8] + " !\n";
  }
  const std::string tsv = scratch.path("pairs.tsv"), model = scratch.path("pairs.safetensors");
  { std::ofstream(tsv) << pairs; }
  const std::string task = "--task pairs --data '" + tsv + "' --train-size 80 --valid-size 10 --test-size 30 ";
  for (const std::string& args : {"train " + task + "--epochs 1 --hidden 8 --embed 4 --out '" + model + "'",
                                  "data " + task + "--write '" + scratch.path("pairs") + "'",
                                  std::string("data --task dates --train-size 256 --valid-size 32 --test-size 40 "
                                              "--write '") +
                                      scratch.path("dates") + "'"}) {
    const Run run = run_attend(args);
    BOOST_TEST_REQUIRE(run.status == 0, args << ": " << run.err);
  }
  Server server("--model '" + models().rnn + "' --model '" + models().digits + "' --model '" + model + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  // dates: the first 25 of the 40, and every one read as written
  const json dates = get(server.port, "/v1/examples?model=dates&count=25").json();
  BOOST_TEST(dates["split"] == "test");
  BOOST_TEST(dates["total"] == 40);
  const auto written = tsv_rows(scratch.path("dates/test.tsv"));
  BOOST_TEST_REQUIRE(dates["examples"].size() == 25u, dates);
  for (std::size_t k = 0; k < 25; ++k) {
    const json& example = dates["examples"][k];
    BOOST_TEST(spaced(example["input"]) == written[k][0], k);
    BOOST_TEST(example["references"].size() == 1u);
    BOOST_TEST(spaced(example["references"][0]) == written[k][1], k);
  }
  BOOST_TEST(get(server.port, "/v1/examples?model=dates&count=1000").json()["examples"].size() == 40u);
  // sentence pairs: the tokens the model reads from each input are those of the split (the attention's "source")
  std::vector<std::string> inputs;
  const json listed = get(server.port, "/v1/examples?model=pairs&count=30").json();
  for (const json& example : listed["examples"]) inputs.push_back(example["input"]);
  const json outputs =
      post(server.port, json({{"model", "pairs"}, {"inputs", inputs}, {"attention", true}}).dump()).json()["outputs"];
  const auto pair_rows = tsv_rows(scratch.path("pairs/test.tsv"));
  BOOST_TEST_REQUIRE(outputs.size() == pair_rows.size(), outputs);
  for (std::size_t k = 0; k < pair_rows.size(); ++k) {
    BOOST_TEST(
        attend::data::join_tokens(outputs[k]["attention"]["source"].get<std::vector<std::string>>()) == pair_rows[k][0],
        k << ": " << inputs[k]);
    BOOST_TEST(listed["examples"][k]["references"][0].get<std::string>().find("!") != std::string::npos);
  }
  // digits: the test images' bytes
  const json digits = get(server.port, "/v1/examples?model=digits&count=4").json();
  BOOST_TEST_REQUIRE(digits["examples"].size() == 4u, digits);
  for (std::size_t k = 0; k < 4; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "/test-%04zu.pgm", k + 1);
    BOOST_TEST(attend::app::serve::decode_base64(digits["examples"][k]["input"]) ==
               read_file(models().digits_folder + name));
  }
  // a data file moved away: 404 naming it; put back: read
  std::rename(tsv.c_str(), (tsv + ".away").c_str());
  Server moved("--model '" + model + "'");
  BOOST_TEST_REQUIRE(moved.port != 0, moved.log());
  const Reply gone = get(moved.port, "/v1/examples");
  BOOST_TEST(gone.status == 404);
  BOOST_TEST(gone.json()["error"].get<std::string>().find("model pairs has no examples: ") == 0u, gone.body);
  BOOST_TEST(gone.json()["error"].get<std::string>().find(tsv) != std::string::npos, gone.body);
  std::rename((tsv + ".away").c_str(), tsv.c_str());
  BOOST_TEST(get(moved.port, "/v1/examples?count=2").json()["examples"].size() == 2u);
  BOOST_TEST(get(moved.port, "/v1/examples?count=0").status == 400);
}

BOOST_AUTO_TEST_SUITE_END()
