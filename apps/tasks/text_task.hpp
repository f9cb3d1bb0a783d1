// What the text tasks (dates, pairs) share: training pairs of tokens, batches of similar source length reshuffled
// every epoch, the encoding of an input, and `attend data --write`'s files.
#pragma once

#include <vector>

#include "apps/task.hpp"
#include "data/pairs.hpp"

namespace attend::app {

struct TextData : TaskData {
  std::vector<data::TokenPair> train;
};

class TextTask : public Task {
 public:
  using Task::Task;
  InputKind input() const override { return InputKind::text; }
  // The source's tokens as ids; InputError for an empty or over-long input, and (unless unknown tokens read as
  // <unk>) for a token the vocabulary does not know.
  std::vector<std::int64_t> encode_source(const data::Vocabulary& vocabulary, const std::string& text) const override;
  std::string training_summary(const TaskData& data, const data::Vocabulary& source,
                               const data::Vocabulary& target) const override;
  std::unique_ptr<Batches> batches(const TaskData& data, const data::Vocabulary& source, const data::Vocabulary& target,
                                   std::size_t batch_size) const override;
  std::string vocabulary_summary(const data::Vocabulary& source, const data::Vocabulary& target) const override;
  // DIR/train.tsv (`source tokens<TAB>target tokens`), DIR/validation.tsv and DIR/test.tsv (`source tokens<TAB>
  // reference 1[<TAB>reference 2 …]`), DIR/source.vocab and DIR/target.vocab (line k: the token of id k).
  std::string write_data(const std::string& folder, const TaskData& data, const data::Vocabulary& source,
                         const data::Vocabulary& target) const override;

 protected:
  std::vector<Example> training_examples(const TaskData& data) const override;
  virtual const char* token_word() const = 0;         // "tokens" or "characters", in messages
  virtual bool unknown_reads_as_unknown() const = 0;  // an unknown source token reads as <unk> (else an error)
};

}  // namespace attend::app
