// The bad-input table of docs/reliability.md, one test per row: every row is a command that must fail with one line on
// standard error naming the problem, the exit status of its row (2: usage or input, 1: anything else), nothing on
// standard output and no file written or changed. The table in the docs is the test's data, so the two cannot drift
// apart: a row added to the docs is a test, and a row whose message changes fails.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <map>
#include <ostream>

#include "data/digits.hpp"
#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"
#include "tests/cli/cli_helpers.hpp"
#include "tests/needs_data.hpp"

using namespace cli_test;

namespace {

struct Row {
  std::string name;     // the "case" column
  std::string command;  // a shell command; $F the fixtures, $OUT an empty folder
  int status = 0;
  std::vector<std::string> parts;  // what the line must name
};

std::ostream& operator<<(std::ostream& out, const Row& row) { return out << row.name << ": " << row.command; }

// The rows of the table after the marker "<!-- bad-input table" in docs/reliability.md.
std::vector<Row> table_rows() {
  std::vector<Row> rows;
  for (const std::vector<std::string>& cells : table_after("reliability.md", "<!-- bad-input table")) {
    if (cells.size() != 4u)  // a row that fails: no command exits -1
      rows.push_back({cells[0] + ": " + std::to_string(cells.size()) + " cells, not 4", "", -1, {}});
    else
      rows.push_back({cells[0], cells[1].substr(1, cells[1].size() - 2), std::stoi(cells[2]), quoted_parts(cells[3])});
  }
  return rows;
}

// Writes `text` to `path`.
void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The fixtures made from the course's real data, each with the data file it is made from: where that file is not
// found, the fixture is not made and the rows that name it are skipped (tests/needs_data.hpp).
const std::map<std::string, std::string>& data_fixtures() {
  static const std::map<std::string, std::string> made_from = {
      {"spa-eng.tsv", "tatoeba/spa-eng.tsv"},         {"pairs.safetensors", "tatoeba/spa-eng.tsv"},
      {"changed.tsv", "tatoeba/spa-eng.tsv"},         {"digits.csv.gz", "digits/digits.csv.gz"},
      {"digits.safetensors", "digits/digits.csv.gz"}, {"digits-changed.csv", "digits/digits.csv.gz"}};
  return made_from;
}

// The data files a row's fixtures are made from.
std::vector<std::string> data_of(const Row& row) {
  std::vector<std::string> files;
  for (const auto& [fixture, file] : data_fixtures()) {
    if (row.command.find("$F/" + fixture) != std::string::npos &&
        std::find(files.begin(), files.end(), file) == files.end())
      files.push_back(file);
  }
  return files;
}

// The fixtures made from sentence pairs: the first 300 of tatoeba/spa-eng.tsv, a model of them, and one pair more.
void make_pairs_fixtures(const std::string& f) {
  {
    std::ifstream in(attend::test::data_file("tatoeba/spa-eng.tsv"));
    std::ofstream out(f + "/spa-eng.tsv");
    std::string line;
    for (int k = 0; k < 300 && std::getline(in, line); ++k) out << line << "\n";
  }
  BOOST_TEST_REQUIRE(run_attend("train --task pairs --data " + f +
                                "/spa-eng.tsv --valid-size 10 --test-size 10 "
                                "--min-count 1 --epochs 1 --hidden 8 --embed 4 --out " +
                                f + "/pairs.safetensors")
                         .status == 0);
  write(f + "/changed.tsv", read_file(f + "/spa-eng.tsv") + "Hola.\tHello.\n");
}

// The fixtures of the digits task: the data file, a model of it, and the same digits plus one line.
void make_digits_fixtures(const std::string& f) {
  write(f + "/digits.csv.gz", read_file(attend::test::data_file("digits/digits.csv.gz")));
  BOOST_TEST_REQUIRE(run_attend("train --task digits --data " + f +
                                "/digits.csv.gz --train-size 32 --valid-size 4 "
                                "--test-size 4 --epochs 1 --hidden 8 --embed 4 --annotation-size 8 --patch-hidden 0 "
                                "--batch 16 --out " +
                                f + "/digits.safetensors")
                         .status == 0);
  const attend::data::DigitImages digits = attend::data::load_digits(f + "/digits.csv.gz");
  std::string text;
  for (std::size_t k = 0; k <= digits.size(); ++k) {  // the first digit twice
    for (const int v : digits.pixels[k % digits.size()]) text += std::to_string(v) + ",";
    text += std::to_string(digits.labels[k % digits.size()]) + "\n";
  }
  write(f + "/digits-changed.csv", text);
}

// The fixtures the rows refer to, made once: small models of each kind and files that are wrong in one way each.
const std::string& fixtures() {
  static Scratch scratch;
  static bool made = false;
  if (made) return scratch.dir;
  const std::string f = scratch.dir;
  const std::string tiny =
      "--train-size 128 --valid-size 16 --test-size 16 --epochs 1 --hidden 8 --embed 4 --batch 32 ";
  BOOST_TEST_REQUIRE(run_attend("train --task dates " + tiny + "--out " + f + "/dates.safetensors").status == 0);
  BOOST_TEST_REQUIRE(run_attend("train --decoder vanilla " + tiny + "--out " + f + "/vanilla.safetensors").status == 0);
  BOOST_TEST_REQUIRE(run_attend("train --arch transformer --train-size 128 --valid-size 16 --test-size 16 --epochs 1 "
                                "--d-model 16 --heads 2 --ff 32 --batch 32 --out " +
                                f + "/transformer.safetensors")
                         .status == 0);
  if (attend::test::missing_data({"tatoeba/spa-eng.tsv"}).empty()) make_pairs_fixtures(f);
  const std::string model = read_file(f + "/dates.safetensors");
  write(f + "/half.safetensors", model.substr(0, model.size() / 2));
  write(f + "/junk.safetensors", "this is not a checkpoint at all");
  attend::Rng rng(1);
  attend::nn::Linear<float> layer(2, 3, rng);
  attend::nn::save_checkpoint<float>(f + "/linear.safetensors", layer.parameters(), {{"note", "a layer"}});
  write(f + "/empty.tsv", "");
  write(f + "/no-tab.tsv", "Hola.\tHello.\nAdiós. Goodbye.\nGracias.\tThanks.\n");
  write(f + "/latin1.tsv", "Hola.\tHello.\nSí.\tYes.\nAdi\xf3s.\tGoodbye.\n");
  // the digits task: the data file, a model of it, the same digits plus one line, and images wrong in one way each
  if (attend::test::missing_data({"digits/digits.csv.gz"}).empty()) make_digits_fixtures(f);
  std::string blank_digit;  // 64 pixels 0 and the label 0
  for (int k = 0; k < 65; ++k) blank_digit += k ? ",0" : "0";
  write(f + "/garbled.csv", blank_digit + "\n0,1,2\n");  // line 2: three fields
  write(f + "/bad-header.pgm", "P5\n64 x\n255\n");
  write(f + "/small.pgm", "P5\n8 8\n255\n" + std::string(64, '\0'));
  write(f + "/truncated.pgm", "P5\n64 12\n255\n" + std::string(40, '\0'));
  write(f + "/blank.pgm", "P5\n64 12\n255\n" + std::string(12 * 64, '\0'));
  write(f + "/picture-2.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n");  // a user's picture: not replaced
  made = true;
  return scratch.dir;
}

// Every file below `dir` with its size and modification time.
std::map<std::string, std::string> listing(const std::string& dir) {
  std::map<std::string, std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      struct stat info {};
      stat((dir + "/" + name).c_str(), &info);
      files[name] = std::to_string(info.st_size) + " " + std::to_string(info.st_mtim.tv_sec) + "." +
                    std::to_string(info.st_mtim.tv_nsec);
    }
    closedir(d);
  }
  return files;
}

