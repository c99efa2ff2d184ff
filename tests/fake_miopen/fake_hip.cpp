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

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// What the last kernel left behind: the next synchronising call acts on it.
int g_pending = 0;  // 0 fine, 1 never finishes, 2 faults

}  // namespace

// ---- the simulated GPU (called by the simulated MIOpen only) ----------------------------
EXPORT void fake_hip_launch(int pending) {
  g_pending = pending;
}
EXPORT void fake_hip_settle() {
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
  *n = 1;
  return 0;
}
EXPORT int hipSetDevice(int d) {
  return d == 0 ? 0 : 101;  // hipErrorInvalidDevice
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
  return e == 0 ? "no error" : "simulated error";
}
EXPORT int hipRuntimeGetVersion(int* v) {
  *v = 50731921;  // ROCm 5.7
  return 0;
}
EXPORT int hipDriverGetVersion(int* v) {
  *v = 50731921;
  return 0;
}
EXPORT int hipDeviceGetAttribute(int* v, int attr, int) {
  *v = attr == 63 ? 36 : 0;  // multiprocessors: an RX 5600 XT has 36 CUs
  return 0;
}
EXPORT int hipGetDevicePropertiesR0600(void* prop, int) {
  std::snprintf(static_cast<char*>(prop), 256, "AMD Radeon RX 5600 XT (simulated)");
  std::snprintf(static_cast<char*>(prop) + 1160, 256, "gfx1010 (simulated)");
  return 0;
}
