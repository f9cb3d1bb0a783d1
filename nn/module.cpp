// Module's derived operations, all built on the layer's one `visit` function (module.hpp).
#include "nn/module.hpp"

#include <cmath>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace attend::nn {

namespace {

// Calls on_parameter(full name, p) for every parameter below `m`, depth first, and on_module(m) for every module.
template <class T>
class Walker : public ModuleVisitor<T> {
 public:
  Walker(std::string prefix, std::function<void(const std::string&, Parameter<T>&)> on_parameter,
         std::function<void(Module<T>&)> on_module,
         std::function<void(const std::string&, Rng&)> on_generator = nullptr)
      : prefix_(std::move(prefix)),
        on_parameter_(std::move(on_parameter)),
        on_module_(std::move(on_module)),
        on_generator_(std::move(on_generator)) {}

  void parameter(const std::string& name, Parameter<T>& p) override {
    if (on_parameter_) on_parameter_(prefix_ + name, p);
  }
  void module(const std::string& name, Module<T>& child) override {
    if (on_module_) on_module_(child);
    Walker inner(prefix_ + name + ".", on_parameter_, on_module_, on_generator_);
    child.visit(inner);
  }
  void generator(const std::string& name, Rng& rng) override {
    if (on_generator_) on_generator_(prefix_ + name, rng);
  }

 private:
  std::string prefix_;
  std::function<void(const std::string&, Parameter<T>&)> on_parameter_;
  std::function<void(Module<T>&)> on_module_;
  std::function<void(const std::string&, Rng&)> on_generator_;
};

}  // namespace

template <class T>
NamedParameters<T> Module<T>::parameters() {
  NamedParameters<T> out;
  Walker<T> walker(
      "", [&](const std::string& name, Parameter<T>& p) { out.emplace_back(name, &p); }, nullptr);
  visit(walker);
  return out;
}

template <class T>
NamedGenerators Module<T>::generators() {
  NamedGenerators out;
  Walker<T> walker("", nullptr, nullptr, [&](const std::string& name, Rng& rng) { out.emplace_back(name, &rng); });
  visit(walker);
  return out;
}

template <class T>
std::size_t Module<T>::parameter_count() {
  std::size_t count = 0;
  for (const auto& [name, p] : parameters()) count += p->value.size();
  return count;
}

template <class T>
NamedTensors<T> Module<T>::named_tensors() {
  NamedTensors<T> out;
  for (const auto& [name, p] : parameters()) out.emplace_back(name, &p->value);
  return out;
}

NameMatch match_names(const std::vector<std::string>& wanted, const std::vector<std::string>& available) {
  NameMatch match;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < available.size(); ++k) {
    if (!index.emplace(available[k], k).second && match.given_twice.empty()) match.given_twice = available[k];
  }
  std::unordered_set<std::string> seen;
  for (const std::string& name : wanted) {
    if (!seen.insert(name).second && match.asked_twice.empty()) match.asked_twice = name;
    const auto found = index.find(name);
    match.source.push_back(found == index.end() ? NameMatch::none : found->second);
    if (found == index.end()) match.missing.push_back(name);
  }
  for (const std::string& name : available) {
    if (seen.count(name) == 0) match.unexpected.push_back(name);
  }
  return match;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

