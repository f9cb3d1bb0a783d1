// The real data sets the course and the program read, as recorded in the repository: where each comes from (its
// public address and the archive's SHA-256 where it is known), how `attend data fetch` turns the archive into the files
// the tasks read, and each resulting file's size and SHA-256, so that a fetched copy is byte-identical to the one the
// docs' figures were measured on (the origin and the exact changes of each file: docs/data.md).
//
// A file is named by its path inside a data folder ("tatoeba/spa-eng.tsv"); data/locate.hpp says which folders are
// searched for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attend::data {

// One file `attend data fetch` writes: `path` inside the data folder, made from the archive's member line by line.
struct DataSetFile {
  std::string path;
  std::uint64_t bytes = 0;
  std::string sha256;  // 64 lower-case hex digits
  // The TAB-separated fields (counted from 1) of each member line this file's line holds, joined by TABs; empty: the
  // whole line.
  std::vector<int> fields;
  // 0: written as it is; otherwise gzip with the given modification time in its header (zlib level 6, memory level 9,
  // no file name: how the digits file was made, so that its bytes come out the same).
  std::uint32_t gzip_mtime = 0;
};

struct DataSet {
  std::string name;            // what `attend data fetch NAME` and `--data NAME` take ("spa-eng")
  std::string about;           // one line for the list
  std::string url;             // the archive's canonical public address
  std::string archive_sha256;  // empty: not recorded (the copy this project has was not the archive itself)
  std::string member;          // the archive member the files are made from
  std::vector<DataSetFile> files;
};

// Every recorded data set, in the order `attend data fetch` takes them.
const std::vector<DataSet>& data_sets();
// The data set of that name, or nullptr.
const DataSet* find_data_set(const std::string& name);
// The data set one of whose files has that path inside a data folder ("tatoeba/spa-eng.tsv"), or nullptr.
const DataSet* data_set_of_file(const std::string& path);
// The names of all data sets, joined by ", ".
std::string data_set_names();

// The conversion `attend data fetch` applies to an archive's member: its lines without their line ends (LF or CR LF),
// blank lines dropped …
std::vector<std::string> member_lines(const std::string& bytes);
// … and one file's bytes made from them: the chosen fields of each line, LF-terminated, gzipped as recorded.
// std::runtime_error naming `member` and the line when a line has fewer fields.
std::string data_set_file_bytes(const DataSetFile& file, const std::vector<std::string>& lines,
                                const std::string& member);

}  // namespace attend::data
