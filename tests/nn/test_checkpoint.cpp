// Checkpoint tests (nn/checkpoint.hpp): bit-exact round trips in float and double, metadata and extra tensors, the
// byte layout Python's safetensors and NumPy expect, every kind of corrupted file (each error names the file and the
// tensor, and the model is left byte-for-byte unchanged), and saves that fail midway (the old file survives and no
// temporary file is left behind), including a really read-only folder when the tests run as root.
// Reference: docs/reference/checkpoints.md.
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>

#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"
#include "tests/autograd/helpers.hpp"

namespace fs = std::filesystem;
using namespace attend;
using attend::testing::float_types;

namespace {

using Bytes = std::vector<unsigned char>;

// A small model with nested names: embed.W (5,3), encoder.W (out,3), encoder.b (out,).
template <class T>
struct Net : nn::Module<T> {
  nn::Embedding<T> embed;
  nn::Linear<T> encoder;

  Net(Rng& rng, std::size_t out) : embed(5, 3, rng), encoder(3, out, rng) {}
  void visit(nn::ModuleVisitor<T>& v) override {
    v.module("embed", embed);
    v.module("encoder", encoder);
  }
};

template <class T>
Net<T> make_net(std::uint64_t seed, std::size_t out = 4) {
  Rng rng(seed);
  return Net<T>(rng, out);
}

// A fresh folder under the system's temporary folder, removed with its contents at the end of the test.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "attend-checkpoint-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The names in a folder, sorted: a failed save must leave no temporary file behind.
std::vector<std::string> entries(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
Bytes bytes_of(const Tensor<T>& t) {
  const auto* begin = reinterpret_cast<const unsigned char*>(t.data());
  return Bytes(begin, begin + t.size() * sizeof(T));
}

// Every parameter's value as bytes, in order: compared before and after a load that must fail.
template <class T>
std::vector<Bytes> snapshot(const nn::NamedParameters<T>& params) {
  std::vector<Bytes> out;
  for (const auto& [name, p] : params) out.push_back(bytes_of(p->value));
  return out;
}

std::uint64_t read_u64_le(const unsigned char* p) {
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t{p[i]} << (8 * i);
  return n;
}

// A safetensors file taken apart: the header as JSON (order kept) and the data bytes after it.
struct RawFile {
  nlohmann::ordered_json header;
  Bytes data;
};

RawFile read_raw(const std::string& path) {
  const Bytes bytes = read_file(path);
  const std::uint64_t header_size = read_u64_le(bytes.data());
  RawFile raw;
  raw.header = nlohmann::ordered_json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(header_size));
  raw.data.assign(bytes.begin() + 8 + static_cast<long>(header_size), bytes.end());
  return raw;
}

// Writes any header text (not padded, not checked) and data as a safetensors file.
void write_raw(const std::string& path, const std::string& header_text, const Bytes& data) {
  Bytes bytes(8);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(header_text.size() >> (8 * i));
  bytes.insert(bytes.end(), header_text.begin(), header_text.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  write_file(path, bytes);
}

// Rewrites the file at `path` after `change` edited its header or data.
void edit(const std::string& path, const std::function<void(RawFile&)>& change) {
  RawFile raw = read_raw(path);
  change(raw);
  write_raw(path, raw.header.dump(), raw.data);
}

// The message of the std::runtime_error that `f` throws ("" when it throws none), for checks made afterwards.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// The message is not empty and contains every one of `parts`.
void check_message(const std::string& what, const std::vector<std::string>& parts) {
  BOOST_TEST(!what.empty(), "no std::runtime_error was thrown");
  for (const auto& part : parts) {
    BOOST_TEST(what.find(part) != std::string::npos, "message \"" << what << "\" does not contain \"" << part << "\"");
  }
}

// Loading `path` into `net` (and `extra`) throws a std::runtime_error naming the file and every one of `parts`, and
// leaves every parameter and extra tensor byte-for-byte as it was.
template <class T>
void check_load_fails(const std::string& path, Net<T>& net, std::vector<std::string> parts,
                      const nn::NamedTensorSlots<T>& extra = {}) {
  const nn::NamedParameters<T> params = net.parameters();
  const std::vector<Bytes> before = snapshot(params);
  std::vector<Bytes> extra_before;
  for (const auto& [name, t] : extra) extra_before.push_back(bytes_of(*t));

  parts.push_back("checkpoint " + path + ": ");
  check_message(error_of([&] { nn::load_checkpoint(path, params, extra); }), parts);

  BOOST_TEST((snapshot(params) == before), "a failed load changed the model");
  for (std::size_t i = 0; i < extra.size(); ++i) {
    BOOST_TEST((bytes_of(*extra[i].second) == extra_before[i]), "a failed load changed " << extra[i].first);
  }
}

// Makes `folder` refuse new entries and renames. chmod 0555 is enough for an ordinary user; root ignores permissions,
// so then the immutable attribute (what `chattr +i` sets, through FS_IOC_SETFLAGS; needs CAP_LINUX_IMMUTABLE and a
// file system that has it, e.g. ext4, xfs, btrfs) is tried too. A probe file shows whether it worked: how() is empty
// when neither did. The destructor undoes both.
class ReadOnlyFolder {
 public:
  explicit ReadOnlyFolder(const fs::path& folder) : folder_(folder) {
    ::chmod(folder_.c_str(), 0555);
    if (!can_create_in(folder_)) {
      how_ = "chmod 0555";
      return;
    }
    immutable_ = set_immutable(true);
    if (immutable_ && !can_create_in(folder_)) how_ = "the immutable attribute (chattr +i)";
  }
  ~ReadOnlyFolder() {
    if (immutable_) set_immutable(false);
    ::chmod(folder_.c_str(), 0755);
  }
  ReadOnlyFolder(const ReadOnlyFolder&) = delete;
  ReadOnlyFolder& operator=(const ReadOnlyFolder&) = delete;

  const std::string& how() const { return how_; }

 private:
  static bool can_create_in(const fs::path& folder) {
    const std::string probe = (folder / "probe").string();
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return false;
    ::close(fd);
    ::unlink(probe.c_str());
    return true;
  }
  bool set_immutable(bool on) {
    const int fd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return false;
    int flags = 0;
    bool done = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    if (done) {
      flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
      done = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    }
    ::close(fd);
    return done;
  }

  fs::path folder_;
  bool immutable_ = false;
  std::string how_;
};

// Within this scope no file of the process may grow past `bytes` (RLIMIT_FSIZE, which binds root too): a write past
// it fails with EFBIG instead of raising SIGXFSZ, which is ignored meanwhile. Nothing may be logged inside the scope.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_limit_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_limit_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_limit_);
    ::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_limit_{};
  void (*old_handler_)(int) = nullptr;
};

// The precondition of the read-only folder test: it is reported as skipped where no read-only folder can be made.
boost::test_tools::assertion_result read_only_folder_possible(boost::unit_test::test_unit_id) {
  TempFolder folder;
  const ReadOnlyFolder read_only(folder.path());
  boost::test_tools::assertion_result result(!read_only.how().empty());
  result.message() << "cannot make a read-only folder here: running as root, and the file system refuses the "
                      "immutable attribute or CAP_LINUX_IMMUTABLE is missing";
  return result;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoint)

// ---------------------------------------------------------------------------------------------------------------------
// round trips

BOOST_AUTO_TEST_CASE_TEMPLATE(round_trip_is_bit_exact, T, float_types) {
  TempFolder folder;
  const std::string path = folder / "model.safetensors";
  Net<T> saved = make_net<T>(1);
  // values whose bits a text format or a conversion would change: NaN with a payload, -0, infinities, subnormals
  T nan_with_payload;
  const std::uint64_t payload_bits = sizeof(T) == 4 ? 0x7fc01234u : 0x7ff8000000001234u;
  std::memcpy(&nan_with_payload, &payload_bits, sizeof(T));
  const T special[] = {nan_with_payload,
                       T(-0.0),
                       std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity(),
                       std::numeric_limits<T>::denorm_min(),
                       std::numeric_limits<T>::max(),
                       std::numeric_limits<T>::lowest(),
                       T(0.1)};
  std::copy(std::begin(special), std::end(special), saved.embed.W.value.data());

  nn::save_checkpoint(path, saved.parameters(), {{"step", 7}});
  Net<T> loaded = make_net<T>(2);
  BOOST_TEST((snapshot(loaded.parameters()) != snapshot(saved.parameters())));
  const nlohmann::json metadata = nn::load_checkpoint(path, loaded.parameters());

  BOOST_TEST((snapshot(loaded.parameters()) == snapshot(saved.parameters())));
  BOOST_TEST(metadata == (nlohmann::json{{"step", 7}}));
  BOOST_TEST((entries(folder.path()) == std::vector<std::string>{"model.safetensors"}));
}

BOOST_AUTO_TEST_CASE(metadata_round_trip) {
  TempFolder folder;
  const std::string path = folder / "model.safetensors";
  Net<float> net = make_net<float>(1);
  // what a model's checkpoint carries: its configuration, its vocabulary, where training stands
  const nlohmann::json metadata = {
      {"model", {{"cell", "gru"}, {"hidden_size", 8}, {"layers", 2}, {"bidirectional", true}, {"dropout", 0.1}}},
      {"source_vocab", {"<pad>", "<unk>", "chat", "été", "日本語", "say \"hi\"\n"}},
      {"step", 1234567890123LL},
      {"best_loss", 1e-300},
      {"note", nullptr}};
  nn::save_checkpoint(path, net.parameters(), metadata);

  BOOST_TEST(nn::read_checkpoint_metadata(path) == metadata);
  BOOST_TEST(nn::load_checkpoint(path, net.parameters()) == metadata);
  // the safetensors view of it: a map of strings to strings, the JSON text under "attend"
  const RawFile raw = read_raw(path);
  BOOST_TEST(raw.header["__metadata__"]["format"] == "attend");
  BOOST_TEST(nlohmann::json::parse(raw.header["__metadata__"]["attend"].get<std::string>()) == metadata);

  // metadata that is not an object round-trips too
  for (const nlohmann::json& other : {nlohmann::json(nullptr), nlohmann::json("just text"), nlohmann::json::array()}) {
    nn::save_checkpoint(path, net.parameters(), other);
    BOOST_TEST(nn::read_checkpoint_metadata(path) == other);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(extra_tensors_round_trip, T, float_types) {
  TempFolder folder;
  const std::string path = folder / "train.safetensors";
  Net<T> saved = make_net<T>(1);
  // an optimizer's state: a step count (a scalar), a moment per parameter, and an empty tensor
  Rng rng(3);
  const Tensor<T> step = Tensor<T>::scalar(T(42));
  const Tensor<T> m = rng.uniform_tensor<T>({5, 3}, -1, 1);
  const Tensor<T> empty{Shape{0}};
  nn::save_checkpoint(path, saved.parameters(), nlohmann::json::object(),
                      {{"optimizer.step", &step}, {"optimizer.embed.W.m", &m}, {"optimizer.empty", &empty}});

  // listed in the order written, with safetensors' dtype names and byte ranges
  const std::vector<nn::CheckpointTensor> listed = nn::list_checkpoint(path);
  const std::string dtype = sizeof(T) == 4 ? "F32" : "F64";
  const std::vector<std::string> names = {"embed.W",        "encoder.W",           "encoder.b",
                                          "optimizer.step", "optimizer.embed.W.m", "optimizer.empty"};
  const std::vector<std::vector<std::uint64_t>> shapes = {{5, 3}, {4, 3}, {4}, {}, {5, 3}, {0}};
  BOOST_TEST_REQUIRE(listed.size() == names.size());
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    BOOST_TEST_CONTEXT("tensor " << names[i]) {
      BOOST_TEST(listed[i].name == names[i]);
      BOOST_TEST(listed[i].dtype == dtype);
      BOOST_TEST((listed[i].shape == shapes[i]));
      BOOST_TEST(listed[i].begin == offset);
      offset = listed[i].end;
    }
  }

  Net<T> loaded = make_net<T>(2);
  Tensor<T> step_in = Tensor<T>::scalar(T(0));
  Tensor<T> m_in{Shape{5, 3}};
  Tensor<T> empty_in{Shape{0}};
  nn::load_checkpoint(path, loaded.parameters(),
                      {{"optimizer.step", &step_in}, {"optimizer.embed.W.m", &m_in}, {"optimizer.empty", &empty_in}});
  BOOST_TEST((snapshot(loaded.parameters()) == snapshot(saved.parameters())));
  BOOST_TEST(step_in.item() == T(42));
  BOOST_TEST((bytes_of(m_in) == bytes_of(m)));
}

BOOST_AUTO_TEST_CASE(ignore_prefixes_loads_a_training_checkpoint_for_inference) {
  TempFolder folder;
  const std::string path = folder / "train.safetensors";
  Net<float> saved = make_net<float>(1);
  const Tensor<float> m{Shape{5, 3}, 0.5f};
  nn::save_checkpoint(path, saved.parameters(), {{"step", 10}}, {{"optimizer.embed.W.m", &m}});

  // not asked for and not skipped: refused, and the model is unchanged
  Net<float> loaded = make_net<float>(2);
  check_load_fails(path, loaded, {"tensor 'optimizer.embed.W.m' is in the file but not in the model"});
  // skipped by its prefix
  BOOST_TEST(nn::load_checkpoint(path, loaded.parameters(), {}, {"optimizer."}) == (nlohmann::json{{"step", 10}}));
  BOOST_TEST((snapshot(loaded.parameters()) == snapshot(saved.parameters())));
}

// ---------------------------------------------------------------------------------------------------------------------
// the file is valid safetensors

BOOST_AUTO_TEST_CASE(file_layout_is_valid_safetensors) {
  // Checks the bytes the way a reader in any language would, without attend's reader: 8-byte little-endian N, an N-byte
  // JSON object padded with spaces to a multiple of 8, string-to-string __metadata__, tensors packed from 0 to the end.
  TempFolder folder;
  const std::string path = folder / "model.safetensors";
  Net<float> net = make_net<float>(1);
  nn::save_checkpoint(path, net.parameters(), {{"vocab", {"a", "b"}}});
  const Bytes bytes = read_file(path);

  BOOST_TEST_REQUIRE(bytes.size() >= 8u);
  const std::uint64_t header_size = read_u64_le(bytes.data());
  BOOST_TEST(header_size % 8 == 0u);
  BOOST_TEST_REQUIRE(8 + header_size <= bytes.size());
  const std::string text(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(header_size));
  BOOST_TEST(text.front() == '{');
  const std::size_t close = text.find_last_of('}');
  BOOST_TEST(text.find_first_not_of(' ', close + 1) == std::string::npos, "only spaces may follow the JSON");
  BOOST_TEST(close + 1 + 8 > text.size(), "at most 7 bytes of padding");
  const nlohmann::ordered_json header = nlohmann::ordered_json::parse(text);
  BOOST_TEST_REQUIRE(header.is_object());

  // __metadata__ first, all values strings
  BOOST_TEST(header.begin().key() == "__metadata__");
  for (const auto& [key, value] : header["__metadata__"].items()) BOOST_TEST(value.is_string(), key);

  // each tensor: F32, its shape, and the bytes at its offsets are its values; packed in order from 0 to the end
  const std::uint64_t data_start = 8 + header_size;
  BOOST_TEST(data_start % 8 == 0u);
  std::uint64_t offset = 0;
  std::size_t count = 0;
  for (const auto& [name, p] : net.parameters()) {
    BOOST_TEST_CONTEXT("tensor " << name) {
      BOOST_TEST_REQUIRE(header.contains(name));
      const auto& entry = header[name];
      BOOST_TEST(entry["dtype"] == "F32");
      const std::vector<std::uint64_t> shape(p->value.shape().begin(), p->value.shape().end());
      BOOST_TEST((entry["shape"].get<std::vector<std::uint64_t>>() == shape));
      const auto begin = entry["data_offsets"][0].get<std::uint64_t>();
      const auto end = entry["data_offsets"][1].get<std::uint64_t>();
      BOOST_TEST(begin == offset);
      BOOST_TEST(end - begin == p->value.size() * sizeof(float));
      const Bytes stored(bytes.begin() + static_cast<long>(data_start + begin),
                         bytes.begin() + static_cast<long>(data_start + end));
      BOOST_TEST((stored == bytes_of(p->value)));
      offset = end;
      ++count;
    }
  }
  BOOST_TEST(header.size() == count + 1, "one entry per parameter plus __metadata__");
  BOOST_TEST(data_start + offset == bytes.size());
}

BOOST_AUTO_TEST_CASE(reads_a_file_written_elsewhere) {
  // As PyTorch's safetensors might write it: tensors in another order, no padding, metadata without "attend".
  TempFolder folder;
  const std::string path = folder / "torch.safetensors";
  Net<float> source = make_net<float>(1);
  Bytes data = bytes_of(source.encoder.b.value);
  for (const Bytes& part : {bytes_of(source.encoder.W.value), bytes_of(source.embed.W.value)}) {
    data.insert(data.end(), part.begin(), part.end());
  }
  write_raw(path,
            R"({"encoder.b":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
            R"("__metadata__":{"format":"pt"},)"
            R"("encoder.W":{"dtype":"F32","shape":[4,3],"data_offsets":[16,64]},)"
            R"("embed.W":{"dtype":"F32","shape":[5,3],"data_offsets":[64,124]}})",
            data);
  Net<float> loaded = make_net<float>(2);
  BOOST_TEST(nn::load_checkpoint(path, loaded.parameters()) == nlohmann::json::object());
  BOOST_TEST((snapshot(loaded.parameters()) == snapshot(source.parameters())));
  BOOST_TEST(nn::list_checkpoint(path).front().name == "encoder.b", "listed in data order");
}

// ---------------------------------------------------------------------------------------------------------------------
// corrupted and mismatched files: each refused with an error naming the file and the tensor, the model unchanged

namespace {

// The damaged copies of the file a Net<float>(out 4) saves: embed.W (5,3) at [0, 60), encoder.W (4,3) at [60, 108),
// encoder.b (4,) at [108, 124). Each case damages a copy of it.
struct Corruption {
  std::string name;
  std::function<void(const std::string& path)> damage;
  std::vector<std::string> parts;  // what the message must say besides the file
};
std::function<void(const std::string&)> header_edit(std::function<void(nlohmann::ordered_json&)> change) {
  return [change](const std::string& path) { edit(path, [&](RawFile& raw) { change(raw.header); }); };
}

// Damage to the file's framing: its length, its header's length, its header not a JSON object.
std::vector<Corruption> framing_corruptions() {
  return {
      {"empty file",
       [](const std::string& path) { write_file(path, {}); },
       {"the file is 0 bytes long, shorter than the 8-byte header length"}},
      {"5 bytes",
       [](const std::string& path) {
         write_file(path, {1, 2, 3, 4, 5});
       },
       {"the file is 5 bytes long"}},
      {"header length past the end",
       [](const std::string& path) {
         Bytes bytes = read_file(path);
         bytes[0] = static_cast<unsigned char>(bytes.size());
         bytes[1] = static_cast<unsigned char>(bytes.size() >> 8);
         write_file(path, bytes);
       },
       {"the header length", "runs past the end of the file"}},
      {"header length 2^64 - 1",
       [](const std::string& path) {
         Bytes bytes = read_file(path);
         std::fill(bytes.begin(), bytes.begin() + 8, 0xff);
         write_file(path, bytes);
       },
       {"the header length 18446744073709551615 runs past the end of the file"}},
      {"header not JSON",
       [](const std::string& path) {
         Bytes bytes = read_file(path);
         std::fill(bytes.begin() + 8, bytes.begin() + 20, '@');
         write_file(path, bytes);
       },
       {"the header is not valid JSON"}},
      {"header is a JSON array",
       [](const std::string& path) { write_raw(path, "[1, 2]", read_raw(path).data); },
       {"the header is not a JSON object"}},
      {"header starts with a space",
       [](const std::string& path) { write_raw(path, " {}", read_raw(path).data); },
       {"the header is not a JSON object"}},
  };
}

// Damage to one tensor's header entry.
std::vector<Corruption> entry_corruptions() {
  return {
      {"entry not an object",
       header_edit([](auto& h) { h["encoder.W"] = 3; }),
       {"tensor 'encoder.W': its header entry is not a JSON object"}},
      {"no dtype",
       header_edit([](auto& h) { h["encoder.W"].erase("dtype"); }),
       {"tensor 'encoder.W' has no \"dtype\""}},
      {"unknown dtype",
       header_edit([](auto& h) { h["encoder.W"]["dtype"] = "Q4"; }),
       {"tensor 'encoder.W' has unknown dtype 'Q4'"}},
      {"negative dimension",
       header_edit([](auto& h) {
         h["encoder.W"]["shape"] = {-4, 3};
       }),
       {"tensor 'encoder.W' has no \"shape\" list of non-negative integers"}},
      {"fractional dimension",
       header_edit([](auto& h) {
         h["encoder.W"]["shape"] = {4.0, 3};
       }),
       {"tensor 'encoder.W' has no \"shape\""}},
      {"shape not a list",
       header_edit([](auto& h) { h["encoder.W"]["shape"] = "4x3"; }),
       {"tensor 'encoder.W' has no \"shape\""}},
      {"data_offsets not a pair",
       header_edit([](auto& h) { h["encoder.W"]["data_offsets"] = {60}; }),
       {"tensor 'encoder.W' has no \"data_offsets\" pair"}},
      {"data_offsets reversed",
       header_edit([](auto& h) {
         h["encoder.W"]["data_offsets"] = {108, 60};
       }),
       {"tensor 'encoder.W' has data_offsets [108, 60]: begin is past end"}},
      {"data_offsets disagree with dtype and shape",
       header_edit([](auto& h) {
         h["encoder.W"]["shape"] = {4, 2};
       }),
       {"tensor 'encoder.W' has data_offsets [60, 108] (48 bytes), but dtype F32 and shape (4,2) need 32 bytes"}},
      {"shape too large to address",
       header_edit([](auto& h) {
         h["encoder.W"]["shape"] = {1ULL << 62, 4};
       }),
       {"tensor 'encoder.W' has shape (4611686018427387904,4), too large"}},
      {"data_offsets past the end",
       header_edit([](auto& h) {
         h["encoder.b"]["shape"] = {5};
         h["encoder.b"]["data_offsets"] = {108, 128};
       }),
       {"tensor 'encoder.b' has data_offsets [108, 128], past the end of the data (124 bytes)"}},
      {"overlapping tensors",
       header_edit([](auto& h) {
         h["encoder.W"]["data_offsets"] = {56, 104};
       }),
       {"tensors 'embed.W' and 'encoder.W' overlap"}},
  };
}

// Damage to the data, and files that do not match the model or whose metadata is wrong.
std::vector<Corruption> data_corruptions() {
  return {
      {"gap before a tensor",
       [](const std::string& path) {
         edit(path, [](RawFile& raw) {
           raw.header["encoder.b"]["data_offsets"] = {112, 128};
           raw.data.insert(raw.data.begin() + 108, 4, 0);
         });
       },
       {"tensor 'encoder.b' starts at byte 112 of the data, leaving 4 unused bytes before it"}},
      {"bytes after the data",
       [](const std::string& path) { edit(path, [](RawFile& raw) { raw.data.resize(132); }); },
       {"the file has 8 bytes after the last tensor's data"}},
      {"truncated data",
       [](const std::string& path) { fs::resize_file(path, fs::file_size(path) - 4); },
       {"tensor 'encoder.b' has data_offsets [108, 124], past the end of the data (120 bytes): the file is truncated"}},
      {"truncated inside the header",
       [](const std::string& path) { fs::resize_file(path, 40); },
       {"runs past the end of the file (40 bytes)"}},
      {"shape mismatch",
       header_edit([](auto& h) {
         h["encoder.W"]["shape"] = {3, 4};
       }),
       {"tensor 'encoder.W' has shape (3,4), the model expects (4,3)"}},
      {"missing tensor",
       [](const std::string& path) {
         edit(path, [](RawFile& raw) {
           raw.header.erase("encoder.b");
           raw.data.resize(108);
         });
       },
       {"tensor 'encoder.b' is missing from the file"}},
      {"unexpected tensor",
       [](const std::string& path) {
         edit(path, [](RawFile& raw) {
           raw.header["head.W"] = {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {124, 132}}};
           raw.data.resize(132);
         });
       },
       {"tensor 'head.W' is in the file but not in the model"}},
      {"__metadata__ not a map of strings",
       header_edit([](auto& h) { h["__metadata__"]["step"] = 3; }),
       {"the header's __metadata__ must map names to strings, but 'step' holds 3"}},
      {"metadata not JSON",
       header_edit([](auto& h) { h["__metadata__"]["attend"] = "{\"step\": "; }),
       {"__metadata__[\"attend\"] is not valid JSON"}},
  };
}

}  // namespace

BOOST_AUTO_TEST_CASE(corrupted_files_are_refused_and_leave_the_model_unchanged) {
  std::vector<Corruption> cases = framing_corruptions();
  for (auto more : {entry_corruptions(), data_corruptions()}) cases.insert(cases.end(), more.begin(), more.end());

  TempFolder folder;
  Net<float> saved = make_net<float>(1);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    BOOST_TEST_CONTEXT("case " << cases[i].name) {
      const std::string path = folder / ("case" + std::to_string(i) + ".safetensors");
      nn::save_checkpoint(path, saved.parameters(), {{"step", 1}});
      cases[i].damage(path);
      Net<float> net = make_net<float>(2);
      check_load_fails(path, net, cases[i].parts);
    }
  }
}

