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

// The model NAME (or a path to a layer file) with every layer's batch set to `batch`.
[[nodiscard]] Result<ModelLayers> load_model(const std::string& name, std::int64_t batch);
std::vector<std::string> model_names();
// How many layers of the model a line stands for: its name's "(xN)", else 1.
std::int64_t layer_count(const Problem& p);

// The model's verdict on one device from the database: one line per layer (and direction)
// and a summary. `layers` are the model's problems as probed (directions and dtypes applied);
// `solvers` every solver id tried on them, workarounds included. Returns 0 works, 1 works with
// workarounds, 2 fails.
int print_model_verdict(FILE* out, const std::string& model, const std::vector<Problem>& layers,
                        const std::vector<std::string>& solvers, db::Store& store,
                        const std::string& fingerprint);

int models_main(int argc, char** argv);  // convguard models

}  // namespace convguard::cli
