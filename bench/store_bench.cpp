// The results store's write rate: each of --writers processes journals --trials trials (begin, then
// finish as ok: the two writes a probe makes per trial) of distinct problems into one store, and
// the rate is all trials over the wall time of the slowest writer. No trial runs: this measures the
// store, not the sandbox. SQLite takes one writer (its lock: a second probe is refused), so more
// than one writer is PostgreSQL's alone.
//   store_bench --db PATH|postgresql://... [--writers N] [--trials M]
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "db/pg_store.hpp"
#include "db/store.hpp"

using namespace convguard;

namespace {

int write_trials(const std::string& where, int writer, int trials) {
  auto store = db::Store::open(where);
  if (!store) {
    std::fprintf(stderr, "store_bench: %s\n", store.status().message().c_str());
    return 1;
  }
  const std::string device = "store_bench device";
  if (auto st = (*store)->add_device(device, device); !st) {
    std::fprintf(stderr, "store_bench: %s\n", st.message().c_str());
    return 1;
  }
  for (int t = 0; t < trials; ++t) {
    db::TrialRecord r;
    r.device = device;
    // Distinct problems: writer in the channels, trial in the size.
    r.problem = fmt::format("mb1ic{}ih{}iw{}oc1kh1kw1", writer + 1, 4 + t % 512, 4 + t / 512);
    r.solver = "cpu:direct";
    r.command = "store_bench";
    auto claim = (*store)->begin(r, std::nullopt);
    if (!claim) {
      std::fprintf(stderr, "store_bench: %s\n", claim.status().message().c_str());
      return 1;
    }
    r.status = "ok";
    r.median_ms = r.min_ms = r.first_ms = 0.5;
    r.runs = 1;
    if (auto st = (*store)->finish(r); !st) {
      std::fprintf(stderr, "store_bench: %s\n", st.message().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string where;
  int writers = 1, trials = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--db")
      where = argv[i + 1];
    else if (flag == "--writers")
      writers = std::atoi(argv[i + 1]);
    else if (flag == "--trials")
      trials = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "store_bench: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (where.empty() || writers < 1 || writers > 64 || trials < 1) {
    std::fprintf(stderr,
                 "usage: store_bench --db PATH|postgresql://... [--writers 1..64] [--trials M]\n");
    return 2;
  }
  if (writers > 1 && !db::is_postgres_url(where)) {
    std::fprintf(stderr, "store_bench: SQLite takes one writer (the probe's lock)\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  for (int w = 0; w < writers; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(write_trials(where, w, trials));
    pids.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %d writer(s) x %d trials in %.2f s: %.0f trials/s%s\n",
              db::is_postgres_url(where) ? "postgresql" : "sqlite", writers, trials, s,
              writers * trials / s,
              failed ? fmt::format(" ({} writer(s) FAILED)", failed).c_str() : "");
  return failed ? 1 : 0;
}