std::string replace_all(std::string text, const std::string& what, const std::string& with) {
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
  return text;
}

// One row: its command run in a shell with $F the fixtures and $OUT an empty folder.
void check_row(const Row& row) {
  const std::string f = fixtures();
  const auto before = listing(f);
  Scratch out;
  Scratch io;
  const std::string program = ATTEND_EXE;
  const std::string folder = program.substr(0, program.find_last_of('/'));
  write(io.path("row.sh"),
        "F='" + f + "'\nOUT='" + out.dir + "'\nPATH='" + folder + "':\"$PATH\"\n" + row.command + "\n");
  const std::string command = "OPENBLAS_NUM_THREADS=1 sh '" + io.path("row.sh") + "' < /dev/null > '" + io.path("out") +
                              "' 2> '" + io.path("err") + "'";
  const int raw = std::system(command.c_str());
  const int status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  const std::string err = read_file(io.path("err"));
  BOOST_TEST(status == row.status, "exit status " << status << "; standard error: " << err);
  BOOST_TEST(lines_of(err).size() == 1u, "standard error: " << err);
  BOOST_TEST(err.rfind("attend: error: ", 0) == 0u, "standard error: " << err);
  for (const std::string& part : row.parts) {
    const std::string expected = replace_all(replace_all(part, "$F", f), "$OUT", out.dir);
    BOOST_TEST(err.find(expected) != std::string::npos, "\"" << expected << "\" not in: " << err);
  }
  BOOST_TEST(read_file(io.path("out")).empty(), "standard output: " << read_file(io.path("out")));
  BOOST_TEST(listing(out.dir).empty(), "a file was written in $OUT");
  BOOST_TEST((listing(f) == before), "a fixture was written");
}

// Each row a test case of the suite bad_input/row, named _0, _1, … in the table's order; a row whose fixtures are made
// from data that is not found is skipped, its reason naming the file.
struct RowRegistrar {
  RowRegistrar() {
    const std::vector<Row> rows = table_rows();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row row = rows[k];
      boost::unit_test::test_case* test = boost::unit_test::make_test_case(
          [row] {
            BOOST_TEST_CHECKPOINT(row);
            check_row(row);
          },
          "_" + std::to_string(k), __FILE__, __LINE__);
      const std::vector<std::string> needed = data_of(row);
      if (!needed.empty()) test->add_precondition(attend::test::DataPrecondition{needed});
      boost::unit_test::framework::current_auto_test_suite().add(test);
    }
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(the_table_is_there) {
  BOOST_TEST(table_rows().size() >= 80u,
             "docs/reliability.md's bad-input table has " << table_rows().size() << " rows");
}

BOOST_AUTO_TEST_SUITE(row)
const RowRegistrar registrar;
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()
