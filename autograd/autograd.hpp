// Everything of the autograd in one include: tensors, the tape and its handles, the ops, the gradient checker.
#pragma once

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "autograd/tensor.hpp"
