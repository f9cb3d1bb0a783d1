// `attend data`: what a task's data looks like once read, tokenised and split, and (--write DIR) the splits and
// vocabularies as plain files, so that another program (bench/torch_translate.py) can train on exactly the same data.
//   DIR/train.tsv                    `source tokens<TAB>target tokens`, one training pair per line
//   DIR/validation.tsv, DIR/test.tsv `source tokens<TAB>reference 1[<TAB>reference 2 …]`, one source sentence per line
//   DIR/source.vocab, target.vocab   one token per line, line k (from 0) holding the token of id k
// Tokens are joined by single spaces (a token never holds a space; the character tokenisation writes a space as "▁").
// The digits task (its training images are composed afresh every batch) writes its held-out images instead:
//   DIR/validation-0001.pgm …, DIR/test-0001.pgm …   the composed images (binary PGM, 255 levels)
//   DIR/validation.tsv, DIR/test.tsv                 `FILE.pgm<TAB>caption` ("test-0001.pgm<TAB>3 0 7 1")
//   DIR/target.vocab                                 as above
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "apps/commands.hpp"
#include "autograd/atomic_file.hpp"
#include "data/image.hpp"
#include "data/text.hpp"

namespace attend::app {

namespace {

std::string held_out_file(const std::vector<Example>& examples) {
  std::string text;
  for (const Example& e : examples) {
    text += data::join_tokens(e.source);
    for (const auto& reference : e.references) text += "\t" + data::join_tokens(reference);
    text += "\n";
  }
  return text;
}

std::string vocabulary_file(const data::Vocabulary& vocabulary) {
  std::string text;
  for (const auto& token : vocabulary.tokens()) text += token + "\n";
  return text;
}

// The images of a held-out split as PGM files, and the list of them with their captions.
void write_images(const std::string& folder, const std::string& split, const std::vector<Example>& examples) {
  std::string list;
  for (std::size_t k = 0; k < examples.size(); ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "%s-%04zu.pgm", split.c_str(), k + 1);
    data::write_pgm(folder + name, examples[k].image);
    list += std::string(name) + "\t" + data::join_tokens(examples[k].references.front()) + "\n";
  }
  write_file_atomically(folder + split + ".tsv", list);
}

}  // namespace

int run_data(const DataOptions& options) {
  struct stat status {};
  const bool folder_exists = !options.write.empty() && ::stat(options.write.c_str(), &status) == 0;
  if (folder_exists && !S_ISDIR(status.st_mode)) {
    throw InputError("--write " + options.write + ": exists and is not a folder");
  }
  const TaskData data = make_task_data(options.task);
  const data::Vocabulary source = make_source_vocabulary(options.task, data);
  const data::Vocabulary target = make_target_vocabulary(options.task, data);
  // the folder before the summary: an error is then the only output
  if (!options.write.empty() && !folder_exists && ::mkdir(options.write.c_str(), 0777) != 0) {
    throw InputError("--write " + options.write + ": cannot create the folder (" + std::strerror(errno) + ")");
  }
  if (options.task.is_digits()) {
    std::printf("%s\ncaptions: %zu target tokens (the four specials and the digits 0 to 9)\n", data.summary.c_str(),
                target.size());
  } else {
    std::printf("%s\nvocabularies: %zu source tokens, %zu target tokens\n", data.summary.c_str(), source.size(),
                target.size());
  }
  if (options.write.empty()) return 0;
  const std::string folder = options.write + "/";
  if (options.task.is_digits()) {
    write_images(folder, "validation", data.validation);
    write_images(folder, "test", data.test);
    write_file_atomically(folder + "target.vocab", vocabulary_file(target));
    std::cerr << "attend data: wrote " << data.validation.size() << " validation and " << data.test.size()
              << " test images (validation-NNNN.pgm, test-NNNN.pgm), validation.tsv, test.tsv and target.vocab in "
              << options.write << "\n";
    return 0;
  }
  std::string train;
  for (const auto& p : data.train) train += data::join_tokens(p.source) + "\t" + data::join_tokens(p.target) + "\n";
  write_file_atomically(folder + "train.tsv", train);
  write_file_atomically(folder + "validation.tsv", held_out_file(data.validation));
  write_file_atomically(folder + "test.tsv", held_out_file(data.test));
  write_file_atomically(folder + "source.vocab", vocabulary_file(source));
  write_file_atomically(folder + "target.vocab", vocabulary_file(target));
  std::cerr << "attend data: wrote train.tsv, validation.tsv, test.tsv, source.vocab and target.vocab in "
            << options.write << "\n";
  return 0;
}

}  // namespace attend::app
