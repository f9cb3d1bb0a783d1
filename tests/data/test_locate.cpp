// Where data files are found (data/locate.hpp): --data-dir, then ATTEND_DATA, then ../shared/data beside the source
// tree, then the user's data folder; a file not found is named with every folder searched and the fetch command; a
// data set's name given to --data stands for its first file; an archive's member is converted into a recorded file
// (data/data_sets.hpp).
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "data/data_sets.hpp"
#include "data/digits.hpp"
#include "data/locate.hpp"
#include "tests/needs_data.hpp"

using namespace attend::data;

namespace {

// A scratch folder with four data folders in it, and the environment the rule reads set to two of them (restored).
struct Folders {
  std::string root, flag, variable, home, xdg;
  std::optional<std::string> saved_data, saved_home, saved_xdg;
  Folders() {
    char pattern[] = "/tmp/attend-locate-XXXXXX";
    root = ::mkdtemp(pattern);
    flag = root + "/flag";
    variable = root + "/variable";
    home = root + "/home";
    xdg = root + "/xdg";
    saved_data = get("ATTEND_DATA");
    saved_home = get("HOME");
    saved_xdg = get("XDG_DATA_HOME");
    ::setenv("ATTEND_DATA", variable.c_str(), 1);
    ::setenv("HOME", home.c_str(), 1);
    ::unsetenv("XDG_DATA_HOME");
  }
  ~Folders() {
    restore("ATTEND_DATA", saved_data);
    restore("HOME", saved_home);
    restore("XDG_DATA_HOME", saved_xdg);
    std::filesystem::remove_all(root);
  }
  static std::optional<std::string> get(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  }
  static void restore(const char* name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  static void put(const std::string& folder, const std::string& relative) {
    std::filesystem::create_directories(std::filesystem::path(folder + "/" + relative).parent_path());
    std::ofstream(folder + "/" + relative) << "x\n";
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(locate)

BOOST_AUTO_TEST_CASE(the_folders_are_searched_in_the_documented_order) {
  Folders f;
  const std::vector<DataFolder> folders = data_folders(f.flag);
  BOOST_TEST_REQUIRE(folders.size() == 4u);
  BOOST_TEST(folders[0].path == f.flag);
  BOOST_TEST(folders[0].origin == "--data-dir");
  BOOST_TEST(folders[1].path == f.variable);
  BOOST_TEST(folders[1].origin == "ATTEND_DATA");
  BOOST_TEST(folders[2].origin == "beside the source tree");
  BOOST_TEST(folders[2].path.find("/shared/data") != std::string::npos, folders[2].path);
  BOOST_TEST(folders[3].path == f.home + "/.local/share/attend");
  // XDG_DATA_HOME, when absolute, moves the user's folder; a relative one is ignored, as the XDG spec says
  ::setenv("XDG_DATA_HOME", f.xdg.c_str(), 1);
  BOOST_TEST(user_data_folder() == f.xdg + "/attend");
  ::setenv("XDG_DATA_HOME", "relative", 1);
  BOOST_TEST(user_data_folder() == f.home + "/.local/share/attend");
  // without --data-dir and ATTEND_DATA, two folders are left
  ::unsetenv("ATTEND_DATA");
  BOOST_TEST(data_folders().size() == 2u);
}

BOOST_AUTO_TEST_CASE(the_first_folder_holding_the_file_wins) {
  Folders f;
  const std::string file = "tatoeba/xx-yy.tsv";  // in no real data folder
  const std::string user = f.home + "/.local/share/attend";
  Folders::put(user, file);
  BOOST_TEST(find_data_file(file, f.flag) == user + "/" + file);
  Folders::put(f.variable, file);
  BOOST_TEST(find_data_file(file, f.flag) == f.variable + "/" + file);
  Folders::put(f.flag, file);
  BOOST_TEST(find_data_file(file, f.flag) == f.flag + "/" + file);
  BOOST_TEST(find_data_file(file) == f.variable + "/" + file);  // no --data-dir
}

BOOST_AUTO_TEST_CASE(a_missing_file_names_itself_every_folder_and_the_fetch_command) {
  Folders f;
  BOOST_TEST(!locate_data_file("tatoeba/xx-yy.tsv", f.flag));
  try {
    find_data_file("tatoeba/attribution/xx-yy.attribution.txt", f.flag);
    BOOST_FAIL("no DataNotFound");
  } catch (const DataNotFound& e) {
    const std::string message = e.what();
    for (const std::string& part :
         {std::string("tatoeba/attribution/xx-yy.attribution.txt not found in "), f.flag + " (--data-dir)",
          f.variable + " (ATTEND_DATA)", std::string("(beside the source tree)"),
          f.home + "/.local/share/attend (the user's data folder)", std::string("no data set of `attend data fetch`")})
      BOOST_TEST(message.find(part) != std::string::npos, message << " lacks " << part);
  }
  // a recorded data set's file: the command that downloads it
  const std::string message = data_not_found_message("tatoeba/attribution/hin-eng.attribution.txt", f.flag);
  BOOST_TEST(message.find("`attend data fetch hin-eng` downloads it") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(a_data_sets_name_stands_for_its_first_file_and_a_path_for_itself) {
  Folders f;
  Folders::put(f.flag, "tatoeba/spa-eng.tsv");
  Folders::put(f.flag, "digits/digits.csv.gz");
  BOOST_TEST(data_argument_path("spa-eng", f.flag) == f.flag + "/tatoeba/spa-eng.tsv");
  BOOST_TEST(data_argument_path("digits", f.flag) == f.flag + "/digits/digits.csv.gz");
  BOOST_TEST(data_argument_path("some/file.tsv", f.flag) == "some/file.tsv");  // not a name: as given
  try {  // a bare word that is neither: a mistyped name
    data_argument_path("spa-en", f.flag);
    BOOST_FAIL("no DataNotFound");
  } catch (const DataNotFound& e) {
    BOOST_TEST(std::string(e.what()) ==
               "spa-en: no such file, and no data set of that name (spa-eng, eng-fra, hin-eng, eng-jpn, digits)");
  }
  BOOST_TEST(find_data_set("hin-eng")->files.size() == 2u);
  BOOST_TEST(data_set_of_file("tatoeba/eng-jpn.tsv")->name == "eng-jpn");
  BOOST_TEST(!data_set_of_file("tatoeba/eng-deu.tsv"));
  BOOST_TEST(data_set_names() == "spa-eng, eng-fra, hin-eng, eng-jpn, digits");
}

BOOST_AUTO_TEST_SUITE_END()

// The conversion of an archive's member into a recorded file (data/data_sets.hpp).
BOOST_AUTO_TEST_SUITE(data_sets)

BOOST_AUTO_TEST_CASE(member_lines_drop_line_ends_and_blank_lines) {
  BOOST_TEST(member_lines("a\tb\r\n\r\nc\n\nd") == std::vector<std::string>({"a\tb", "c", "d"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fields_are_chosen_and_reordered_and_a_short_line_is_named) {
  DataSetFile swap{"x.tsv", 0, "", {2, 1}};
  BOOST_TEST(data_set_file_bytes(swap, {"one\tuno\tcredit", "two\tdos\tcredit"}, "m.txt") == "uno\tone\ndos\ttwo\n");
  DataSetFile third{"y.txt", 0, "", {3}};
  BOOST_TEST(data_set_file_bytes(third, {"one\tuno\tcredit 1"}, "m.txt") == "credit 1\n");
  DataSetFile whole{"z.csv", 0, "", {}};
  BOOST_TEST(data_set_file_bytes(whole, {"1,2,3"}, "m.txt") == "1,2,3\n");
  try {
    data_set_file_bytes(third, {"one\tuno\tc", "two\tdos"}, "m.txt");
    BOOST_FAIL("no error");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(std::string(e.what()) == "m.txt line 2: 2 fields, expected at least 3");
  }
}

// The digits file's gzip comes out byte for byte as recorded from the UCI test set's lines (CR LF and the blank last
// line of some copies included): the compression settings are the ones the recorded file was made with.
BOOST_AUTO_TEST_CASE(the_digits_file_is_remade_byte_for_byte, *attend::test::needs_data({"digits/digits.csv.gz"})) {
  const std::string path = attend::test::data_file("digits/digits.csv.gz");
  std::ifstream in(path, std::ios::binary);
  const std::string recorded((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const DigitImages digits = load_digits(path);
  std::string member;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    for (const int v : digits.pixels[k]) member += std::to_string(v) + ",";
    member += std::to_string(digits.labels[k]) + "\r\n";
  }
  member += "\r\n";
  const DataSetFile& file = find_data_set("digits")->files.front();
  const std::string made = data_set_file_bytes(file, member_lines(member), "optdigits.tes");
  BOOST_TEST(made.size() == file.bytes);
  BOOST_TEST((made == recorded));
}

BOOST_AUTO_TEST_SUITE_END()
