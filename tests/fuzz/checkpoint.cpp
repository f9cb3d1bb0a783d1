// Fuzz target `checkpoint`: the safetensors reader (nn/checkpoint.hpp: read_checkpoint_metadata, list_checkpoint,
// load_checkpoint into a small Linear layer) and the `attend` model-file loader (apps/model_file.hpp:
// load_model_file, which reads the task, both vocabularies and the model configuration from the JSON metadata) on
// arbitrary bytes, written to a scratch file since both take a path.
// Bad bytes must give an exception with a message, nothing else. A finding is a crash, hang, leak, sanitizer report or
// allocation past the fuzzer's -malloc_limit_mb (a header length or shape that claims gigabytes must be refused by
// comparing it with the file's size, never allocated), an exception of another type than the headers promise
// (nn/checkpoint.hpp: std::runtime_error; load_model_file: InputError), a message that does not name the file, and any
// of these broken promises:
//   - read_checkpoint_metadata and list_checkpoint validate the same header: both succeed or both fail;
//   - a listed file is packed: tensors in data order, each as long as its dtype and shape say, each starting where the
//     previous one ends, the last ending at the end of the file;
//   - load_checkpoint either fills the layer with exactly the bytes its tensors have in the file and returns the
//     metadata read_checkpoint_metadata returns, or throws and leaves the layer unchanged;
//   - a loaded model's configuration agrees with its vocabularies.
#include "nn/checkpoint.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "apps/model_file.hpp"
#include "nn/layers.hpp"
#include "tests/fuzz/fuzz.hpp"

using namespace attend;
using fuzz::check;
using fuzz::finding;