// A fuzz finding (tests/fuzz, target checkpoint): nlohmann reports a number past the range of a double as out_of_range,
// which is not a parse error, so it escaped the reader without the file's name and not as a std::runtime_error.
BOOST_AUTO_TEST_CASE(numbers_too_large_for_a_double_are_refused) {
  TempFolder folder;
  Net<float> saved = make_net<float>(1);
  const std::string in_header = folder / "header.safetensors";
  nn::save_checkpoint(in_header, saved.parameters(), {{"step", 1}});
  write_raw(in_header, "{\"step\": 1e400}", read_raw(in_header).data);
  const std::string in_metadata = folder / "metadata.safetensors";
  nn::save_checkpoint(in_metadata, saved.parameters(), {{"step", 1}});
  edit(in_metadata, [](RawFile& raw) { raw.header["__metadata__"]["attend"] = "{\"step\": 1e400}"; });

  for (const auto& file : {std::pair{in_header, "the header holds a number too large for a double"},
                           std::pair{in_metadata, "__metadata__[\"attend\"] holds a number too large"}}) {
    const std::string& path = file.first;
    const std::string part = file.second;
    BOOST_TEST_CONTEXT("file " << path) {
      Net<float> net = make_net<float>(2);
      check_load_fails(path, net, {part});
      check_message(error_of([&] { nn::read_checkpoint_metadata(path); }), {path, part});
    }
  }
}

