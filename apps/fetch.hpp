// `attend data fetch`: downloads the recorded data sets (data/data_sets.hpp) from their public addresses with libcurl,
// checks each archive's SHA-256, reads the member the files are made from with libarchive, converts it as recorded
// and writes each file only once its size and SHA-256 are those recorded (a temporary file renamed into place: never
// a half-written file). A download that stops is resumed from where it stopped by the next run (an HTTP range
// request); an archive put in DIR/downloads/ by hand is used as it is.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attend::app {

struct FetchOptions {
  std::vector<std::string> names;  // empty: every data set
  std::string dir;                 // empty: the user's data folder (data/locate.hpp)
  std::string sources;             // a JSON file of other addresses (and their archives' SHA-256), by name
  double stall_seconds = 60;       // a download that receives nothing for this long stops
};

// Another address of a data set's archive (a mirror, or a copy made by hand), from --sources: the archive's SHA-256 is
// then the one given there (empty: not checked); the files made from it are still checked against the recorded ones.
struct FetchSource {
  std::string url;
  std::string sha256;
};
// The --sources file: {"NAME": {"url": "...", "sha256": "..."}, ...}; InputError naming the file and the problem.
std::map<std::string, FetchSource> read_fetch_sources(const std::string& path);

// The SHA-256 of a file's bytes (64 lower-case hexadecimal figures); std::runtime_error if it cannot be read.
std::string file_sha256(const std::string& path);

int run_fetch(const FetchOptions& options);

}  // namespace attend::app
