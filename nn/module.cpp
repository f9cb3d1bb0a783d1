// Module's derived operations, all built on the layer's one `visit` function (module.hpp).
#include "nn/module.hpp"

#include <cmath>
#include <functional>

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

}  // namespace attend::nn
