#include "apps/fetch.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/task.hpp"
#include "data/data_sets.hpp"
#include "data/locate.hpp"

namespace attend::app {

namespace {

// ---- SHA-256 (OpenSSL's EVP interface) -----------------------------------------------------------------------------

class Sha256 {
 public:
  Sha256() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("SHA-256: OpenSSL could not start a digest");
  }
  void add(const void* bytes, std::size_t size) { EVP_DigestUpdate(context_.get(), bytes, size); }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(context_.get(), digest, &size);
    static const char hex[] = "0123456789abcdef";
    std::string text;
    for (unsigned int k = 0; k < size; ++k) text += {hex[digest[k] >> 4], hex[digest[k] & 15]};
    return text;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context_;
};

// ---- files ---------------------------------------------------------------------------------------------------------

std::uint64_t file_size(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode) ? static_cast<std::uint64_t>(status.st_size) : 0;
}

bool exists(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0;
}

// Creates `folder` and its parents; runtime_error naming the one that cannot be made.
void make_folders(const std::string& folder) {
  for (std::size_t at = 1; at != std::string::npos;) {
    at = folder.find('/', at + 1);
    const std::string part = folder.substr(0, at);
    if (::mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
      throw std::runtime_error(part + ": cannot create the folder (" + std::strerror(errno) + ")");
  }
}

std::string with_commas(std::uint64_t n) {
  std::string text = std::to_string(n);
  for (int at = static_cast<int>(text.size()) - 3; at > 0; at -= 3) text.insert(static_cast<std::size_t>(at), ",");
  return text;
}

// ---- the download (libcurl) ----------------------------------------------------------------------------------------

struct Download {
  std::FILE* file = nullptr;
  std::uint64_t kept = 0;  // bytes of the partial file before this request
  bool restarted = false;  // the server sent the whole file instead of the rest: the partial file was emptied
  CURL* curl = nullptr;
};

std::size_t write_body(char* bytes, std::size_t, std::size_t size, void* user) {
  Download& d = *static_cast<Download*>(user);
  long status = 0;
  curl_easy_getinfo(d.curl, CURLINFO_RESPONSE_CODE, &status);
  if (d.kept > 0 && status == 200 && !d.restarted) {  // the server ignored the range: start again
    if (std::fflush(d.file) != 0 || ::ftruncate(::fileno(d.file), 0) != 0) return 0;
    std::rewind(d.file);
    d.restarted = true;
  }
  return std::fwrite(bytes, 1, size, d.file);
}

// Downloads `url` into `part`, appending to what a stopped download left there; runtime_error with the reason (the
// partial file is kept for the next run).
void download(const std::string& url, const std::string& part, double stall_seconds) {
  Download d;
  d.kept = file_size(part);
  d.file = std::fopen(part.c_str(), "ab");
  if (d.file == nullptr) throw std::runtime_error(part + ": cannot write (" + std::strerror(errno) + ")");
  d.curl = curl_easy_init();
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(d.curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(d.curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(d.curl, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(d.curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(d.curl, CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(d.curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(d.curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(stall_seconds));
  curl_easy_setopt(d.curl, CURLOPT_USERAGENT, "attend-data-fetch/0.1");
  curl_easy_setopt(d.curl, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(d.curl, CURLOPT_WRITEDATA, &d);
  if (d.kept > 0) curl_easy_setopt(d.curl, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(d.kept));
  const CURLcode code = curl_easy_perform(d.curl);
  long status = 0;
  curl_easy_getinfo(d.curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(d.curl);
  const bool closed = std::fclose(d.file) == 0;
  // 416: the range starts at the end, so the partial file is already whole (its checksum tells)
  if (code == CURLE_OK || (d.kept > 0 && status == 416)) {
    if (!closed) throw std::runtime_error(part + ": cannot write (" + std::strerror(errno) + ")");
    return;
  }
  throw std::runtime_error(error[0] != '\0' ? error : curl_easy_strerror(code));
}

// ---- the archive (libarchive) and the conversion -------------------------------------------------------------------

// The bytes of the member `name` of the archive at `path`; runtime_error when it cannot be read or has no such member.
std::string read_member(const std::string& path, const std::string& name) {
  std::unique_ptr<archive, int (*)(archive*)> reader(archive_read_new(), archive_read_free);
  archive_read_support_format_all(reader.get());
  archive_read_support_filter_all(reader.get());
  if (archive_read_open_filename(reader.get(), path.c_str(), 1 << 16) != ARCHIVE_OK)
    throw std::runtime_error(path + ": not an archive libarchive reads (" + archive_error_string(reader.get()) + ")");
  archive_entry* entry = nullptr;
  int status = ARCHIVE_OK;
  while ((status = archive_read_next_header(reader.get(), &entry)) == ARCHIVE_OK) {
    if (archive_entry_pathname(entry) != name) continue;
    std::string bytes;
    char buffer[1 << 16];
    la_ssize_t n = 0;
    while ((n = archive_read_data(reader.get(), buffer, sizeof buffer)) > 0)
      bytes.append(buffer, static_cast<std::size_t>(n));
    if (n < 0) throw std::runtime_error(path + ": member " + name + ": " + archive_error_string(reader.get()));
    return bytes;
  }
  if (status != ARCHIVE_EOF)
    throw std::runtime_error(path + ": damaged archive (" + archive_error_string(reader.get()) + ")");
  throw std::runtime_error(path + ": the archive has no member " + name);
}

// ---- one data set --------------------------------------------------------------------------------------------------

// Whether every file of the set is in `dir` with its recorded size and SHA-256.
bool already_there(const data::DataSet& set, const std::string& dir) {
  for (const data::DataSetFile& file : set.files) {
    const std::string path = dir + "/" + file.path;
    if (file_size(path) != file.bytes || file_sha256(path) != file.sha256) return false;
  }
  return true;
}

// Writes the set's files from the archive's member, each to a temporary file beside its place, checked, then renamed;
// nothing is renamed unless every file is right, and no temporary file is left.
void write_files(const data::DataSet& set, const std::string& archive, const std::string& dir) {
  const std::vector<std::string> lines = data::member_lines(read_member(archive, set.member));
  std::vector<std::string> temporaries;
  try {
    for (const data::DataSetFile& file : set.files) {
      const std::string path = dir + "/" + file.path;
      make_folders(path.substr(0, path.rfind('/')));
      const std::string bytes = data::data_set_file_bytes(file, lines, set.member);
      Sha256 hash;
      hash.add(bytes.data(), bytes.size());
      const std::string sha = hash.hex();
      if (bytes.size() != file.bytes || sha != file.sha256)
        throw std::runtime_error(file.path + " made from " + set.member + " is " + with_commas(bytes.size()) +
                                 " bytes with SHA-256 " + sha + ", not the recorded " + with_commas(file.bytes) +
                                 " bytes with " + file.sha256 + ": the archive is not the recorded version");
      temporaries.push_back(path + ".fetching");
      std::ofstream out(temporaries.back(), std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      out.close();
      if (!out) throw std::runtime_error(temporaries.back() + ": cannot write (" + std::strerror(errno) + ")");
    }
    for (std::size_t k = 0; k < set.files.size(); ++k) {
      const std::string path = dir + "/" + set.files[k].path;
      if (std::rename(temporaries[k].c_str(), path.c_str()) != 0)
        throw std::runtime_error(path + ": cannot rename into place (" + std::strerror(errno) + ")");
    }
  } catch (...) {
    for (const std::string& temporary : temporaries) std::remove(temporary.c_str());
    throw;
  }
}

// How to get the archive without this command, for an error's end.
std::string by_hand(const std::string& url, const std::string& archive) {
  return "; download " + url + " by other means and put it at " + archive + ", then run the command again";
}

// Downloads (or takes the hand-placed) archive of `set`, checks it and writes its files; runtime_error with one line.
void fetch_one(const data::DataSet& set, const FetchSource& source, const std::string& dir, double stall_seconds) {
  const std::string downloads = dir + "/downloads";
  const std::string file_name = source.url.substr(source.url.rfind('/') + 1);
  const std::size_t dot = file_name.rfind('.');
  const std::string archive = downloads + "/" + set.name + (dot == std::string::npos ? "" : file_name.substr(dot));
  const std::string part = archive + ".part";
  const std::string what = "attend data fetch " + set.name + ": ";
  const bool placed = exists(archive);
  // a downloaded archive is not kept once used or found wrong (one placed by hand is the user's, and stays)
  const auto discard = [&] {
    if (placed) return;
    std::remove(archive.c_str());
    ::rmdir(downloads.c_str());  // only when empty: other archives, whole or partial, stay
  };
  if (!placed) {
    make_folders(downloads);
    try {
      download(source.url, part, stall_seconds);
    } catch (const std::runtime_error& e) {
      const std::uint64_t kept = file_size(part);
      if (kept == 0) {  // nothing came: no empty file is left behind
        std::remove(part.c_str());
        ::rmdir(downloads.c_str());
      }
      throw std::runtime_error(
          what + source.url + ": " + e.what() +
          (kept > 0 ? " (" + with_commas(kept) + " bytes kept in " + part + ": the next run resumes from there)" : "") +
          by_hand(source.url, archive));
    }
    if (std::rename(part.c_str(), archive.c_str()) != 0)
      throw std::runtime_error(what + archive + ": cannot rename into place (" + std::strerror(errno) + ")");
  }
  const std::string sha = file_sha256(archive);
  const std::uint64_t size = file_size(archive);
  if (!source.sha256.empty() && sha != source.sha256) {
    discard();
    throw std::runtime_error(what + (placed ? archive : source.url) + ": SHA-256 " + sha + ", expected " +
                             source.sha256 + " (" + with_commas(size) + " bytes: a changed, damaged or cut file)" +
                             by_hand(source.url, archive));
  }
  try {
    write_files(set, archive, dir);
  } catch (const std::runtime_error& e) {
    discard();
    throw std::runtime_error(what + e.what() + by_hand(source.url, archive));
  }
  discard();
  std::printf("%s: %s in %s (from %s)\n", set.name.c_str(), placed ? "made from the archive placed by hand" : "fetched",
              dir.c_str(), placed ? archive.c_str() : source.url.c_str());
}

}  // namespace

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  Sha256 hash;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) hash.add(buffer, static_cast<std::size_t>(in.gcount()));
  return hash.hex();
}

std::map<std::string, FetchSource> read_fetch_sources(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("--sources " + path + ": cannot open (" + std::strerror(errno) + ")");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("--sources " + path + ": not JSON (" + e.what() + ")");
  }
  if (!json.is_object()) throw InputError("--sources " + path + ": expected an object of data sets by name");
  std::map<std::string, FetchSource> sources;
  for (const auto& item : json.items()) {
    if (data::find_data_set(item.key()) == nullptr)
      throw InputError("--sources " + path + ": no data set \"" + item.key() + "\" (" + data::data_set_names() + ")");
    const nlohmann::json& entry = item.value();
    if (!entry.is_object() || !entry.contains("url") || !entry["url"].is_string() ||
        (entry.contains("sha256") && !entry["sha256"].is_string()))
      throw InputError("--sources " + path + ": \"" + item.key() +
                       "\" must be {\"url\": \"...\"} with an optional \"sha256\": \"...\"");
    sources[item.key()] = {entry["url"].get<std::string>(), entry.value("sha256", std::string())};
  }
  return sources;
}

int run_fetch(const FetchOptions& options) {
  std::vector<const data::DataSet*> sets;
  for (const std::string& name : options.names) {
    const data::DataSet* set = data::find_data_set(name);
    if (set == nullptr) throw InputError("data fetch: no data set \"" + name + "\" (" + data::data_set_names() + ")");
    sets.push_back(set);
  }
  if (options.names.empty())
    for (const data::DataSet& set : data::data_sets()) sets.push_back(&set);
  const std::map<std::string, FetchSource> sources =
      options.sources.empty() ? std::map<std::string, FetchSource>{} : read_fetch_sources(options.sources);
  const std::string dir = options.dir.empty() ? data::user_data_folder() : options.dir;
  struct Curl {
    Curl() { curl_global_init(CURL_GLOBAL_DEFAULT); }
    ~Curl() { curl_global_cleanup(); }
  } curl;
  for (const data::DataSet* set : sets) {
    if (already_there(*set, dir)) {
      std::printf("%s: already in %s\n", set->name.c_str(), dir.c_str());
      continue;
    }
    const auto given = sources.find(set->name);
    fetch_one(*set, given != sources.end() ? given->second : FetchSource{set->url, set->archive_sha256}, dir,
              options.stall_seconds);
  }
  return 0;
}

}  // namespace attend::app
