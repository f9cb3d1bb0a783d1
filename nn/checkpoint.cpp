// Saving and loading safetensors checkpoints (checkpoint.hpp). A file is
//   [8 bytes]  N, the length of the header, as a little-endian uint64
//   [N bytes]  the header: a UTF-8 JSON object, padded with spaces so that the data starts at a multiple of 8 bytes
//   [the rest] the data: each tensor's elements, row-major and little-endian, packed one after another
// and the header maps each tensor's name to {"dtype", "shape", "data_offsets": [begin, end)} (offsets counted from
// the start of the data), plus "__metadata__", a map of strings to strings. Reference: docs/reference/checkpoints.md.
#include "nn/checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "io/atomic_file.hpp"

namespace attend::nn {

// Tensor bytes are written and read as they lie in memory, which is little-endian on every host attend targets.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian: add byte swaps");

namespace {

constexpr std::uint64_t length_bytes = 8;  // the header length field
// A header longer than this is refused before it is read (the reference implementation's limit too).
constexpr std::uint64_t max_header_bytes = 100'000'000;
constexpr const char* metadata_key = "__metadata__";
constexpr const char* attend_key = "attend";  // __metadata__["attend"]: the user's metadata as JSON text

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("checkpoint " + path + ": " + what);
}

std::string in_quotes(const std::string& name) { return "'" + name + "'"; }

template <class T>
std::vector<std::uint64_t> shape_of(const Tensor<T>& t) {
  return std::vector<std::uint64_t>(t.shape().begin(), t.shape().end());
}

template <class T>
const char* dtype_of();
template <>
const char* dtype_of<float>() {
  return "F32";
}
template <>
const char* dtype_of<double>() {
  return "F64";
}

// Bytes per element of the dtypes safetensors defines; 0 for any other name.
std::uint64_t dtype_size(const std::string& dtype) {
  static const std::unordered_map<std::string, std::uint64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

// An open file descriptor, closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// ---------------------------------------------------------------------------------------------------------------------
// reading

// Reads exactly `size` bytes at `offset`; `what` names the part of the file for the error message.
void read_at(int fd, void* buffer, std::uint64_t size, std::uint64_t offset, const std::string& path,
             const std::string& what) {
  char* out = static_cast<char*>(buffer);
  while (size > 0) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(size, std::uint64_t{1} << 30));
    const ssize_t n = ::pread(fd, out, chunk, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      fail(path, "cannot read " + what + ": " + std::strerror(error));
    }
    if (n == 0) fail(path, "the file ends inside " + what + " (it shrank while it was read)");
    out += n;
    offset += static_cast<std::uint64_t>(n);
    size -= static_cast<std::uint64_t>(n);
  }
}

// The header of an open file, fully validated against the file's size.
struct Header {
  std::uint64_t data_start = 0;                        // 8 + N: where the data begins in the file
  std::vector<CheckpointTensor> tensors;               // in the order of their data
  nlohmann::json metadata = nlohmann::json::object();  // the user's metadata; {} when the file has none
};

// A non-negative integer of the header (nlohmann parses those, and only those, as number_unsigned).
bool is_count(const nlohmann::json& j) { return j.is_number_unsigned(); }

// One "name": {"dtype", "shape", "data_offsets"} entry, checked on its own and against the size of the data.
CheckpointTensor parse_entry(const std::string& path, const std::string& name, const nlohmann::json& entry,
                             std::uint64_t data_size) {
  const std::string tensor = "tensor " + in_quotes(name);
  if (!entry.is_object()) fail(path, tensor + ": its header entry is not a JSON object but " + entry.dump());
  CheckpointTensor info;
  info.name = name;

  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) fail(path, tensor + " has no \"dtype\" string");
  info.dtype = dtype->get<std::string>();
  const std::uint64_t element_bytes = dtype_size(info.dtype);
  if (element_bytes == 0) fail(path, tensor + " has unknown dtype " + in_quotes(info.dtype));

  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array() || !std::all_of(shape->begin(), shape->end(), is_count)) {
    fail(path, tensor + " has no \"shape\" list of non-negative integers");
  }
  for (const auto& dim : *shape) info.shape.push_back(dim.get<std::uint64_t>());

  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
      !std::all_of(offsets->begin(), offsets->end(), is_count)) {
    fail(path, tensor + " has no \"data_offsets\" pair [begin, end] of non-negative integers");
  }
  info.begin = (*offsets)[0].get<std::uint64_t>();
  info.end = (*offsets)[1].get<std::uint64_t>();
  const std::string range = "data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) + "]";
  if (info.begin > info.end) fail(path, tensor + " has " + range + ": begin is past end");

  // bytes = (product of the dimensions) × element size, refusing shapes whose size does not fit in 64 bits
  std::uint64_t bytes = element_bytes;
  for (const std::uint64_t dim : info.shape) {
    if (dim != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / dim) {
      fail(path, tensor + " has shape " + attend::to_string(info.shape) + ", too large to address");
    }
    bytes *= dim;
  }
  if (info.end - info.begin != bytes) {
    fail(path, tensor + " has " + range + " (" + std::to_string(info.end - info.begin) + " bytes), but dtype " +
                   info.dtype + " and shape " + attend::to_string(info.shape) + " need " + std::to_string(bytes) +
                   " bytes");
  }
  if (info.end > data_size) {
    fail(path, tensor + " has " + range + ", past the end of the data (" + std::to_string(data_size) +
                   " bytes): the file is truncated");
  }
  return info;
}