BOOST_AUTO_TEST_CASE(dtype_mismatch_is_refused) {
  TempFolder folder;
  const std::string doubles = folder / "f64.safetensors";
  const std::string floats = folder / "f32.safetensors";
  Net<double> saved_double = make_net<double>(1);
  Net<float> saved_float = make_net<float>(1);
  nn::save_checkpoint(doubles, saved_double.parameters(), nullptr);
  nn::save_checkpoint(floats, saved_float.parameters(), nullptr);

  Net<float> into_float = make_net<float>(2);
  check_load_fails(doubles, into_float, {"tensor 'embed.W' has dtype F64, the model expects F32"});
  Net<double> into_double = make_net<double>(2);
  check_load_fails(floats, into_double, {"tensor 'embed.W' has dtype F32, the model expects F64"});
}

BOOST_AUTO_TEST_CASE(model_of_another_configuration_is_refused) {
  TempFolder folder;
  const std::string path = folder / "model.safetensors";
  Net<float> saved = make_net<float>(1, 4);
  nn::save_checkpoint(path, saved.parameters(), nullptr);
  Net<float> smaller = make_net<float>(2, 3);
  check_load_fails(path, smaller, {"tensor 'encoder.W' has shape (4,3), the model expects (3,3)"});
  // an extra tensor of the wrong shape is refused the same way
  Net<float> same = make_net<float>(2, 4);
  const Tensor<float> m{Shape{5, 3}, 1.0f};
  nn::save_checkpoint(path, saved.parameters(), nullptr, {{"optimizer.m", &m}});
  Tensor<float> m_in{Shape{3, 5}, 2.0f};
  check_load_fails(path, same, {"tensor 'optimizer.m' has shape (5,3), the tensor to fill has (3,5)"},
                   {{"optimizer.m", &m_in}});
  // and so is an extra tensor asked for but not in the file
  Tensor<float> m_right{Shape{5, 3}, 2.0f};
  Tensor<float> v_in{Shape{5, 3}, 2.0f};
  check_load_fails(path, same, {"tensor 'optimizer.v' is missing from the file"},
                   {{"optimizer.m", &m_right}, {"optimizer.v", &v_in}});
}

