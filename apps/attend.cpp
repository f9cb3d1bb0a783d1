// The `attend` program: train, evaluate and use the encoder–decoder models with attention.
//   attend train --task dates --decoder bahdanau --out dates.safetensors
//   attend eval --model dates.safetensors
//   attend predict --model dates.safetensors [--beam 5] [--svg heatmap.svg] "Saturday 09 May 2018"
//   attend train --task pairs --data spa-eng.tsv --source spa --target eng --out spa-eng.safetensors
//   attend translate --model spa-eng.safetensors "¿Dónde está la biblioteca?"   (translate = predict)
//   attend data --task pairs --data spa-eng.tsv --write spa-eng-split/
// Exit status: 0 success, 2 a usage or input error (one line naming the problem; nothing written), 1 anything else.
// The command line is apps/cli.cpp; reference: docs/reference/attend.md.
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "fast/block_cache.hpp"

int main(int argc, char** argv) {
  attend::use_block_cache();  // before the first tensor: each step reuses the blocks the previous step freed
  const std::vector<std::string> args(argv + 1, argv + argc);
  return attend::app::run_command_line(attend::app::parse_command_line(args));
}
