// The check of exercise 2.2 (exercises/02/2.hpp): the GRU step by hand against chapter 2's nn::GruCell loop, from
// h_0 = 0 (h_1), from the learner's own h_1 (h_2), along the whole sentence, and from other states of another cell.
#include "exercises/02/2.hpp"

#include <string>
#define yours reference
#include "exercises/02/2.hpp"
#undef yours
#include "exercises/check.hpp"

using namespace attend;

namespace {

std::vector<double> values(const Tensor<double>& t) { return std::vector<double>(t.data(), t.data() + t.size()); }

// Chapter 2's loop: the embeddings x (1, T_x, E) and h_1 … h_Tx of nn::GruCell from h_0 = 0.
struct Loop {
  std::vector<std::vector<double>> x, h;
};

Loop chapter_loop(nn::Embedding<double>& embed, nn::GruCell<double>& gru, const std::vector<std::int64_t>& ids) {
  Tape<double> tape;
  const std::size_t T_x = ids.size(), H = gru.hidden_size();
  Ids tokens(Shape{1, T_x});
  for (std::size_t i = 0; i < T_x; ++i) tokens.data()[i] = ids[i];
  const Variable<double> x = embed(tape, tokens);
  Variable<double> h_prev = tape.constant(Tensor<double>(Shape{1, H}));
  Loop loop;
  for (std::size_t i = 0; i < T_x; ++i) {
    const Variable<double> x_i = select(x, 1, i);
    h_prev = gru(x_i, h_prev);
    loop.x.push_back(values(x_i.value()));
    loop.h.push_back(values(h_prev.value()));
  }
  return loop;
}

// h′ of nn::GruCell itself from (x, h).
std::vector<double> cell_step(nn::GruCell<double>& gru, const std::vector<double>& x, const std::vector<double>& h) {
  Tape<double> tape;
  return values(
      gru(tape.constant(Tensor<double>(Shape{1, x.size()}, x)), tape.constant(Tensor<double>(Shape{1, h.size()}, h)))
          .value());
}

}  // namespace

int main() {
  exercise::Check check("2.2", "h_2 by hand");
  // The chapter's sentence "the cat sat on the mat", E = 4, H = 3, weights drawn as chapter 2 draws them.
  const std::vector<std::int64_t> ids{1, 2, 3, 4, 1, 5};
  Rng rng(2);
  nn::Embedding<double> embed(6, 4, rng, 0);
  nn::GruCell<double> gru(4, 3, rng);
  const Loop loop = chapter_loop(embed, gru, ids);
  const std::vector<double> h_0(3, 0.0);
  std::vector<double> h_1;
  check.run("h_1 by hand from h_0 = 0", [&] {
    h_1 = yours::gru_step_by_hand(gru, loop.x[0], h_0);
    check.near("h_1 by hand from (x_1, h_0 = 0) = the GruCell's h_1", h_1, loop.h[0], 1e-13);
  });
  check.run("h_2 by hand from your h_1", [&] {
    if (h_1.empty()) h_1 = loop.h[0];
    check.near("h_2 by hand from (x_2, h_1), U h_1 ≠ 0, = the GruCell's h_2",
               yours::gru_step_by_hand(gru, loop.x[1], h_1), loop.h[1], 1e-13);
  });
  check.run("another case: h_1 … h_6 by hand, each from the one before", [&] {
    std::vector<double> h = h_0, all, expected;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      h = yours::gru_step_by_hand(gru, loop.x[i], h);
      all.insert(all.end(), h.begin(), h.end());
      expected.insert(expected.end(), loop.h[i].begin(), loop.h[i].end());
    }
    check.near("another case: h_1 … h_6 by hand = the GruCell loop's", all, expected, 1e-12);
  });
  check.run("another case: E = 2, H = 5, states far from 0", [&] {
    Rng weights(17), draws(23);
    nn::GruCell<double> other(2, 5, weights);
    for (int k = 0; k < 3; ++k) {
      const std::vector<double> x = values(draws.uniform_tensor<double>(Shape{2}, -2, 2));
      const std::vector<double> h = values(draws.uniform_tensor<double>(Shape{5}, -1, 1));
      check.near("another case: E = 2, H = 5, h drawn from [−1, 1]: h′ by hand = the GruCell's",
                 yours::gru_step_by_hand(other, x, h), cell_step(other, x, h), 1e-13);
    }
  });
  check.run("the reference solution", [&] {
    check.near("h_2 by hand = the reference's", yours::gru_step_by_hand(gru, loop.x[1], loop.h[0]),
               reference::gru_step_by_hand(gru, loop.x[1], loop.h[0]), 1e-13);
  });
  return check.verdict();
}
