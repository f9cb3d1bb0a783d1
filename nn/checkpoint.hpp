// Checkpoints: every parameter of a model by name, a JSON metadata block (model configuration, vocabularies, training
// step) and optionally more named tensors (optimizer state), in the safetensors format (an 8-byte little-endian
// header length, a JSON header, then the raw little-endian tensor bytes), so that a file opens in Python with
// `safetensors` or with plain json + NumPy. Saves are atomic (temporary file in the same folder, fsync, rename); loads
// validate the whole file before they touch the model, so a failed load leaves it unchanged. Every error is a
// std::runtime_error that names the file and, where there is one, the tensor.
// Format, what is validated, and a NumPy snippet: docs/reference/checkpoints.md.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.hpp"
#include "nn/module.hpp"

namespace attend::nn {

// Tensors a load fills, by name. Each must already have the shape stored in the file (allocate it first).
template <class T>
using NamedTensorSlots = std::vector<std::pair<std::string, Tensor<T>*>>;

// One tensor of a checkpoint file as its header describes it.
struct CheckpointTensor {
  std::string name;
  std::string dtype;                 // safetensors' spelling: "F32", "F64", "I64", "BF16", ...
  std::vector<std::uint64_t> shape;  // outermost first; empty for a scalar
  std::uint64_t begin = 0;           // byte range [begin, end) in the data that follows the header
  std::uint64_t end = 0;
};

// Writes `params` (each under its name), `extra` (names must differ from the parameters') and `metadata` to `path`,
// replacing the file atomically: a failure at any point throws and leaves a previous file at `path` as it was.
// The dtype is F32 for float and F64 for double. `metadata` is any JSON value; it is stored as text under
// __metadata__["attend"], because safetensors' own metadata is a map of strings to strings.
template <class T>
void save_checkpoint(const std::string& path, const NamedParameters<T>& params, const nlohmann::json& metadata,
                     const NamedTensors<T>& extra = {});

// Fills every parameter of `params` and every tensor of `extra` from the tensor of the same name in `path`, and returns
// the metadata saved with them (an empty object for a file with none, e.g. one written by PyTorch's safetensors).
// Every name must be in the file with the same dtype and shape, and every tensor in the file must be asked for, unless
// its name starts with one of `ignore_prefixes` (e.g. {"optimizer."} to load a training checkpoint for inference).
// Everything is checked, and all data read, before the first value is written: on any error nothing has changed.
template <class T>
nlohmann::json load_checkpoint(const std::string& path, const NamedParameters<T>& params,
                               const NamedTensorSlots<T>& extra = {},
                               const std::vector<std::string>& ignore_prefixes = {});

// Every tensor of a safetensors file by name — one written by save_checkpoint, or by PyTorch's
// safetensors.torch.save_file(module.state_dict(), path) — to pass to Module::load after renaming what differs.
// Every tensor must have T's dtype (F32 for float, F64 for double) and rank ≤ 4; errors name the file and the tensor.
template <class T>
std::map<std::string, Tensor<T>> read_tensors(const std::string& path);

// The metadata alone, to build a model from its saved configuration before loading its weights. Validates the header.
nlohmann::json read_checkpoint_metadata(const std::string& path);

// The tensors of a checkpoint (name, dtype, shape, byte range), in the order of their data. Validates the header.
std::vector<CheckpointTensor> list_checkpoint(const std::string& path);

}  // namespace attend::nn
