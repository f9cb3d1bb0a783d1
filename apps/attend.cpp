// The `attend` program: train, evaluate and use the encoder–decoder models with attention.
//   attend train --task TASK [--data FILE] [--arch KIND] [flags] --out m.safetensors
//   attend eval --model m.safetensors
//   attend predict --model m.safetensors [--beam 5] [--svg heatmap.svg] "an input"   (translate = predict)
//   attend data --task TASK [--data FILE] --write split/
// The tasks and model kinds are one file each in apps/tasks/ and apps/model_kinds/; `attend train --help` lists them,
// docs/reference/attend.md shows each at work.
// Exit status: 0 success, 2 a usage or input error (one line naming the problem; nothing written), 1 anything else.
// The command line is apps/cli.cpp; reference: docs/reference/attend.md.
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/cpu.hpp"

int main(int argc, char** argv) {
  attend::use_fitting_blas_kernels(argv);  // first: OpenBLAS on the kernels this CPU fits, when it chose older ones
  attend::use_block_cache();  // before the first tensor: each step reuses the blocks the previous step freed
  const std::vector<std::string> args(argv + 1, argv + argc);
  return attend::app::run_command_line(attend::app::parse_command_line(args));
}
