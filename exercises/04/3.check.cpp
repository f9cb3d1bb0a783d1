// The check of exercise 4.3 (exercises/04/3.hpp): the influence of x_1 against central differences, the fitted decay
// against exact geometric data, the mean forget gate against a cell whose gate is a constant and against the reference
// solution; then three untrained LSTM encoders measured at T_x = 5 … 30 (is the decay geometric, and where does ρ
// sit?).
#include "exercises/04/3.hpp"

#include <cmath>
#include <string>
#define yours reference
#include "exercises/04/3.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/untrained_encoder.hpp"
#include "models/sequences.hpp"

using namespace attend;

namespace {

// An encoder of chapter 4's task: 4 special ids and 10 symbols.
nn::Encoder<double> untrained(nn::CellKind cell, std::size_t E, std::size_t H, std::uint64_t seed) {
  return exercise::untrained_encoder(14, E, H, cell, seed);
}

// B random sources of T_x symbols each, as chapter 4 draws them.
Ids sources(std::size_t B, std::size_t T_x, Rng& rng) {
  models::sequences::TaskConfig task;
  task.min_length = task.max_length = T_x;
  std::vector<std::size_t> all(B);
  for (std::size_t b = 0; b < B; ++b) all[b] = b;
  return models::sequences::batch_of(models::sequences::generate(task, B, rng), all).source;
}

// The mean ‖∂h_Tx/∂x_1‖_F by central differences on x_1's embedding (every source's at once: they do not interact).
double influence_by_differences(nn::Encoder<double>& encoder, const Ids& ids) {
  Tape<double> tape;
  const Tensor<double> x = encoder.embedding(tape, ids).value();  // (B, T_x, E)
  const std::size_t B = x.shape()[0], E = x.shape()[2], H = encoder.rnn.config().hidden_size;
  const double epsilon = 1e-6;
  std::vector<double> squares(B, 0.0);
  for (std::size_t e = 0; e < E; ++e) {
    Tensor<double> plus = x, minus = x;
    for (std::size_t b = 0; b < B; ++b) {
      plus.at({b, 0, e}) += epsilon;
      minus.at({b, 0, e}) -= epsilon;
    }
    const Tensor<double> h_plus = encoder.rnn.forward(tape.constant(plus)).h_final[0].value();
    const Tensor<double> h_minus = encoder.rnn.forward(tape.constant(minus)).h_final[0].value();
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t k = 0; k < H; ++k) {
        const double d = (h_plus.at({b, k}) - h_minus.at({b, k})) / (2 * epsilon);
        squares[b] += d * d;
      }
    }
  }
  double mean = 0;
  for (const double s : squares) mean += std::sqrt(s) / static_cast<double>(B);
  return mean;
}

void check_influence(exercise::Check& check, const std::string& name, nn::CellKind cell, std::size_t E, std::size_t H,
                     std::size_t B, std::size_t T_x) {
  nn::Encoder<double> encoder = untrained(cell, E, H, 5);
  Rng rng(6);
  const Ids ids = sources(B, T_x, rng);
  const double numeric = influence_by_differences(encoder, ids);
  check.near(name + ": mean ‖J_1‖_F from the tape = from central differences", yours::influence_of_x1(encoder, ids),
             numeric, 1e-6 * numeric + 1e-9);
}

// An LSTM encoder whose forget gate reads nothing but its biases: f = σ(b_if + b_hf) at every step.
double constant_gate_mean(double b_if, double b_hf, double* exact) {
  nn::Encoder<double> encoder = untrained(nn::CellKind::lstm, 6, 4, 9);
  nn::LstmCell<double>& cell = std::get<nn::LstmCell<double>>(encoder.rnn.cells[0][0]);
  const std::size_t H = 4;
  for (std::size_t k = H; k < 2 * H; ++k) {
    for (std::size_t e = 0; e < 6; ++e) cell.W_ih.value.at({k, e}) = 0;
    for (std::size_t l = 0; l < H; ++l) cell.W_hh.value.at({k, l}) = 0;
    cell.b_ih.value.data()[k] = b_if;
    cell.b_hh.value.data()[k] = b_hf;
  }
  *exact = 1 / (1 + std::exp(-(b_if + b_hf)));
  Rng rng(10);
  return yours::mean_forget_gate(encoder, sources(3, 7, rng));
}

// R² of the least-squares line of log(influence) against T_x: 1 for a geometric sequence.
double r_squared(const std::vector<double>& T, const std::vector<double>& influence) {
  const double n = static_cast<double>(T.size());
  double T_mean = 0, y_mean = 0, sxy = 0, sxx = 0, syy = 0;
  for (std::size_t k = 0; k < T.size(); ++k) T_mean += T[k] / n, y_mean += std::log(influence[k]) / n;
  for (std::size_t k = 0; k < T.size(); ++k) {
    const double dT = T[k] - T_mean, dy = std::log(influence[k]) - y_mean;
    sxy += dT * dy, sxx += dT * dT, syy += dy * dy;
  }
  return sxy * sxy / (sxx * syy);
}