BOOST_AUTO_TEST_CASE(missing_or_unreadable_file_is_refused) {
  TempFolder folder;
  Net<float> net = make_net<float>(2);
  check_load_fails(folder / "nothing.safetensors", net, {"cannot open the file: No such file or directory"});
  fs::create_directory(folder / "a_folder");
  check_load_fails(folder / "a_folder", net, {"not a regular file"});
  const std::string missing = folder / "nothing.safetensors";
  check_message(error_of([&] { nn::read_checkpoint_metadata(missing); }), {"checkpoint " + missing, "cannot open"});
  check_message(error_of([&] { nn::list_checkpoint(missing); }), {"checkpoint " + missing, "cannot open"});
}

BOOST_AUTO_TEST_CASE(bad_names_are_refused_before_anything_is_written) {
  TempFolder folder;
  const std::string path = folder / "model.safetensors";
  Net<float> net = make_net<float>(1);
  const Tensor<float> t{Shape{2}, 1.0f};
  check_message(error_of([&] {
                  nn::save_checkpoint(path, net.parameters(), nullptr, {{"embed.W", &t}});
                }),
                {"checkpoint " + path, "two tensors are named 'embed.W'"});
  check_message(error_of([&] {
                  nn::save_checkpoint(path, net.parameters(), nullptr, {{"__metadata__", &t}});
                }),
                {"checkpoint " + path, "cannot be named '__metadata__'"});
  check_message(error_of([&] { nn::save_checkpoint(path, net.parameters(), std::string("\xff\xfe")); }),
                {"checkpoint " + path, "cannot write the header as JSON"});
  BOOST_TEST(entries(folder.path()).empty());
  // loading: the same name asked for twice
  nn::save_checkpoint(path, net.parameters(), nullptr);
  Tensor<float> slot{Shape{5, 3}};
  check_load_fails(path, net, {"tensor 'embed.W' is asked for twice"}, {{"embed.W", &slot}});
}

