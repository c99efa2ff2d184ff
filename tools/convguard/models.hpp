// Model layer lists (data/suites/models/NAME.txt, written by scripts/model_layers.py): each line
// a distinct conv layer whose name ends in "(xN)", how many layers of the model have that shape.
// `convguard models` lists them; `convguard probe --model NAME` probes one and says whether the
// model works on this device: every layer verified (with the fastest solver per layer and the
// model's total), works with workarounds (which layers, which transform), or fails (which
// layers, why).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "convguard/problem.hpp"
#include "db/store.hpp"

namespace convguard::cli {

struct ModelLayers {
  std::string name, about;  // about: the file's first comment line
  std::vector<Problem> layers;
};

// The model NAME (or a path to a layer file) with every layer's batch set to `batch` (0: as the
// file gives it).
[[nodiscard]] Result<ModelLayers> load_model(const std::string& name, std::int64_t batch);
std::vector<std::string> model_names();
// How many layers of the model a line stands for: its name's "(xN)", else 1.
std::int64_t layer_count(const Problem& p);

// Each model's verdict on one device from the database (problem i belongs to model model_of[i],
// -1 for none; problems as probed, directions and dtypes applied; `solvers` every id tried on
// them, workarounds included): one line per layer problem and a summary, then one line per model
// when there are several. A verdict is 0 works, 1 works with workarounds, 2 fails; returns the
// worst.
int print_model_verdicts(FILE* out, const std::vector<std::string>& models,
                         const std::vector<int>& model_of, const std::vector<Problem>& problems,
                         const std::vector<std::string>& solvers, db::Store& store,
                         const std::string& fingerprint);

int models_main(int argc, char** argv);  // convguard models

}  // namespace convguard::cli
