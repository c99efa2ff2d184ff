// A simulated HIP runtime, for tests only: the subset of HIP's C API that convguard's MIOpen
// plugin calls, with host memory as device memory, plus the simulated GPU that the simulated
// MIOpen (fake_miopen.cpp) launches its kernels on. Built as libamdhip64.so.5 in a folder of its
// own, and linked by libfake_miopen as the real libMIOpen links the real libamdhip64
// (rocm-5.7.0:src/CMakeLists.txt:742, hip::device), so the plugin's rule "HIP is the one
// libMIOpen links against" is exercised for real (docs/miopen.md, "One HIP runtime").
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// What the last kernel left behind: the next synchronising call acts on it.
int g_pending = 0;  // 0 fine, 1 never finishes, 2 faults
int g_device = 0;   // hipSetDevice's

// Several simulated GPUs, for the probe's one-worker-per-device sweeps (issue 20), set by the
// environment since each worker is its own process:
//   FAKE_HIP_DEVICES=N             N identical GPUs (default 1);
//   FAKE_HIP_DEAD_DEVICES=1,3      these are present but cannot be opened (a GPU off the bus);
//   FAKE_HIP_OTHER_MODEL=2         these are another model (below);
//   FAKE_HIP_FRAGILE_DEVICES=1     these, once they have faulted or hung, cannot be opened again
//                                  (a card that needs a reset): a marker file in
//                                  FAKE_HIP_STATE_DIR tells the next worker.
//   FAKE_HIP_CHANGING_DEVICES=0    these, once they have faulted or hung, come back as the other
//                                  model (a reset that reordered the cards): another fingerprint
//                                  on restart (marker in FAKE_HIP_STATE_DIR).
int device_count() {
  const char* n = std::getenv("FAKE_HIP_DEVICES");
  return n && std::atoi(n) > 0 ? std::atoi(n) : 1;
}
bool listed(const char* variable, int d) {
  const char* list = std::getenv(variable);
  for (char* end = nullptr; list && *list; list = *end ? end + 1 : end) {
    if (std::strtol(list, &end, 10) == d && end != list) return true;
    if (end == list) break;
  }
  return false;
}
// The marker file of a device listed in `variable` ("" if not listed or no state dir).
std::string marker(const char* variable, const char* name, int d) {
  const char* dir = std::getenv("FAKE_HIP_STATE_DIR");
  if (!dir || !*dir || !listed(variable, d)) return {};
  char path[4096];
  std::snprintf(path, sizeof path, "%s/%s-%d", dir, name, d);
  return path;
}
std::string lost_marker(int d) {
  return marker("FAKE_HIP_FRAGILE_DEVICES", "lost", d);
}
std::string changed_marker(int d) {
  return marker("FAKE_HIP_CHANGING_DEVICES", "changed", d);
}
bool other_model(int d) {
  const std::string changed = changed_marker(d);
  return listed("FAKE_HIP_OTHER_MODEL", d) ||
         (!changed.empty() && access(changed.c_str(), F_OK) == 0);
}
bool dead(int d) {
  const std::string marker = lost_marker(d);
  return listed("FAKE_HIP_DEAD_DEVICES", d) ||
         (!marker.empty() && access(marker.c_str(), F_OK) == 0);
}
void mark_lost() {
  for (const std::string& m : {lost_marker(g_device), changed_marker(g_device)})
    if (FILE* f = m.empty() ? nullptr : std::fopen(m.c_str(), "w")) std::fclose(f);
}

}  // namespace

// ---- the simulated GPU (called by the simulated MIOpen only) ----------------------------
EXPORT void fake_hip_launch(int pending) {
  g_pending = pending;
}
EXPORT void fake_hip_settle() {
  if (g_pending != 0) mark_lost();
  if (g_pending == 1) {
    for (;;) pause();  // the GPU never finishes; the host waits forever
  }
  if (g_pending == 2) {
    std::fprintf(stderr,
                 "Memory access fault by GPU node-1 (Agent handle: 0x55d4c8a0e2f0) on address "
                 "0x7f3a1c000000. Reason: Page not present or supervisor privilege.\n");
    std::fflush(stderr);
    std::abort();
  }
}
namespace {
void settle() {
  fake_hip_settle();
}
}  // namespace

// ---- HIP runtime ----------------------------------------------------------------------
EXPORT int hipGetDeviceCount(int* n) {
  *n = device_count();
  return 0;
}
EXPORT int hipSetDevice(int d) {
  if (d < 0 || d >= device_count()) return 101;  // hipErrorInvalidDevice
  if (dead(d)) return 100;                       // hipErrorNoDevice
  g_device = d;
  return 0;
}
EXPORT int hipMalloc(void** p, std::size_t n) {
  *p = std::malloc(n ? n : 1);
  return *p ? 0 : 2;  // hipErrorOutOfMemory
}
EXPORT int hipFree(void* p) {
  std::free(p);
  return 0;
}
EXPORT int hipMemcpy(void* d, const void* s, std::size_t n, int) {
  settle();
  std::memcpy(d, s, n);
  return 0;
}
EXPORT int hipMemset(void* d, int v, std::size_t n) {
  settle();
  std::memset(d, v, n);
  return 0;
}
EXPORT int hipDeviceSynchronize() {
  settle();
  return 0;
}
EXPORT int hipGetLastError() {
  return 0;
}
EXPORT const char* hipGetErrorString(int e) {
  return e == 0     ? "no error"
         : e == 100 ? "no device (simulated: FAKE_HIP_DEAD_DEVICES, or a fragile one after a fault)"
                    : "simulated error";
}
EXPORT int hipRuntimeGetVersion(int* v) {
  *v = 50731921;  // ROCm 5.7
  return 0;
}
EXPORT int hipDriverGetVersion(int* v) {
  *v = 50731921;
  return 0;
}
// FAKE_HIP_OTHER_MODEL=2: device 2 is an RX 5700 XT (40 CUs), another fingerprint beside the
// RX 5600 XTs, as a node with two kinds of card.
EXPORT int hipDeviceGetAttribute(int* v, int attr, int d) {
  // multiprocessors: an RX 5600 XT has 36 CUs, an RX 5700 XT 40
  *v = attr == 63 ? (other_model(d) ? 40 : 36) : 0;
  return 0;
}
EXPORT int hipGetDevicePropertiesR0600(void* prop, int d) {
  std::snprintf(static_cast<char*>(prop), 256, "AMD Radeon RX %s XT (simulated)",
                other_model(d) ? "5700" : "5600");
  std::snprintf(static_cast<char*>(prop) + 1160, 256, "gfx1010 (simulated)");
  return 0;
}