// ---------------------------------------------------------------------------------------------------------------------
// atomic saves

BOOST_AUTO_TEST_CASE(save_replaces_the_old_file) {
  TempFolder folder;
  const std::string path = folder / "model.safetensors";
  Net<float> first = make_net<float>(1);
  Net<float> second = make_net<float>(2);
  nn::save_checkpoint(path, first.parameters(), {{"step", 1}});
  nn::save_checkpoint(path, second.parameters(), {{"step", 2}});
  Net<float> loaded = make_net<float>(3);
  BOOST_TEST(nn::load_checkpoint(path, loaded.parameters()) == (nlohmann::json{{"step", 2}}));
  BOOST_TEST((snapshot(loaded.parameters()) == snapshot(second.parameters())));
  BOOST_TEST((entries(folder.path()) == std::vector<std::string>{"model.safetensors"}));
  // the permissions of any new file (0666 less the umask), not those of a private temporary file (0600)
  const mode_t mask = ::umask(0);
  ::umask(mask);
  BOOST_TEST(((fs::status(path).permissions() & fs::perms::all) == static_cast<fs::perms>(0666 & ~mask)));
}

BOOST_AUTO_TEST_CASE(save_fails_when_the_temporary_file_cannot_be_created) {
  // A folder path that goes through a regular file (ENOTDIR) or does not exist (ENOENT): no temporary file can be
  // made, whoever runs the test.
  TempFolder folder;
  Net<float> net = make_net<float>(1);
  const std::string blocker = folder / "blocker";
  write_file(blocker, {'o', 'l', 'd'});
  const std::string through_file = blocker + "/model.safetensors";
  check_message(error_of([&] { nn::save_checkpoint(through_file, net.parameters(), nullptr); }),
                {"checkpoint " + through_file + ": cannot create the temporary file", "Not a directory"});
  const std::string no_folder = folder / "no/such/folder/model.safetensors";
  check_message(error_of([&] { nn::save_checkpoint(no_folder, net.parameters(), nullptr); }),
                {"checkpoint " + no_folder + ": cannot create the temporary file", "No such file or directory"});
  BOOST_TEST((read_file(blocker) == Bytes{'o', 'l', 'd'}));
  BOOST_TEST((entries(folder.path()) == std::vector<std::string>{"blocker"}));
}