// __metadata__: a map of strings to strings, whose "attend" entry (if any) is the user's metadata as JSON text.
nlohmann::json parse_metadata(const std::string& path, const nlohmann::json& block) {
  if (!block.is_object()) fail(path, "the header's __metadata__ is not a JSON object");
  for (const auto& [key, value] : block.items()) {
    if (!value.is_string()) {
      fail(path,
           "the header's __metadata__ must map names to strings, but " + in_quotes(key) + " holds " + value.dump());
    }
  }
  const auto text = block.find(attend_key);
  if (text == block.end()) return nlohmann::json::object();
  try {
    return nlohmann::json::parse(text->get<std::string>());
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, "__metadata__[\"attend\"] is not valid JSON (error at byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::out_of_range&) {
    fail(path, "__metadata__[\"attend\"] holds a number too large for a double");
  }
}

// The header of the open file `fd` (which must be a regular file), read and validated against the file's size.
Header read_header(const std::string& path, const Fd& fd) {
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) {
    const int error = errno;
    fail(path, std::string("cannot stat the file: ") + std::strerror(error));
  }
  if (!S_ISREG(status.st_mode)) fail(path, "not a regular file");
  const auto file_size = static_cast<std::uint64_t>(status.st_size);

  // N: the header length, 8 bytes little-endian
  if (file_size < length_bytes) {
    fail(path, "the file is " + std::to_string(file_size) +
                   " bytes long, shorter than the 8-byte header length: it is truncated or not a safetensors file");
  }
  unsigned char length[length_bytes];
  read_at(fd.get(), length, length_bytes, 0, path, "the header length");
  std::uint64_t header_size = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) header_size |= std::uint64_t{length[i]} << (8 * i);
  if (header_size > file_size - length_bytes) {
    fail(path, "the header length " + std::to_string(header_size) + " runs past the end of the file (" +
                   std::to_string(file_size) + " bytes): it is truncated or not a safetensors file");
  }
  if (header_size > max_header_bytes) {
    fail(path, "the header length " + std::to_string(header_size) + " exceeds the limit of " +
                   std::to_string(max_header_bytes) + " bytes");
  }

  // the header: a JSON object (trailing spaces are the padding)
  std::string text(static_cast<std::size_t>(header_size), '\0');
  read_at(fd.get(), text.data(), header_size, length_bytes, path, "the header");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, "the header is not valid JSON (error at byte " + std::to_string(e.byte) + " of " +
                   std::to_string(header_size) + ")");
  } catch (const nlohmann::json::out_of_range&) {
    // nlohmann reports a number past the range of a double (1e400) as out_of_range, not as a parse error
    fail(path, "the header holds a number too large for a double");
  }
  if (!json.is_object() || text.front() != '{') fail(path, "the header is not a JSON object");

  Header header;
  header.data_start = length_bytes + header_size;
  const std::uint64_t data_size = file_size - header.data_start;
  for (const auto& [key, value] : json.items()) {
    if (key == metadata_key) {
      header.metadata = parse_metadata(path, value);
    } else {
      header.tensors.push_back(parse_entry(path, key, value, data_size));
    }
  }

  // the data must be packed: sorted by position, each tensor starts where the previous one ended, and the last one
  // ends at the end of the file (no overlaps, no gaps, no trailing bytes — the reference reader refuses them too)
  std::sort(header.tensors.begin(), header.tensors.end(), [](const CheckpointTensor& a, const CheckpointTensor& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  std::uint64_t expected = 0;
  const CheckpointTensor* previous = nullptr;
  for (const CheckpointTensor& t : header.tensors) {
    if (t.begin < expected) {
      fail(path, "tensors " + in_quotes(previous->name) + " and " + in_quotes(t.name) + " overlap (bytes [" +
                     std::to_string(previous->begin) + ", " + std::to_string(previous->end) + ") and [" +
                     std::to_string(t.begin) + ", " + std::to_string(t.end) + "))");
    }
    if (t.begin > expected) {
      fail(path, "tensor " + in_quotes(t.name) + " starts at byte " + std::to_string(t.begin) +
                     " of the data, leaving " + std::to_string(t.begin - expected) + " unused bytes before it");
    }
    expected = t.end;
    previous = &t;
  }
  if (expected != data_size) {
    fail(path, "the file has " + std::to_string(data_size - expected) + " bytes after the last tensor's data");
  }
  return header;
}

Fd open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    fail(path, std::string("cannot open the file: ") + std::strerror(error));
  }
  return Fd(fd);
}

