// Exercise 14.3 — a deep Transformer without warm-up, at a lower rate (docs/14-transformer.md, "Exercises").
//
// The chapter trains 6 + 6-layer models on the reversal task with the warm-up of (14.9). Here the warm-up goes: Adam
// at a constant learning rate η = 1e-4 from the very first step. Does the deep model learn? Which of post-norm (14.7)
// and pre-norm (14.8) learns faster?
//
// 1. train_constant: train `model` for `steps` steps, step s on batch_at(s) (s = 0 … steps − 1): Adam with
//    η = 1e-4 (its other options the defaults), no gradient clipping, no schedule, on the mean cross-entropy
//    model.loss(tape, batch). Return the loss of every step, and put into `rates` the η each step was taken with (the
//    optimizer's lr just before the step). Careful: a schedule sets the optimizer's η as soon as it is made
//    (nn::NoamLR's constructor sets η(1)), whether or not it is ever added to the trainer.
// 2. learns_faster: your prediction, "post-norm" or "pre-norm".
// The check trains 4 + 4-layer models (D = 32, 4 heads; sequences of 3–5 tokens from 6, 240 steps of 16) with your
// function, post-norm and pre-norm, three seeds each; "faster" is the lower mean loss over the 240 steps.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <functional>
#include <string>
#include <vector>

#include "models/transformer.hpp"

namespace yours {

// The loss of every step of training at a constant η = 1e-4; rates[s] = the η of step s.
std::vector<double> train_constant(attend::models::TransformerModel<float>& model,
                                   const std::function<attend::models::Batch(std::size_t)>& batch_at, std::size_t steps,
                                   std::vector<double>& rates);

// "post-norm" or "pre-norm".
std::string learns_faster();

}  // namespace yours