BOOST_AUTO_TEST_CASE(save_fails_when_the_rename_fails) {
  // The target is an existing folder: everything is written, then rename() refuses (EISDIR); the temporary file goes.
  TempFolder folder;
  Net<float> net = make_net<float>(1);
  const std::string path = folder / "model.safetensors";
  fs::create_directory(path);
  write_file(path + "/inside", {'x'});
  check_message(error_of([&] { nn::save_checkpoint(path, net.parameters(), nullptr); }),
                {"checkpoint " + path + ": cannot rename", "Is a directory"});
  BOOST_TEST((entries(folder.path()) == std::vector<std::string>{"model.safetensors"}));
  BOOST_TEST(fs::is_directory(path));
  BOOST_TEST((entries(path) == std::vector<std::string>{"inside"}));
}

BOOST_AUTO_TEST_CASE(save_fails_midway_and_the_old_file_survives) {
  // A write error in the middle of the data (the file size limit, which binds root too, stands in for a full disk).
  TempFolder folder;
  const std::string path = folder / "model.safetensors";
  Net<float> old_net = make_net<float>(1);
  nn::save_checkpoint(path, old_net.parameters(), {{"step", 1}});
  const Bytes old_bytes = read_file(path);

  Net<float> new_net = make_net<float>(2);
  std::string what;
  {
    const FileSizeLimit limit(old_bytes.size() - 40);  // the header fits, the data does not
    what = error_of([&] { nn::save_checkpoint(path, new_net.parameters(), {{"step", 2}}); });
  }
  check_message(what, {"checkpoint " + path + ": cannot write tensor '", "File too large"});
  BOOST_TEST((read_file(path) == old_bytes));
  BOOST_TEST((entries(folder.path()) == std::vector<std::string>{"model.safetensors"}));
  Net<float> loaded = make_net<float>(3);
  BOOST_TEST(nn::load_checkpoint(path, loaded.parameters()) == (nlohmann::json{{"step", 1}}));
}

