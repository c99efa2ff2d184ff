#include "models.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "convguard/canonical.hpp"
#include "results.hpp"
#include "transforms/parse.hpp"
#include "vendor/data_path.hpp"

namespace convguard::cli {
namespace {

std::string models_dir() {
  return data_path("suites/models");
}

std::string first_comment(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (std::getline(f, line) && line.rfind("# ", 0) == 0) return line.substr(2);
  return "";
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> v;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(models_dir(), ec))
    if (e.path().extension() == ".txt") v.push_back(e.path().stem().string());
  std::sort(v.begin(), v.end());
  return v;
}

Result<ModelLayers> load_model(const std::string& name, std::int64_t batch) {
  if (batch < 0) return invalid_argument("--batch: must be at least 1");
  const std::string path =
      std::filesystem::exists(name) ? name : models_dir() + "/" + name + ".txt";
  if (!std::filesystem::exists(path)) {
    std::string names;
    for (const auto& n : model_names()) names += (names.empty() ? "" : ", ") + n;
    return invalid_argument(
        fmt::format("--model: no model '{}' (there are: {}; convguard models)", name, names));
  }
  auto layers = read_problem_file(path);
  if (!layers) return Status{layers.status().code(), "--model: " + layers.status().message()};
  ModelLayers m{std::filesystem::path(path).stem().string(), first_comment(path), {}};
  for (Problem p : *layers) {
    if (batch > 0) p.n = batch;
    m.layers.push_back(std::move(p));
  }
  return m;
}

std::int64_t layer_count(const Problem& p) {
  const auto open = p.name.rfind("(x");
  if (open == std::string::npos || p.name.back() != ')') return 1;
  return std::max<std::int64_t>(1, std::atoll(p.name.c_str() + open + 2));
}

namespace {

int print_model_verdict(FILE* out, const std::string& model, const std::vector<Problem>& layers,
                        const std::vector<std::string>& solvers, db::Store& store,
                        const std::string& fingerprint) {
  std::fprintf(out, "\nmodel %s: %zu layer problems\n", model.c_str(), layers.size());
  std::fprintf(out, "  %-44s %-9s %-40s %10s\n", "layer", "verdict", "solver (fastest verified)",
               "ms x count");
  double total_ms = 0;
  std::vector<std::string> worked_around, failed;
  for (const Problem& p : layers) {
    const ProblemResults r = problem_results(store, fingerprint, p, solvers);
    const std::int64_t count = layer_count(p);
    const std::string label = problem_label(p);
    std::string verdict, solver, why;
    double ms = 0;
    if (!r.plain.empty()) {
      verdict = "works";
      solver = r.plain;
      ms = r.plain_ms;
    } else if (!r.workaround.empty()) {
      verdict = "WORKAROUND";
      solver = r.workaround;
      ms = r.workaround_ms;
      worked_around.push_back(fmt::format("{}: {}", label, r.workaround));
    } else {
      verdict = "FAILS";
      // Why: the plain solvers' failures (a workaround failing too adds nothing to say).
      for (const auto& [status, all] : r.by_status) {
        std::vector<std::string> ids;
        for (const auto& id : all)
          if (!transforms::is_transform_id(id)) ids.push_back(id);
        if (status == "unsupported" || status == "ok" || ids.empty()) continue;
        why += fmt::format("{}{} {}{}", why.empty() ? "" : "; ", status, ids.front(),
                           ids.size() > 1 ? fmt::format(" +{}", ids.size() - 1) : "");
      }
      if (why.empty()) why = "no solver applies or none was tried";
      solver = why;
      failed.push_back(fmt::format("{}: {}", label, why));
    }
    total_ms += ms * static_cast<double>(count);
    std::fprintf(out, "  %-44.44s %-9s %-40.40s %10s\n", label.c_str(), verdict.c_str(),
                 solver.c_str(), ms > 0 ? fmt::format("{:.3f} x{}", ms, count).c_str() : "-");
  }
  if (!failed.empty()) {
    std::fprintf(out,
                 "model %s FAILS on this device: %zu layer problem(s) without a verified solver or "
                 "workaround\n",
                 model.c_str(), failed.size());
    for (const auto& f : failed) std::fprintf(out, "  %s\n", f.c_str());
    return 2;
  }
  if (!worked_around.empty()) {
    std::fprintf(out,
                 "model %s WORKS WITH WORKAROUNDS: %zu layer problem(s) need a transform; %.3f ms "
                 "per pass in all (sum of the layers' fastest verified medians x their counts)\n",
                 model.c_str(), worked_around.size(), total_ms);
    for (const auto& w : worked_around) std::fprintf(out, "  %s\n", w.c_str());
    return 1;
  }
  std::fprintf(out,
               "model %s WORKS: every layer verified; %.3f ms per pass in all (sum of the layers' "
               "fastest verified medians x their counts)\n",
               model.c_str(), total_ms);
  return 0;
}

}  // namespace

int print_model_verdicts(FILE* out, const std::vector<std::string>& models,
                         const std::vector<int>& model_of, const std::vector<Problem>& problems,
                         const std::vector<std::string>& solvers, db::Store& store,
                         const std::string& fingerprint) {
  int worst = 0;
  std::vector<int> verdicts;
  for (std::size_t m = 0; m < models.size(); ++m) {
    std::vector<Problem> layers;
    for (std::size_t i = 0; i < problems.size(); ++i)
      if (model_of[i] == static_cast<int>(m)) layers.push_back(problems[i]);
    verdicts.push_back(print_model_verdict(out, models[m], layers, solvers, store, fingerprint));
    worst = std::max(worst, verdicts.back());
  }
  // Seed 004's "Models That Work", measured.
  if (models.size() > 1) {
    std::fprintf(out, "\n%-18s %s\n", "model", "on this device");
    for (std::size_t m = 0; m < models.size(); ++m)
      std::fprintf(out, "%-18s %s\n", models[m].c_str(),
                   verdicts[m] == 0   ? "works"
                   : verdicts[m] == 1 ? "works with workarounds"
                                      : "FAILS");
  }
  return worst;
}

int models_main(int argc, char** argv) {
  if (argc > 2) {
    if (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h") {
      std::printf(
          "usage: convguard models\n\nLists the model layer lists under "
          "data/suites/models; probe one with convguard probe --model NAME [--batch N].\n");
      return 0;
    }
    std::fprintf(stderr, "convguard models: unexpected argument '%s'\n", argv[2]);
    return 2;
  }
  std::printf("%-18s %8s %8s  %s\n", "model", "distinct", "layers", "what");
  for (const std::string& name : model_names()) {
    auto m = load_model(name, 1);
    if (!m) {
      std::fprintf(stderr, "convguard models: %s\n", m.status().message().c_str());
      return 1;
    }
    std::int64_t total = 0;
    for (const Problem& p : m->layers) total += layer_count(p);
    std::printf("%-18s %8zu %8lld  %s\n", name.c_str(), m->layers.size(),
                static_cast<long long>(total), m->about.c_str());
  }
  return 0;
}

}  // namespace convguard::cli
