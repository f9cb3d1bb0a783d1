#include "data/data_sets.hpp"

#include <zlib.h>

#include <stdexcept>

namespace attend::data {

namespace {

std::vector<DataSet> recorded() {
  const std::string manythings = "https://www.manythings.org/anki/";
  return {
      {"spa-eng",
       "Spanish TAB English, 118,964 pairs: manythings' spa-eng of 2018-05-13, TensorFlow's tutorial file",
       "http://storage.googleapis.com/download.tensorflow.org/data/spa-eng.zip",
       "f80e581ae291aa34dd3aba7bd98b5e9505234da4318e2f3295df70a1520c7f61",
       "spa-eng/spa.txt",
       {{"tatoeba/spa-eng.tsv", 8042772, "afbef7b1707c502b925ba8848887350e8ef328f7a4a719039ce8d05ca6e4b248", {2, 1}}}},
      {"eng-fra",
       "English TAB French, 135,842 pairs: the file of PyTorch's translation tutorial",
       "https://download.pytorch.org/tutorial/data.zip",
       "",
       "data/eng-fra.txt",
       {{"tatoeba/eng-fra.tsv", 9541158, "6b0f3decdb78600485b58efb541f5a2ab69ba888742ac04180e013084e40de7c", {}}}},
      {"hin-eng",
       "Hindi TAB English, 2,979 pairs: manythings' hin-eng of 2023-11-29, with its attribution lines",
       manythings + "hin-eng.zip",
       "209ba249bd17983125f3218245dc76c0331c3608d3b23ec63f89d28037de3af5",
       "hin.txt",
       {{"tatoeba/hin-eng.tsv", 343535, "175b6aba16daccd670dcfee4a6b62e7afe44e8ca323604a70bdf1d8f1856a4cd", {2, 1}},
        {"tatoeba/attribution/hin-eng.attribution.txt",
         238807,
         "4f985fa3f15e5f35f78e91b72798796b960093307150000574233f14cb6ae3b7",
         {3}}}},
      {"eng-jpn",
       "English TAB Japanese, 76,428 pairs: manythings' jpn-eng of 2021-06-21, with its attribution lines",
       manythings + "jpn-eng.zip",
       "7af9adc047ddc64e00fc4264a6d164e98f196ae2cc3d891009c5f9d1b10dc990",
       "jpn.txt",
       {{"tatoeba/eng-jpn.tsv", 6072474, "f78311606c6adc97dc77c656a958b34c6ee357e2760d38bc8b6cbb7ce0aadc2c", {1, 2}},
        {"tatoeba/attribution/eng-jpn.attribution.txt",
         6066595,
         "cc5223c03b931d30b2c8b9bd183dcc286c022d2fb2e591617320d68a95369a50",
         {3}}}},
      {"digits",
       "1,797 handwritten digits, 8x8 pixels: the test set of UCI's Optical Recognition of Handwritten Digits",
       "https://archive.ics.uci.edu/static/public/80/optical+recognition+of+handwritten+digits.zip",
       "",
       "optdigits.tes",
       {{"digits/digits.csv.gz",
         57512,
         "46abec6b12486ad9e51943373abcf22bbea1b5a51a1619b361570d8893f1464a",
         {},
         1675058549}}},
  };
}

// `text` as gzip: zlib at level 6 and memory level 9, the header's time `mtime`, no name, OS 3 (Unix).
std::string gzipped(const std::string& text, std::uint32_t mtime) {
  z_stream stream{};
  if (deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: cannot start compressing");
  gz_header header{};
  header.time = mtime;
  header.os = 3;
  deflateSetHeader(&stream, &header);
  std::string out(deflateBound(&stream, text.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::runtime_error("zlib: compression did not finish");
  return out;
}

// One output file's text: each line's chosen TAB-separated fields (all of it when none are chosen), LF-terminated.
std::string converted_text(const std::vector<std::string>& lines, const std::vector<int>& fields,
                           const std::string& member) {
  std::string text;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (fields.empty()) {
      text += lines[k] + "\n";
      continue;
    }
    std::vector<std::string> cells;
    for (std::size_t at = 0;;) {
      const std::size_t tab = lines[k].find('\t', at);
      cells.push_back(lines[k].substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    for (std::size_t f = 0; f < fields.size(); ++f) {
      if (static_cast<std::size_t>(fields[f]) > cells.size())
        throw std::runtime_error(member + " line " + std::to_string(k + 1) + ": " + std::to_string(cells.size()) +
                                 " fields, expected at least " + std::to_string(fields[f]));
      text += (f == 0 ? "" : "\t") + cells[static_cast<std::size_t>(fields[f] - 1)];
    }
    text += "\n";
  }
  return text;
}

}  // namespace

std::vector<std::string> member_lines(const std::string& bytes) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < bytes.size();) {
    std::size_t end = bytes.find('\n', at);
    if (end == std::string::npos) end = bytes.size();
    std::size_t stop = end;
    if (stop > at && bytes[stop - 1] == '\r') --stop;
    if (stop > at) lines.push_back(bytes.substr(at, stop - at));
    at = end + 1;
  }
  return lines;
}

std::string data_set_file_bytes(const DataSetFile& file, const std::vector<std::string>& lines,
                                const std::string& member) {
  const std::string text = converted_text(lines, file.fields, member);
  return file.gzip_mtime != 0 ? gzipped(text, file.gzip_mtime) : text;
}

const std::vector<DataSet>& data_sets() {
  static const std::vector<DataSet> sets = recorded();
  return sets;
}

const DataSet* find_data_set(const std::string& name) {
  for (const DataSet& set : data_sets()) {
    if (set.name == name) return &set;
  }
  return nullptr;
}

const DataSet* data_set_of_file(const std::string& path) {
  for (const DataSet& set : data_sets()) {
    for (const DataSetFile& file : set.files) {
      if (file.path == path) return &set;
    }
  }
  return nullptr;
}

std::string data_set_names() {
  std::string names;
  for (const DataSet& set : data_sets()) names += (names.empty() ? "" : ", ") + set.name;
  return names;
}

}  // namespace attend::data
