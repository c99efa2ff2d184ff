// One trial: run a solver on a problem with seeded (or loaded) data, verify it against the
// fp64 reference and time it. The driver runs trials in-process; the probe (next) runs the
// same function inside a sandboxed worker.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "convguard/fill.hpp"
#include "convguard/solver.hpp"

namespace convguard {

// The three tensors of a problem plus the cached reference result for its direction.
struct TrialTensors {
  explicit TrialTensors(const Problem& p);
  ConvTensors view() { return {x.view(), w.view(), y.view()}; }
  TensorView output(const Problem& p) { return output_of(p, view()); }
  HostTensor x, w, y;
  std::optional<std::vector<double>> reference;  // computed on first full verification
  // Its companions for the per-element and TF32 checks (verify.hpp), likewise; tf32 for f32 only.
  std::optional<std::vector<double>> reference_magnitude, reference_tf32;
  std::vector<double> sampled_reference;  // the sampled points' values, likewise
  // A GPU's device reference (gpu:naive) output, above the full-reference limit, likewise.
  std::optional<std::vector<double>> device_reference;
};

// Fills the direction's input tensors (x, w for forward; dy, w for backward-data; x, dy for
// backward-weights) from the seed.
void fill_inputs(const Problem& p, TrialTensors& t, std::uint64_t seed, FillMode mode);

struct TrialOptions {
  bool verify = true;
  FillMode fill = FillMode::uniform;
  bool time = false;
  int iterations = 10;  // timed runs at most
  // Stop timing early once the last three runs are within this fraction of the fastest
  // (0: always run `iterations`), or once this much time was spent timing (0: no limit). A first
  // run that alone takes max_time_ms is the measurement (planning included): no timed runs.
  double stable_within = 0;
  double max_time_ms = 0;
  // Called after the first run with its time, before verification and timing (the probe's
  // worker reports it so the parent can size the rest of the deadline from a measurement).
  std::function<void(double first_ms)> on_first_run;
  // Called just before plan(): the first run's clock starts (the probe's --slow-factor counts
  // from here, after the data, check() and the workspace, which a first_ms does not include).
  std::function<void()> on_plan;
  // Problems with more multiply-adds than this verify by sampling instead of a full reference.
  double full_reference_limit = 2e9;
  // Sampled points: `samples`, fewer where each point's reduction is long (a backward-weights
  // point of a batch-1024 problem sums 1M products), so the points cost at most
  // sample_mac_budget multiply-adds, but never fewer than min_samples.
  std::int64_t samples = 4096;
  std::int64_t min_samples = 256;
  double sample_mac_budget = 1.5e8;
  std::uint64_t seed = 1;
};

struct TrialResult {
  Status status;  // not_applicable: check() declined (reason); other codes: the run failed
  std::size_t workspace_bytes = 0;
  double first_ms = 0;  // the first run (includes planning)
  double mean_ms = 0, median_ms = 0, min_ms = 0;
  int iterations = 0;
  std::optional<Verdict> verdict;
  std::string note;       // how check() decided the solver applies, when it says (vendor plugins)
  bool declined = false;  // check() said no: the solver was never handed a tensor
  bool ran() const { return status.is_ok(); }
};

// How many output points sampled verification of p checks under o.
std::int64_t sampled_points(const Problem& p, const TrialOptions& o);

TrialResult run_trial(const Solver& s, const Problem& p, TrialTensors& t, const TrialOptions& o);

// The steps of a trial that every device shares (the GPU trial in src/gpu uses them too).
// Verifies t's output (already on the host) into r.verdict: full fp64 reference up to
// o.full_reference_limit multiply-adds (cached in t), sampled points above.
[[nodiscard]] Status verify_output(const Solver& s, const Problem& p, TrialTensors& t,
                                   const TrialOptions& o, TrialResult& r);
// Times runs after the first (r.first_ms set): `run_once` returns one run's milliseconds.
[[nodiscard]] Status time_runs(const std::function<Result<double>()>& run_once,
                               const TrialOptions& o, TrialResult& r);

}  // namespace convguard
