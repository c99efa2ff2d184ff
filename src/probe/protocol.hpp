// The worker protocol: one JSON object per line in each direction, over two descriptors that
// belong to the protocol alone: the worker reads requests on fd kRequestFd (3) and writes replies
// on fd kReplyFd (4). Its stdin is /dev/null and its stdout is its stderr, both captured by the
// parent as the trial's output tail: whatever a solver or a vendor library prints (a JSON line
// included) can never be read as a reply. Every request carries a sequence number that its
// progress line and its reply repeat; a line with another number is a protocol violation.
// Tensors are never shipped: the worker generates its test data from the seed, so a request is a
// few hundred bytes.
//
//   worker -> parent, once:   {"ready":true,"pid":123,"gflops":150.2}
//   parent -> worker:         {"seq":7,"problem":"...","solver":"cpu:direct","seed":1,...}
//   worker -> parent:         {"seq":7,"progress":"compiling"}  (plugin solvers with a compile
//   worker -> parent:         {"seq":7,"progress":"compiled","compile_ms":900}   step, once each)
//   worker -> parent:         {"seq":7,"progress":"planning"}  (before plan(), after the data)
//   worker -> parent:         {"seq":7,"progress":"first_run","first_ms":12.5}  (at most once)
//   worker -> parent:         {"seq":7,"status":"ok","first_ms":...,...}        (the verdict)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "convguard/status.hpp"

namespace convguard::probe {

inline constexpr int kRequestFd = 3;
inline constexpr int kReplyFd = 4;

struct TrialRequest {
  std::uint64_t seq = 0;  // the parent's count of requests to this worker
  std::string problem;    // canonical string
  std::string solver;
  std::uint64_t seed = 1;
  bool verify = true;
  int max_runs = 20;          // timed runs at most (stops earlier when stable within 5%)
  double max_time_ms = 1000;  // time spent timing at most
};

// The worker's verdict on one trial. status is one of ok, wrong, error, oom, unsupported (the
// parent adds hang, crash, skipped: outcomes a worker cannot report about itself).
struct TrialReply {
  std::uint64_t seq = 0;  // the request's
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
  // A plugin's compile step (plugin.h prepare()), timed apart from the run; 0 when it has none.
  double compile_ms = 0;
};

std::string encode(const TrialRequest& r);
std::string encode(const TrialReply& r);
[[nodiscard]] Result<TrialRequest> decode_request(const std::string& line);
[[nodiscard]] Result<TrialReply> decode_reply(const std::string& line);
// The same from a line already parsed (the parent parses each line once to see whose it is).
[[nodiscard]] Result<TrialReply> decode_reply_json(const nlohmann::json& j);

// Line I/O on the protocol's descriptors (no stdio: those are the solvers'). read_line fills
// `line` with the next line from fd (buffering the rest in `buf`); false at end of file or on an
// error. A line longer than 1 MiB is an error, not an unbounded buffer. write_line retries short
// writes and EINTR.
[[nodiscard]] bool read_line(int fd, std::string& buf, std::string& line);
[[nodiscard]] bool write_line(int fd, const std::string& line);

}  // namespace convguard::probe