// ---------------------------------------------------------------------------------------------------------------------
// writing

}  // namespace

// ---------------------------------------------------------------------------------------------------------------------
// the public functions

template <class T>
void save_checkpoint(const std::string& path, const NamedParameters<T>& params, const nlohmann::json& metadata,
                     const NamedTensors<T>& extra) {
  // what to write, in this order: the parameters, then the extra tensors
  std::vector<std::pair<std::string, const Tensor<T>*>> tensors;
  for (const auto& [name, p] : params) {
    if (p == nullptr) fail(path, "parameter " + in_quotes(name) + " is a null pointer");
    tensors.emplace_back(name, &p->value);
  }
  for (const auto& [name, t] : extra) {
    if (t == nullptr) fail(path, "extra tensor " + in_quotes(name) + " is a null pointer");
    tensors.emplace_back(name, t);
  }
  std::unordered_set<std::string> names;
  for (const auto& [name, t] : tensors) {
    if (name == metadata_key) fail(path, "a tensor cannot be named " + in_quotes(name) + " (reserved by safetensors)");
    if (!names.insert(name).second) fail(path, "two tensors are named " + in_quotes(name));
  }

  // the header: __metadata__ first, then one entry per tensor with its byte range in the data, in data order
  nlohmann::ordered_json header;
  std::string text;
  try {
    header[metadata_key] = {{"format", "attend"}, {attend_key, metadata.dump()}};
    std::uint64_t offset = 0;
    for (const auto& [name, t] : tensors) {
      const std::uint64_t bytes = std::uint64_t{t->size()} * sizeof(T);
      header[name] = {{"dtype", dtype_of<T>()},
                      {"shape", shape_of(*t)},
                      {"data_offsets", nlohmann::ordered_json::array({offset, offset + bytes})}};
      offset += bytes;
    }
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    // dump() refuses strings (metadata or tensor names) that are not valid UTF-8
    fail(path, std::string("cannot write the header as JSON: ") + e.what());
  }
  // spaces up to a multiple of 8 bytes, so that the data is 8-byte aligned in the file (as the reference writer does)
  text.append((length_bytes - text.size() % length_bytes) % length_bytes, ' ');
  unsigned char length[length_bytes];
  for (std::size_t i = 0; i < length_bytes; ++i) length[i] = static_cast<unsigned char>(text.size() >> (8 * i));

  AtomicFile file(path, "checkpoint " + path + ": ");
  file.write(length, length_bytes, "the header length");
  file.write(text.data(), text.size(), "the header");
  for (const auto& [name, t] : tensors) {
    file.write(t->data(), std::uint64_t{t->size()} * sizeof(T), "tensor " + in_quotes(name));
  }
  file.commit();
}