BOOST_AUTO_TEST_CASE(save_into_a_read_only_folder_fails_and_the_old_file_survives,
                     *boost::unit_test::precondition(read_only_folder_possible)) {
  TempFolder folder;
  const fs::path locked = folder.path() / "locked";
  fs::create_directory(locked);
  const std::string path = (locked / "model.safetensors").string();
  Net<float> old_net = make_net<float>(1);
  nn::save_checkpoint(path, old_net.parameters(), {{"step", 1}});
  const Bytes old_bytes = read_file(path);

  Net<float> new_net = make_net<float>(2);
  std::string what;
  std::string how;
  {
    const ReadOnlyFolder read_only(locked);
    how = read_only.how();
    if (!how.empty()) what = error_of([&] { nn::save_checkpoint(path, new_net.parameters(), {{"step", 2}}); });
  }
  BOOST_TEST_REQUIRE(!how.empty(), "the folder could not be made read-only this time");
  BOOST_TEST_MESSAGE("read-only folder made with " << how);
  check_message(what, {"checkpoint " + path + ": cannot create the temporary file"});
  BOOST_TEST((read_file(path) == old_bytes));
  BOOST_TEST((entries(locked) == std::vector<std::string>{"model.safetensors"}));
  Net<float> loaded = make_net<float>(3);
  BOOST_TEST(nn::load_checkpoint(path, loaded.parameters()) == (nlohmann::json{{"step", 1}}));
}

BOOST_AUTO_TEST_SUITE_END()
