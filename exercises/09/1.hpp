// Exercise 9.1 — Luong's decoder without input feeding (docs/09-luong.md, "Exercises").
//
// With config.input_feeding = false, (9.1) becomes s_j = f(s_{j−1}, E y_{j−1}): the cell reads the embedding alone,
// W_ih shrinks from (3H, E + H) to (3H, E), and DecoderState::feed stays empty (there is no h̃_{j−1} to pass on).
//   state_by_hand: (9.1) by hand for a Luong decoder with or without input feeding (decoder.config().input_feeding),
//                  from y_{j−1} and the DecoderState before the step: s_{j−1} = state.h[0], h̃_{j−1} = state.feed. The
//                  starter is the chapter's step_by_hand, which reads state.feed whatever the setting: make it work
//                  both ways. The check walks dates through Luong decoders with and without input feeding, against
//                  decoder->step().
//   feeding_parameters: how many parameters input feeding adds to a one-layer model, as a formula in E, H and the
//                  kind of cell (nn::CellKind::rnn_tanh, gru or lstm). The check counts them with parameter_count().
//   first_step_reading_attention: the first output step j whose state s_j depends on the attention — on W_c, and so
//                  on the contexts c_1, c_2, … — with input feeding and without it; 0 when no s_j does. The check
//                  changes W_c and looks which s_j move.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstdint>
#include <vector>

#include "models/seq2seq.hpp"

namespace yours {

// s_j by (9.1) and the GRU's (2.3)–(2.6), from y_{j−1} and the state before the step.
std::vector<double> state_by_hand(const attend::models::LuongDecoder<double>& decoder, std::int64_t y_prev,
                                  const attend::models::DecoderState<double>& state);
// The parameters of a one-layer model with input feeding minus those of the same model without it.
std::size_t feeding_parameters(std::size_t E, std::size_t H, attend::nn::CellKind cell);
// The first j ≥ 1 at which s_j depends on W_c, or 0 if none does.
std::size_t first_step_reading_attention(bool input_feeding);

}  // namespace yours