template <class T>
nlohmann::json load_checkpoint(const std::string& path, const NamedParameters<T>& params,
                               const NamedTensorSlots<T>& extra, const std::vector<std::string>& ignore_prefixes) {
  // the tensors to fill: the parameters, then the extra tensors
  struct Target {
    std::string name;
    Tensor<T>* tensor;
    const char* owner;  // for messages: who expects this shape
  };
  std::vector<Target> targets;
  for (const auto& [name, p] : params) {
    if (p == nullptr) fail(path, "parameter " + in_quotes(name) + " is a null pointer");
    targets.push_back({name, &p->value, "the model expects"});
  }
  for (const auto& [name, t] : extra) {
    if (t == nullptr) fail(path, "extra tensor " + in_quotes(name) + " is a null pointer");
    targets.push_back({name, t, "the tensor to fill has"});
  }

  const Fd fd = open_for_reading(path);
  const Header header = read_header(path, fd);

  // the names matched as Module::load matches them: every tensor asked for is in the file, every tensor in the file is
  // asked for or skipped on purpose
  std::vector<std::string> wanted, in_file;
  for (const Target& target : targets) wanted.push_back(target.name);
  for (const CheckpointTensor& t : header.tensors) in_file.push_back(t.name);
  const NameMatch match = match_names(wanted, in_file);
  if (!match.asked_twice.empty()) fail(path, "tensor " + in_quotes(match.asked_twice) + " is asked for twice");
  if (!match.missing.empty()) fail(path, "tensor " + in_quotes(match.missing.front()) + " is missing from the file");
  for (const std::string& name : match.unexpected) {
    const bool ignored = std::any_of(ignore_prefixes.begin(), ignore_prefixes.end(), [&](const std::string& prefix) {
      return name.compare(0, prefix.size(), prefix) == 0;
    });
    if (!ignored) {
      fail(path, "tensor " + in_quotes(name) +
                     " is in the file but not in the model (load it as an extra tensor, or skip it with "
                     "ignore_prefixes)");
    }
  }
  // with the right dtype and shape
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const CheckpointTensor& source = header.tensors[match.source[k]];
    if (source.dtype != dtype_of<T>()) {
      fail(path, "tensor " + in_quotes(targets[k].name) + " has dtype " + source.dtype + ", the model expects " +
                     dtype_of<T>());
    }
    const std::vector<std::uint64_t> shape = shape_of(*targets[k].tensor);
    if (source.shape != shape) {
      fail(path, "tensor " + in_quotes(targets[k].name) + " has shape " + attend::to_string(source.shape) + ", " +
                     targets[k].owner + " " + attend::to_string(shape));
    }
  }

  // read all data into copies first: an I/O error here still leaves the model untouched
  std::vector<Tensor<T>> staged;
  staged.reserve(targets.size());
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const CheckpointTensor& source = header.tensors[match.source[k]];
    staged.emplace_back(targets[k].tensor->shape(), uninitialized);
    read_at(fd.get(), staged.back().data(), source.end - source.begin, header.data_start + source.begin, path,
            "the data of tensor " + in_quotes(targets[k].name));
  }
  // commit: nothing below can fail
  for (std::size_t k = 0; k < targets.size(); ++k) {
    std::copy(staged[k].data(), staged[k].data() + staged[k].size(), targets[k].tensor->data());
  }
  return header.metadata;
}

template <class T>
std::map<std::string, Tensor<T>> read_tensors(const std::string& path) {
  const Fd fd = open_for_reading(path);
  const Header header = read_header(path, fd);
  std::map<std::string, Tensor<T>> out;
  for (const CheckpointTensor& t : header.tensors) {
    if (t.dtype != dtype_of<T>()) {
      fail(path, "tensor " + in_quotes(t.name) + " has dtype " + t.dtype + ", expected " + dtype_of<T>());
    }
    if (t.shape.size() > max_rank) {
      fail(path, "tensor " + in_quotes(t.name) + " has shape " + attend::to_string(t.shape) + ": attend tensors have " +
                     "rank at most " + std::to_string(max_rank));
    }
    Tensor<T> tensor(Shape(std::vector<std::size_t>(t.shape.begin(), t.shape.end())), uninitialized);
    read_at(fd.get(), tensor.data(), t.end - t.begin, header.data_start + t.begin, path,
            "the data of tensor " + in_quotes(t.name));
    out.emplace(t.name, std::move(tensor));
  }
  return out;
}

nlohmann::json read_checkpoint_metadata(const std::string& path) {
  const Fd fd = open_for_reading(path);
  return read_header(path, fd).metadata;
}

std::vector<CheckpointTensor> list_checkpoint(const std::string& path) {
  const Fd fd = open_for_reading(path);
  return read_header(path, fd).tensors;
}

template void save_checkpoint<float>(const std::string&, const NamedParameters<float>&, const nlohmann::json&,
                                     const NamedTensors<float>&);
template void save_checkpoint<double>(const std::string&, const NamedParameters<double>&, const nlohmann::json&,
                                      const NamedTensors<double>&);
template std::map<std::string, Tensor<float>> read_tensors<float>(const std::string&);
template std::map<std::string, Tensor<double>> read_tensors<double>(const std::string&);
template nlohmann::json load_checkpoint<float>(const std::string&, const NamedParameters<float>&,
                                               const NamedTensorSlots<float>&, const std::vector<std::string>&);
template nlohmann::json load_checkpoint<double>(const std::string&, const NamedParameters<double>&,
                                                const NamedTensorSlots<double>&, const std::vector<std::string>&);

}  // namespace attend::nn