// One untrained LSTM encoder and one GRU encoder of the same sizes and seed, measured at T_x = 5, 10, …, 30.
void measure_seed(exercise::Check& check, std::uint64_t seed) {
  const std::string name = "untrained encoders, E = 16, H = 32, seed " + std::to_string(seed);
  std::vector<double> lengths, lstm_influence, gru_influence;
  nn::Encoder<double> lstm = untrained(nn::CellKind::lstm, 16, 32, seed),
                      gru = untrained(nn::CellKind::gru, 16, 32, seed);
  Rng rng(8);
  double f_bar = 0;
  for (std::size_t T_x = 5; T_x <= 30; T_x += 5) {
    const Ids ids = sources(8, T_x, rng);
    lengths.push_back(static_cast<double>(T_x));
    lstm_influence.push_back(yours::influence_of_x1(lstm, ids));
    gru_influence.push_back(yours::influence_of_x1(gru, ids));
    if (T_x == 20) f_bar = yours::mean_forget_gate(lstm, ids);
  }
  const double rho = yours::decay_per_token(lengths, lstm_influence);
  const double rho_gru = yours::decay_per_token(lengths, gru_influence);
  const double fit = r_squared(lengths, lstm_influence);
  std::string table = "mean ‖J_1‖_F at T_x = 5 … 30:";
  for (const double v : lstm_influence) table += " " + exercise::number(v);
  check.that(fit >= 0.98, name + ": the LSTM's log ‖J_1‖ is a straight line in T_x (geometric decay)",
             table + "; R² of the line " + exercise::number(fit) + " ≥ 0.98");
  check.that(f_bar < rho && rho < 1, name + ": f̄ < ρ < 1: it forgets, more slowly than the memory cell's path alone",
             "ρ = " + exercise::number(rho) + " per token, f̄ = " + exercise::number(f_bar));
  check.that(std::abs(rho - rho_gru) < 0.1, name + ": the untrained LSTM forgets about as fast as the GRU",
             "ρ_LSTM = " + exercise::number(rho) + ", ρ_GRU = " + exercise::number(rho_gru) + " (|difference| < 0.1)");
}

}  // namespace

int main() {
  exercise::Check check("4.3", "the untrained LSTM encoder's memory of x_1");
  check.run("the influence of x_1, LSTM",
            [&] { check_influence(check, "LSTM, E = 16, H = 8, 3 sources of 6", nn::CellKind::lstm, 16, 8, 3, 6); });
  check.run("another case: the influence of x_1, GRU", [&] {
    check_influence(check, "another case: GRU, E = 16, H = 12, 2 sources of 4", nn::CellKind::gru, 16, 12, 2, 4);
  });
  check.run("another case: the influence of x_1, one source, H < E", [&] {
    check_influence(check, "another case: LSTM, E = 5, H = 3, 1 source of 9", nn::CellKind::lstm, 5, 3, 1, 9);
  });
  check.run("ρ of a geometric sequence", [&] {
    std::vector<double> T{5, 10, 15, 20, 25}, influence;
    for (const double t : T) influence.push_back(0.2 * std::pow(0.7, t));
    check.near("influence = 0.2 · 0.7^T_x at T_x = 5 … 25: ρ = 0.7", yours::decay_per_token(T, influence), 0.7, 1e-12);
  });
  check.run("another case: ρ through two points", [&] {
    check.near("another case: 10⁻² at T_x = 3, 10⁻⁵ at T_x = 8: ρ = 10^(−3/5)",
               yours::decay_per_token({3, 8}, {1e-2, 1e-5}), std::pow(10.0, -0.6), 1e-12);
  });
  check.run("another case: ρ of points off a line", [&] {
    const std::vector<double> T{4, 6, 9, 13}, influence{0.3, 0.02, 0.005, 1e-4};
    check.near("another case: 4 points off a line: ρ = the reference's", yours::decay_per_token(T, influence),
               reference::decay_per_token(T, influence), 1e-12);
  });
  check.run("f̄ of a constant forget gate", [&] {
    double exact = 0;
    const double yours = constant_gate_mean(0.3, 0.2, &exact);
    check.near("W_f = U_f = 0, b_if + b_hf = 0.5: f̄ = σ(0.5)", yours, exact, 1e-14);
  });
  check.run("another case: f̄ of an untrained LSTM", [&] {
    nn::Encoder<double> encoder = untrained(nn::CellKind::lstm, 16, 8, 4);
    Rng rng(12);
    const Ids ids = sources(5, 11, rng);
    check.near("another case: E = 16, H = 8, 5 sources of 11: f̄ = the reference's",
               yours::mean_forget_gate(encoder, ids), reference::mean_forget_gate(encoder, ids), 1e-13);
  });
  for (const std::uint64_t seed : {1, 2, 3}) {
    check.run("untrained encoders, seed " + std::to_string(seed), [&] { measure_seed(check, seed); });
  }
  return check.verdict();
}
