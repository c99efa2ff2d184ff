// A trial on a device with its own memory (a GPU through convguard's backend, or a device a
// plugin drives): the host test data copied to device buffers, the output poisoned, the solver
// run, its output copied back and verified on the host, then timed. One implementation for every
// such device; each supplies its memory calls (and, where it has them, device-event timing).
#pragma once

#include <cstddef>
#include <functional>

#include "convguard/solver.hpp"
#include "convguard/trial.hpp"

namespace convguard::detail {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  [[nodiscard]] virtual Status allocate(void** p, std::size_t bytes, const char* what) = 0;
  virtual void release(void* p) = 0;
  [[nodiscard]] virtual Status copy_in(void* device, const void* host, std::size_t bytes) = 0;
  [[nodiscard]] virtual Status copy_out(void* host, const void* device, std::size_t bytes) = 0;
  // Sets every byte to 0xff: NaN in f32, f16 and bf16, so unwritten outputs fail verification.
  [[nodiscard]] virtual Status poison(void* device, std::size_t bytes) = 0;
  [[nodiscard]] virtual Status synchronize(const char* what) = 0;
  // Milliseconds of one call of `run` (which only enqueues work). Default: the host clock around
  // run() and synchronize().
  [[nodiscard]] virtual Result<double> time_once(const std::function<Status()>& run);
};

// `device_reference` (gpu:naive on a GPU; none for plugin devices): above the full-reference
// limit, where the host checks only sampled points, the whole output is also compared with this
// solver's, run on the same device from the same inputs (once per inputs, kept in `host`).
TrialResult run_staged_trial(const Solver& s, const Problem& p, TrialTensors& host,
                             const TrialOptions& o, DeviceMemory& mem,
                             const Solver* device_reference = nullptr);

}  // namespace convguard::detail
