#include "probe/protocol.hpp"

#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "core/json_text.hpp"

namespace convguard::probe {

using nlohmann::json;

std::string encode(const TrialRequest& r) {
  return json_text(json{{"seq", r.seq},
                        {"problem", r.problem},
                        {"solver", r.solver},
                        {"seed", r.seed},
                        {"verify", r.verify},
                        {"max_runs", r.max_runs},
                        {"max_time_ms", r.max_time_ms}});
}

std::string encode(const TrialReply& r) {
  return json_text(json{{"seq", r.seq},
                        {"status", r.status},
                        {"reason", r.reason},
                        {"first_ms", r.first_ms},
                        {"median_ms", r.median_ms},
                        {"min_ms", r.min_ms},
                        {"runs", r.runs},
                        {"workspace_bytes", r.workspace_bytes},
                        {"peak_rss_bytes", r.peak_rss_bytes},
                        {"rel_error", r.rel_error},
                        {"max_abs_error", r.max_abs_error},
                        {"tolerance", r.tolerance},
                        {"sampled", r.sampled},
                        {"fatal", r.fatal},
                        {"compile_ms", r.compile_ms}});
}

Result<TrialRequest> decode_request(const std::string& line) {
  try {
    const json j = json::parse(line);
    TrialRequest r;
    json_field(j, "seq", r.seq, true);
    json_field(j, "problem", r.problem, true);
    json_field(j, "solver", r.solver, true);
    json_field(j, "seed", r.seed);
    json_field(j, "verify", r.verify);
    json_field(j, "max_runs", r.max_runs);
    json_field(j, "max_time_ms", r.max_time_ms);
    return r;
  } catch (const std::exception& e) {
    return invalid_argument(std::string("worker request: ") + e.what());
  }
}

Result<TrialReply> decode_reply(const std::string& line) {
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded())
    return Status{StatusCode::internal_error,
                  "worker reply: not JSON: '" + line.substr(0, 200) + "'"};
  return decode_reply_json(j);
}

Result<TrialReply> decode_reply_json(const json& j) {
  try {
    TrialReply r;
    json_field(j, "seq", r.seq, true);
    json_field(j, "status", r.status, true);
    json_field(j, "reason", r.reason);
    json_field(j, "first_ms", r.first_ms);
    json_field(j, "median_ms", r.median_ms);
    json_field(j, "min_ms", r.min_ms);
    json_field(j, "runs", r.runs);
    json_field(j, "workspace_bytes", r.workspace_bytes);
    json_field(j, "peak_rss_bytes", r.peak_rss_bytes);
    json_field(j, "rel_error", r.rel_error);
    json_field(j, "max_abs_error", r.max_abs_error);
    json_field(j, "tolerance", r.tolerance);
    json_field(j, "sampled", r.sampled);
    json_field(j, "fatal", r.fatal);
    json_field(j, "compile_ms", r.compile_ms);
    return r;
  } catch (const std::exception& e) {
    return Status{StatusCode::internal_error, std::string("worker reply: ") + e.what()};
  }
}

bool read_line(int fd, std::string& buf, std::string& line) {
  constexpr std::size_t kMaxLine = std::size_t{1} << 20;
  for (;;) {
    if (const auto nl = buf.find('\n'); nl != std::string::npos) {
      line.assign(buf, 0, nl);
      buf.erase(0, nl + 1);
      return true;
    }
    if (buf.size() > kMaxLine) return false;
    char chunk[4096];
    const ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    buf.append(chunk, static_cast<std::size_t>(r));
  }
}

bool write_line(int fd, const std::string& line) {
  const std::string out = line + "\n";
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t w = ::write(fd, out.data() + done, out.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace convguard::probe
