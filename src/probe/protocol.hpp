// The worker protocol: one JSON object per line in each direction over the worker's stdin and
// stdout (stderr is kept apart and its tail attached to results). Tensors are never shipped: the
// worker generates its test data from the seed, so a request is a few hundred bytes.
//
//   worker -> parent, once:   {"ready":true,"pid":123,"gflops":150.2}
//   parent -> worker:         {"problem":"...","solver":"cpu:direct","seed":1,...}
//   worker -> parent:         {"progress":"first_run","first_ms":12.5}   (after the first run)
//   worker -> parent:         {"status":"ok","first_ms":...,...}         (the verdict)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "convguard/status.hpp"

namespace convguard::probe {

struct TrialRequest {
  std::string problem;  // canonical string
  std::string solver;
  std::uint64_t seed = 1;
  bool verify = true;
  int max_runs = 20;          // timed runs at most (stops earlier when stable within 5%)
  double max_time_ms = 1000;  // time spent timing at most
};

// The worker's verdict on one trial. status is one of ok, wrong, error, oom, unsupported (the
// parent adds hang, crash, skipped: outcomes a worker cannot report about itself).
struct TrialReply {
  std::string status;
  std::string reason;
  double first_ms = 0, median_ms = 0, min_ms = 0;
  int runs = 0;
  std::uint64_t workspace_bytes = 0;
  std::uint64_t peak_rss_bytes = 0;
  double rel_error = 0, max_abs_error = 0, tolerance = 0;
  bool sampled = false;
  // The device faulted (sticky error: illegal address, launch failure); the worker's context is
  // unusable, so the parent replaces it after this reply.
  bool fatal = false;
};

std::string encode(const TrialRequest& r);
std::string encode(const TrialReply& r);
[[nodiscard]] Result<TrialRequest> decode_request(const std::string& line);
[[nodiscard]] Result<TrialReply> decode_reply(const std::string& line);

}  // namespace convguard::probe