template <class T>
LoadReport Module<T>::load(const NamedTensors<T>& tensors, bool strict) {
  const NamedParameters<T> params = parameters();
  std::vector<std::string> wanted, available;
  for (const auto& [name, p] : params) wanted.push_back(name);
  for (const auto& [name, t] : tensors) {
    if (t == nullptr) throw std::invalid_argument("Module::load: tensor \"" + name + "\" is a null pointer");
    available.push_back(name);
  }
  const NameMatch match = match_names(wanted, available);
  if (!match.asked_twice.empty()) {
    throw std::invalid_argument("Module::load: two parameters are named \"" + match.asked_twice + "\"");
  }
  if (!match.given_twice.empty()) {
    throw std::invalid_argument("Module::load: tensor \"" + match.given_twice + "\" is given twice");
  }
  if (strict && (!match.missing.empty() || !match.unexpected.empty())) {
    std::string message = "Module::load (strict):";
    if (!match.missing.empty()) message += " no tensor for parameter(s) " + joined(match.missing) + ";";
    if (!match.unexpected.empty()) message += " no parameter named " + joined(match.unexpected) + ";";
    throw std::invalid_argument(message + " nothing was changed");
  }
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (match.source[k] == NameMatch::none) continue;
    const Shape& given = tensors[match.source[k]].second->shape();
    if (given != params[k].second->value.shape()) {
      throw std::invalid_argument("Module::load: tensor \"" + params[k].first + "\" has shape " + to_string(given) +
                                  ", the parameter has " + to_string(params[k].second->value.shape()) +
                                  "; nothing was changed");
    }
  }
  // copy first, then commit: a tensor given may be another parameter's value (two modules sharing storage, or names
  // swapped on purpose), which must be read before it is overwritten
  std::vector<Tensor<T>> staged;
  staged.reserve(params.size());
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (match.source[k] != NameMatch::none) staged.push_back(*tensors[match.source[k]].second);
  }
  std::size_t next = 0;
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (match.source[k] == NameMatch::none) continue;
    params[k].second->assign(std::move(staged[next++]));
  }
  return {match.missing, match.unexpected};
}

template <class T>
LoadReport Module<T>::load(const std::map<std::string, Tensor<T>>& tensors, bool strict) {
  NamedTensors<T> named;
  for (const auto& [name, t] : tensors) named.emplace_back(name, &t);
  return load(named, strict);
}

template <class T>
std::map<std::string, Tensor<T>> renamed(std::map<std::string, Tensor<T>> tensors,
                                         const std::vector<std::pair<std::string, std::string>>& from_to) {
  std::map<std::string, Tensor<T>> out;
  for (const auto& [from, to] : from_to) {
    auto found = tensors.find(from);
    if (found == tensors.end()) {
      std::string have;
      for (const auto& [name, t] : tensors) have += (have.empty() ? "" : ", ") + name;
      throw std::invalid_argument("renamed: no tensor named \"" + from + "\" to rename to \"" + to +
                                  "\" (left: " + (have.empty() ? "none" : have) + ")");
    }
    if (!out.emplace(to, std::move(found->second)).second) {
      throw std::invalid_argument("renamed: two tensors renamed to \"" + to + "\"");
    }
    tensors.erase(found);
  }
  for (auto& [name, t] : tensors) {
    if (!out.emplace(name, std::move(t)).second) {
      throw std::invalid_argument("renamed: \"" + name + "\" is both a new name and a name kept unchanged");
    }
  }
  return out;
}

template <class T>
void Module<T>::zero_grad() {
  for (const auto& [name, p] : parameters()) p->zero_grad();
}

template <class T>
void Module<T>::train(bool training) {
  training_ = training;
  Walker<T> walker("", nullptr, [training](Module<T>& m) { m.training_ = training; });
  visit(walker);
}

double xavier_bound(std::size_t fan_in, std::size_t fan_out) {
  return std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
}

GradcheckResult gradcheck_module(Module<double>& module, const GradcheckFn& f,
                                 const std::vector<Tensor<double>>& inputs, const GradcheckOptions& options) {
  const NamedParameters<double> named = module.parameters();
  std::vector<NamedParameter> params(named.begin(), named.end());
  return gradcheck(f, inputs, options, params);
}

template class Module<float>;
template class Module<double>;
template std::map<std::string, Tensor<float>> renamed<float>(std::map<std::string, Tensor<float>>,
                                                             const std::vector<std::pair<std::string, std::string>>&);
template std::map<std::string, Tensor<double>> renamed<double>(std::map<std::string, Tensor<double>>,
                                                               const std::vector<std::pair<std::string, std::string>>&);

}  // namespace attend::nn
