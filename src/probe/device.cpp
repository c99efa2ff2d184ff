#include "probe/device.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <fstream>
#include <functional>
#include <string>

#include "convguard/registry.hpp"
#include "cpu/blas.hpp"
#include "cpu/isa.hpp"
#include "gpu/gpu.hpp"
#include "plugins/loader.hpp"

namespace convguard::probe {

DeviceInfo cpu_device() {
  std::string model = "unknown CPU";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  // The built-in solver set; plugin solvers carry their own ids, so a plugin's solver list does
  // not change the device. The vendor library a CPU plugin loaded does ("oneDNN 2.6.3 (...)"), as
  // on the GPU: its upgrade starts fresh evidence. A command that loads no such plugin (or one
  // that says nothing of its library, like chaos) keeps the plain CPU fingerprint.
  (void)all_solvers();  // loads CONVGUARD_PLUGINS, whose libraries enter the fingerprint
  std::string ids;
  for (const Solver* s : cpu_solvers()) ids += std::string(s->id()) + ",";
  const std::size_t solver_hash = std::hash<std::string>{}(ids);
  DeviceInfo d;
  d.description = "cpu: " + model + ", " + std::to_string(omp_get_max_threads()) + " threads, " +
                  cpu::to_string(cpu::isa_level()) + ", BLAS " + cpu::blas::describe();
  d.fingerprint = "cpu|" + model + "|isa=" + cpu::to_string(cpu::isa_level()) +
                  "|threads=" + std::to_string(omp_get_max_threads()) +
                  "|blas=" + cpu::blas::describe() +
                  "|convguard=" CONVGUARD_VERSION "|solvers=" + std::to_string(solver_hash);
  for (const std::string& lib : plugins::descriptions(Device::cpu)) {
    d.fingerprint += "|" + lib;
    d.description += ", " + lib;
  }
  return d;
}

namespace {

Result<DeviceInfo> gpu_device(const std::string& name) {
  const std::string prefix = std::string(gpu::backend()) + ":";
  if (name.rfind(prefix, 0) != 0) {
    return invalid_argument("device: '" + name + "' is not cpu or " + prefix + "N in this build");
  }
  int index = 0;
  try {
    index = std::stoi(name.substr(prefix.size()));
  } catch (const std::exception&) {
    return invalid_argument("device: '" + name + "' has no GPU index");
  }
  auto g = gpu::open_device(index);
  if (!g) return g.status();
  std::string ids;
  for (const Solver* s : gpu::gpu_solvers()) ids += std::string(s->id()) + ",";
  DeviceInfo d;
  d.kind = Device::gpu;
  d.description = fmt::format("{}: {} ({}, {} SMs, {:.0f} GiB), driver {}, runtime {}", name,
                              g->name, g->arch, g->multiprocessors, g->memory_bytes / 1073741824.0,
                              g->driver_version, g->runtime_version);
  d.fingerprint =
      fmt::format("{}|{}|{}|sms={}|driver={}|runtime={}|convguard={}|solvers={}", gpu::backend(),
                  g->name, g->arch, g->multiprocessors, g->driver_version, g->runtime_version,
                  CONVGUARD_VERSION, std::hash<std::string>{}(ids));
  // Vendor libraries loaded by plugins (e.g. "cuDNN 9.14.0 (/usr/lib/...)"): an upgrade, or the
  // other of two installed builds, is another device as far as evidence goes.
  for (const std::string& lib : plugins::descriptions(Device::gpu)) {
    d.fingerprint += "|" + lib;
    d.description += ", " + lib;
  }
  return d;
}

}  // namespace

Result<DeviceInfo> open_device(const std::string& name) {
  if (name == "cpu") return cpu_device();
  (void)all_solvers();  // loads CONVGUARD_PLUGINS, whose devices `name` may be
  if (plugins::is_plugin_device(name)) {
    auto d = plugins::open_plugin_device(name);
    if (!d) return d.status();
    DeviceInfo info;
    info.kind = Device::plugin;
    info.plugin_kind = name.substr(0, name.find(':'));
    info.description = d->description;
    info.fingerprint = d->fingerprint + "|convguard=" + CONVGUARD_VERSION;
    return info;
  }
  return gpu_device(name);
}

TrialResult run_trial_on_device(const Solver& s, const Problem& p, TrialTensors& t,
                                const TrialOptions& o) {
  switch (s.device()) {
    case Device::gpu:
      return gpu::run_trial(s, p, t, o);
    case Device::plugin:
      return plugins::run_plugin_trial(s, p, t, o);
    case Device::cpu:
      break;
  }
  return run_trial(s, p, t, o);
}

}  // namespace convguard::probe
