// The model interface's shared parts (model.hpp).
#include "apps/model.hpp"

#include "nn/checkpoint.hpp"

namespace attend::app {

void Model::add_scores(const std::vector<models::Hypothesis>&, Scores&) const {}

// Every weight of the model is a tensor of the file, so a configuration that asks for more weights than the file holds
// is damaged: refused before building the model would allocate (and initialise) what it asks for, which a few edited
// digits can make gigabytes, or a million layers.
void check_sizes_fit(const std::string& path, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& products,
                     std::uint64_t tensors) {
  const std::vector<nn::CheckpointTensor> listed = nn::list_checkpoint(path);
  std::uint64_t bytes = 0;  // of all tensors together: more than their elements
  for (const auto& t : listed) bytes += t.end - t.begin;
  bool fits = tensors <= listed.size();
  for (const auto& [a, b] : products) {
    std::uint64_t product = 0;
    fits = fits && !__builtin_mul_overflow(a, b, &product) && product <= bytes;
  }
  if (!fits)
    throw InputError("model file " + path + ": the model configuration asks for more weights than the file holds");
}

}  // namespace attend::app