namespace {

// Bytes per element of the dtypes the reader knows (those of safetensors); 0 for any other.
std::uint64_t element_bytes(const std::string& dtype) {
  static const std::map<std::string, std::uint64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  const auto found = sizes.find(dtype);
  return found == sizes.end() ? 0 : found->second;
}

// The message of an error the reader throws names the file.
void check_message(const std::exception& e, const std::string& path, const char* function) {
  const std::string what = e.what();
  check(what.find(path) != std::string::npos,
        std::string(function) + " threw a message that does not name the file: " + fuzz::printable(what));
}

// What `read` returns, or nullopt when it throws the std::runtime_error nn/checkpoint.hpp promises (any other
// exception is a finding).
template <class F>
auto read_or_refuse(const std::string& path, const char* function, F read) -> std::optional<decltype(read())> {
  try {
    return read();
  } catch (const std::runtime_error& e) {
    check_message(e, path, function);
  } catch (const std::exception& e) {
    finding(std::string(function) +
            " threw an exception that is not a std::runtime_error: " + fuzz::printable(e.what()));
  }
  return std::nullopt;
}

// The header length, as the file's first 8 bytes give it (little-endian).
std::uint64_t header_length(const std::uint8_t* data) {
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t{data[i]} << (8 * i);
  return n;
}

// The listed tensors cover the data exactly, in order, each as long as its dtype and shape say.
void check_packed(const std::vector<nn::CheckpointTensor>& tensors, const std::uint8_t* data, std::size_t size) {
  check(size >= 8, "a file of " + std::to_string(size) + " bytes was listed");
  const std::uint64_t header = header_length(data);
  check(header <= size - 8, "a header length past the end of the file was accepted");
  std::uint64_t expected = 0;
  for (const auto& t : tensors) {
    std::uint64_t bytes = element_bytes(t.dtype);
    check(bytes != 0, "tensor '" + t.name + "' has an unknown dtype " + t.dtype);
    for (const std::uint64_t dim : t.shape) bytes *= dim;  // no overflow: its range [begin, end) fits the file
    check(t.begin == expected, "tensor '" + t.name + "' does not start where the previous tensor ends");
    check(t.end - t.begin == bytes, "tensor '" + t.name + "' has a byte range of another length than its shape");
    expected = t.end;
  }
  check(expected == size - 8 - header, "the listed tensors do not end at the end of the file");
}

// Loads the input into a Linear(3 → 2) layer (W: (2, 3), b: (2,)), skipping tensors named "optimizer.*".
void check_load(const std::string& path, const std::uint8_t* data, std::size_t size,
                const std::vector<nn::CheckpointTensor>* listed, const nlohmann::json* metadata) {
  Rng rng(1);
  nn::Linear<float> layer(3, 2, rng);
  const nn::NamedParameters<float> params = layer.parameters();
  const std::vector<float> before_W(layer.W.value.data(), layer.W.value.data() + layer.W.value.size());
  const std::vector<float> before_b(layer.b.value.data(), layer.b.value.data() + layer.b.value.size());
  const std::optional<nlohmann::json> loaded =
      read_or_refuse(path, "load_checkpoint", [&] { return nn::load_checkpoint(path, params, {}, {"optimizer."}); });
  if (!loaded) {
    check(std::equal(before_W.begin(), before_W.end(), layer.W.value.data()) &&
              std::equal(before_b.begin(), before_b.end(), layer.b.value.data()),
          "a failed load_checkpoint changed the layer");
    return;
  }
  check(listed != nullptr && metadata != nullptr, "load_checkpoint read a file that list_checkpoint refuses");
  check(*loaded == *metadata, "load_checkpoint and read_checkpoint_metadata return different metadata");
  const std::uint64_t data_start = 8 + header_length(data);
  for (const auto& [name, p] : params) {
    const std::string& wanted = name;
    const auto t = std::find_if(listed->begin(), listed->end(), [&](const auto& t) { return t.name == wanted; });
    check(t != listed->end(), "load_checkpoint filled '" + name + "', which the file does not list");
    check(data_start + t->end <= size, "tensor '" + name + "' lies past the end of the file");
    check(t->end - t->begin == p->value.size() * sizeof(float) &&
              std::memcmp(p->value.data(), data + data_start + t->begin, t->end - t->begin) == 0,
          "load_checkpoint filled '" + name + "' with other bytes than the file's");
  }
}

void check_model_file(const std::string& path) {
  app::ModelFile file;
  try {
    file = app::load_model_file(path);
  } catch (const app::InputError& e) {
    check_message(e, path, "load_model_file");
    return;
  } catch (const std::exception& e) {
    finding("load_model_file threw an exception that is not an InputError: " + fuzz::printable(e.what()));
  }
  check(file.model != nullptr && file.task != nullptr, "load_model_file returned no model or no task");
  const std::unique_ptr<app::ModelKind> kind = app::model_kind_of_format(file.model->format());
  check(kind != nullptr && kind->input() == file.task->input(), "a model loaded for a task whose input it cannot read");
  // every vocabulary size the configuration names is its vocabulary's
  const nlohmann::json config = file.model->config_json();
  const auto same_size = [&](const char* key, std::size_t size) {
    check(!config.contains(key) || config.at(key).get<std::size_t>() == size,
          std::string("a loaded model's ") + key + " differs from its vocabulary");
  };
  same_size("source_vocab_size", file.source_vocabulary.size());
  same_size("target_vocab_size", file.target_vocabulary.size());
  same_size("vocab_size", file.target_vocabulary.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::ScratchFile scratch("checkpoint.safetensors");
  const std::string& path = scratch.write(data, size);

  const auto metadata =
      read_or_refuse(path, "read_checkpoint_metadata", [&] { return nn::read_checkpoint_metadata(path); });
  const auto listed = read_or_refuse(path, "list_checkpoint", [&] { return nn::list_checkpoint(path); });
  check(metadata.has_value() == listed.has_value(), "read_checkpoint_metadata and list_checkpoint disagree");
  if (listed) check_packed(*listed, data, size);
  check_load(path, data, size, listed ? &*listed : nullptr, metadata ? &*metadata : nullptr);
  check_model_file(path);
  return 0;
}
