#include "miopen_env.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace convguard_miopen {
namespace {

// Each worker's MIOpen folders live in a parent of the user's own, $TMPDIR/convguard-miopen-u<uid>
// (mode 0700, refused unless it is a real directory owned by this user), named
// <pid namespace>-<pid>-XXXXXX. Folders of workers that were killed (a hang is ended with SIGKILL,
// so atexit never ran) are removed by the next worker: only in that parent, only entries owned by
// this user, and only those of this pid namespace whose pid no longer exists there (a pid that
// cannot be seen from another namespace says nothing about its owner).
std::string pid_namespace() {
  char buf[64] = {};
  const ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  std::string ns = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "pid:[0]";
  std::string digits;
  for (char c : ns)
    if (c >= '0' && c <= '9') digits += c;
  return digits.empty() ? "0" : digits;
}

std::string user_parent() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir =
      fmt::format("{}/convguard-miopen-u{}", tmp && *tmp ? tmp : "/tmp", getuid());
  (void)mkdir(dir.c_str(), 0700);
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
      (st.st_mode & 0077) != 0)
    return {};  // not ours (or not private): MIOpen gets no folder of ours rather than that one
  return dir;
}

void remove_stale_dirs(const std::string& parent) {
  std::error_code ec;
  const std::string prefix = pid_namespace() + "-";
  for (const auto& e : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    struct stat st {};
    if (lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
      continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::filesystem::remove_all(e.path(), ec);
    }
  }
}

}  // namespace

std::string miopen_environment() {
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    if (entry.rfind("MIOPEN_", 0) != 0) continue;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "MIOPEN_USER_DB_PATH" || name == "MIOPEN_CUSTOM_CACHE_DIR") continue;
    for (char& c : entry) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '|') c = '?';
    }
    vars.push_back(entry);
  }
  std::sort(vars.begin(), vars.end());
  std::string out;
  for (const auto& v : vars) out += (out.empty() ? "" : " ") + v;
  return out;
}

std::string make_worker_dir() {
  const std::string parent = user_parent();
  if (parent.empty()) return {};
  remove_stale_dirs(parent);
  std::string pattern = fmt::format("{}/{}-{}-XXXXXX", parent, pid_namespace(), getpid());
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  return mkdtemp(buf.data()) ? std::string(buf.data()) : std::string();
}

void remove_worker_dir(const std::string& dir) {
  std::error_code ec;
  if (dir.empty()) return;
  std::filesystem::remove_all(dir, ec);
  remove_stale_dirs(std::filesystem::path(dir).parent_path().string());
}

std::string kernel_cache_dir(const std::string& fingerprint) {
  const std::string parent = user_parent();
  if (parent.empty()) return {};
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: a stable name for the fingerprint
  for (unsigned char c : fingerprint) h = (h ^ c) * 1099511628211ull;
  const std::string dir = fmt::format("{}/kernels-{:016x}", parent, h);
  (void)mkdir(dir.c_str(), 0700);
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) return {};
  return dir;
}

}  // namespace convguard_miopen
