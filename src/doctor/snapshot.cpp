#include "doctor/snapshot.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/utsname.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/json_text.hpp"
#include "gpu/gpu.hpp"

extern char** environ;

namespace convguard::doctor {
namespace {

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// AMD GPUs from the kernel driver's topology (no ROCm library needed): gfx_target_version is
// major*10000 + minor*100 + stepping in decimal (100100 -> gfx1010; hex digits for the last two).
void amd_gpus(Snapshot& s) {
  const std::filesystem::path nodes = "/sys/class/kfd/kfd/topology/nodes";
  std::error_code ec;
  for (const auto& node : std::filesystem::directory_iterator(nodes, ec)) {
    std::istringstream props(read_text(node.path() / "properties"));
    long target = 0, simds = 0, simd_per_cu = 0;
    for (std::string key; props >> key;) {
      long v = 0;
      props >> v;
      if (key == "gfx_target_version") target = v;
      if (key == "simd_count") simds = v;
      if (key == "simd_per_cu") simd_per_cu = v;
    }
    if (target == 0) continue;  // a CPU node
    const std::string arch =
        fmt::format("gfx{}{:x}{:x}", target / 10000, (target / 100) % 100, target % 100);
    nlohmann::json g = {{"vendor", "AMD"},
                        {"name", trim(read_text(node.path() / "name"))},
                        {"arch", arch},
                        {"source", "kfd topology"}};
    if (simds > 0 && simd_per_cu > 0) g["compute_units"] = simds / simd_per_cu;
    s["gpus"].push_back(g);
  }
}

void nvidia_gpus(Snapshot& s) {
  const int n = gpu::device_count();
  for (int i = 0; i < n; ++i) {
    auto d = gpu::open_device(i);
    if (!d) continue;
    s["gpus"].push_back({{"vendor", "NVIDIA"},
                         {"name", d->name},
                         {"arch", d->arch},
                         {"compute_units", d->multiprocessors},
                         {"source", "CUDA runtime"}});
    s["versions"]["cuda_driver"] = std::to_string(d->driver_version);
    s["versions"]["cuda_runtime"] = std::to_string(d->runtime_version);
  }
}

// ROCm's own version file, and MIOpen's from the file name of its library (libMIOpen.so.1.0.X
// does not carry it; the package's version header does).
void rocm_versions(Snapshot& s) {
  std::vector<std::string> roots;
  if (const char* r = std::getenv("ROCM_PATH"); r && *r) roots.emplace_back(r);
  roots.emplace_back("/opt/rocm");
  for (const auto& root : roots) {
    const std::string v = trim(read_text(root + "/.info/version"));
    if (!v.empty() && !s["versions"].contains("rocm")) s["versions"]["rocm"] = v;
    const std::string h = read_text(root + "/include/miopen/version.h");
    std::smatch m;
    std::string parts[3];
    const char* names[3] = {"MAJOR", "MINOR", "PATCH"};
    bool all = !h.empty();
    for (int i = 0; i < 3 && all; ++i) {
      const std::regex re(std::string("#define MIOPEN_VERSION_") + names[i] + " ([0-9]+)");
      all = std::regex_search(h, m, re);
      if (all) parts[i] = m[1];
    }
    if (all && !s["versions"].contains("miopen"))
      s["versions"]["miopen"] = parts[0] + "." + parts[1] + "." + parts[2];
  }
}

void cudnn_version(Snapshot& s) {
  void* h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  using Fn = std::size_t (*)();
  if (auto f = reinterpret_cast<Fn>(dlsym(h, "cudnnGetVersion"))) {
    const std::size_t v = f();  // 9.14.0 -> 91400
    s["versions"]["cudnn"] = fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
  }
  dlclose(h);
}

// Python, torch and NumPy versions from the python3 on PATH (import errors are findings too).
void python_versions(Snapshot& s) {
  const char* script =
      "import json,sys\n"
      "r={'version':sys.version.split()[0]}\n"
      "try:\n import numpy;r['numpy']=numpy.__version__\n"
      "except Exception as e:\n r['numpy_error']=str(e)[:200]\n"
      "try:\n import torch;r['torch']=torch.__version__;"
      "r['torch_hip']=getattr(torch.version,'hip',None);"
      "r['torch_cuda']=getattr(torch.version,'cuda',None)\n"
      "except Exception as e:\n r['torch_error']=str(e)[:200]\n"
      "print(json.dumps(r))\n";
  // -I (isolated): without it `python3 -c` puts the current directory first on sys.path, so a
  // json.py (or numpy.py) where doctor runs would be imported and executed; -I also ignores
  // PYTHON* variables and the user's site-packages. torch and NumPy come from the system paths.
  const std::string cmd = "timeout 60 python3 -I -c \"$CONVGUARD_DOCTOR_PY\" 2>/dev/null";
  setenv("CONVGUARD_DOCTOR_PY", script, 1);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return;
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  pclose(p);
  unsetenv("CONVGUARD_DOCTOR_PY");
  try {
    if (!out.empty()) s["python"] = nlohmann::json::parse(out);
  } catch (const std::exception&) {
  }
}

}  // namespace

bool recorded_env(const std::string& name) {
  static const char* exact[] = {
      "HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
      "CUDA_VISIBLE_DEVICES",     "ROCM_PATH",           "PYTORCH_ROCM_ARCH",
      "HSA_ENABLE_SDMA",          "CUDNN_LOGLEVEL_DBG"};
  for (const char* e : exact) {
    if (name == e) return true;
  }
  return name.rfind("MIOPEN_", 0) == 0 || name.rfind("CONVGUARD_", 0) == 0;
}

Snapshot collect() {
  Snapshot s = {{"snapshot_version", 1},
                {"gpus", nlohmann::json::array()},
                {"versions", nlohmann::json::object()},
                {"env", nlohmann::json::object()}};
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  s["taken_at"] = when;
  utsname u{};
  if (uname(&u) == 0) s["os"] = std::string(u.sysname) + " " + u.release;
  amd_gpus(s);
  if (const std::string v = trim(read_text("/sys/module/amdgpu/version")); !v.empty())
    s["versions"]["amdgpu_driver"] = v;
  nvidia_gpus(s);
  rocm_versions(s);
  cudnn_version(s);
  for (char** e = environ; *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos && recorded_env(kv.substr(0, eq)))
      s["env"][kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  python_versions(s);
  return s;
}

Result<Snapshot> read_snapshot(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status{StatusCode::io_error, path + ": cannot read the snapshot"};
  try {
    Snapshot s = nlohmann::json::parse(f);
    if (!s.is_object()) return invalid_argument(path + ": a snapshot is a JSON object");
    return s;
  } catch (const std::exception& e) {
    return invalid_argument(path + ": not JSON: " + e.what());
  }
}

Status write_snapshot(const Snapshot& s, const std::string& path) {
  std::ofstream f(path);
  if (!(f << json_text(s, 2) << "\n")) return Status{StatusCode::io_error, path + ": cannot write"};
  return Status::ok();
}

}  // namespace convguard::doctor
