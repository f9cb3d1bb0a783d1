// The chapter's CountingScore (tutorials/11-attention-costs.cpp), as the checks of exercises 11.1 and 11.2 count the
// scores a model asks for: it hands every call to the decoder's score function and adds up the e_ij it returns. And
// the decoder's score slot, where it goes in place of the model's score.
#pragma once

#include <memory>
#include <utility>

#include "models/seq2seq.hpp"

namespace attend::exercise {

class CountingScore : public models::Score<float> {
 public:
  std::size_t evaluations = 0;
  explicit CountingScore(std::unique_ptr<models::Score<float>> inner) : inner_(std::move(inner)) {}
  using models::Score<float>::score;
  models::Keys<float> keys(const Variable<float>& annotations) override { return inner_->keys(annotations); }
  Variable<float> score(const Variable<float>& query, const models::Keys<float>& keys) override {
    Variable<float> e = inner_->score(query, keys);
    evaluations += e.shape()[0] * e.shape()[1];
    return e;
  }
  models::ScoreKind kind() const override { return inner_->kind(); }
  void visit(nn::ModuleVisitor<float>& v) override { inner_->visit(v); }

 private:
  std::unique_ptr<models::Score<float>> inner_;
};

// The decoder's score slot, or nullptr (vanilla).
template <class T>
std::unique_ptr<models::Score<T>>* score_slot(models::Seq2seq<T>& model) {
  if (auto* bahdanau = dynamic_cast<models::BahdanauDecoder<T>*>(model.decoder.get())) return &bahdanau->score;
  if (auto* luong = dynamic_cast<models::LuongDecoder<T>*>(model.decoder.get())) return &luong->score;
  return nullptr;
}

}  // namespace attend::exercise
