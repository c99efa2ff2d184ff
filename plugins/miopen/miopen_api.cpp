#include "miopen_api.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace convguard_miopen {
namespace {

void* open_first(const char* env, const std::vector<std::string>& names, std::string& path,
                 std::string& tried) {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv(env); p && *p) candidates.emplace_back(p);
  std::vector<std::string> dirs;
  if (const char* r = std::getenv("ROCM_PATH"); r && *r) dirs.push_back(std::string(r) + "/lib/");
  dirs.push_back("/opt/rocm/lib/");
  dirs.push_back("");  // the loader path
  for (const auto& d : dirs) {
    for (const auto& n : names) candidates.push_back(d + n);
  }
  for (const auto& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = c;
      return h;
    }
    tried += (tried.empty() ? "" : ", ") + c;
  }
  return nullptr;
}

// The libamdhip64 that libMIOpen itself links against: the DT_NEEDED entry of the loaded
// libMIOpen that names it, and the object the dynamic loader loaded for that name
// (RTLD_NOLOAD finds it, it never loads another). nullptr, with why, when that cannot be
// established. CONVGUARD_HIP_PATH, when set, must name that same file.
void* linked_hip(void* miopen, const std::string& miopen_path, std::string& path,
                 std::string& why) {
  link_map* lm = nullptr;
  if (dlinfo(miopen, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_ld) {
    why = "cannot read " + miopen_path + "'s dynamic section to find the HIP runtime it links";
    return nullptr;
  }
  const char* strtab = nullptr;
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_STRTAB) continue;
    // glibc relocates the loaded dynamic section's addresses in place on most targets; where it
    // does not, the entry is still relative to the load address.
    ElfW(Addr) a = d->d_un.d_ptr;
    if (a < lm->l_addr) a += lm->l_addr;
    strtab = reinterpret_cast<const char*>(a);
  }
  std::string needed, names;
  for (const ElfW(Dyn)* d = lm->l_ld; strtab && d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_NEEDED) continue;
    const std::string n = strtab + d->d_un.d_val;
    names += (names.empty() ? "" : ", ") + n;
    if (n.rfind("libamdhip64.so", 0) == 0) needed = n;
  }
  if (needed.empty()) {
    why = "cannot establish which HIP runtime " + miopen_path +
          " uses: it links no libamdhip64 (DT_NEEDED: " + (names.empty() ? "none" : names) +
          "); the plugin takes HIP only from the libMIOpen it loaded (an OpenCL build of MIOpen "
          "is not supported)";
    return nullptr;
  }
  void* hip = dlopen(needed.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  link_map* hm = nullptr;
  if (!hip || dlinfo(hip, RTLD_DI_LINKMAP, &hm) != 0 || !hm) {
    why = "cannot establish which HIP runtime " + miopen_path + " uses: it links " + needed +
          ", which is not loaded in this process";
    return nullptr;
  }
  path = hm->l_name && *hm->l_name ? hm->l_name : needed;
  if (const char* want = std::getenv("CONVGUARD_HIP_PATH"); want && *want) {
    std::error_code ec;
    if (!std::filesystem::equivalent(want, path, ec) || ec) {
      why = "CONVGUARD_HIP_PATH=" + std::string(want) + " is not the HIP runtime " + miopen_path +
            " links against (" + path +
            "); the plugin never loads a second one: unset it, or "
            "point CONVGUARD_MIOPEN_PATH at a libMIOpen built for that runtime";
      return nullptr;
    }
  }
  return hip;
}

template <class F>
bool bind(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

}  // namespace

const Api* load_api(std::string& why) {
  static Api api;
  static std::string error;
  static bool tried = false;
  if (tried) {
    why = error;
    return error.empty() ? &api : nullptr;
  }
  tried = true;
  std::string looked;
  void* mi = open_first("CONVGUARD_MIOPEN_PATH", {"libMIOpen.so.1", "libMIOpen.so"},
                        api.miopen_path, looked);
  if (!mi) {
    error = "MIOpen (libMIOpen) is not installed (tried " + looked + ")";
    why = error;
    return nullptr;
  }
  // HIP is never looked up on its own: a second runtime beside the one libMIOpen loaded (a
  // libamdhip64.so.6 next to a MIOpen built for .so.5) would split one process between two.
  void* hip = linked_hip(mi, api.miopen_path, api.hip_path, error);
  if (!hip) {
    why = error;
    return nullptr;
  }
  std::string missing;
  bind(hip, "hipGetDeviceCount", api.hipGetDeviceCount, missing);
  bind(hip, "hipSetDevice", api.hipSetDevice, missing);
  bind(hip, "hipMalloc", api.hipMalloc, missing);
  bind(hip, "hipFree", api.hipFree, missing);
  bind(hip, "hipMemcpy", api.hipMemcpy, missing);
  bind(hip, "hipMemset", api.hipMemset, missing);
  bind(hip, "hipDeviceSynchronize", api.hipDeviceSynchronize, missing);
  bind(hip, "hipGetLastError", api.hipGetLastError, missing);
  bind(hip, "hipGetErrorString", api.hipGetErrorString, missing);
  bind(hip, "hipRuntimeGetVersion", api.hipRuntimeGetVersion, missing);
  bind(hip, "hipDriverGetVersion", api.hipDriverGetVersion, missing);
  bind(hip, "hipDeviceGetAttribute", api.hipDeviceGetAttribute, missing);
  std::string optional;  // one of the two property calls is enough
  bind(hip, "hipGetDevicePropertiesR0600", api.hipGetDevicePropertiesR0600, optional);
  if (!bind(hip, "hipGetDevicePropertiesR0000", api.hipGetDeviceProperties, optional)) {
    bind(hip, "hipGetDeviceProperties", api.hipGetDeviceProperties, optional);
  }
  if (!api.hipGetDevicePropertiesR0600 && !api.hipGetDeviceProperties) {
    missing += (missing.empty() ? "" : ", ") + std::string("hipGetDeviceProperties");
  }
  bind(mi, "miopenGetVersion", api.miopenGetVersion, missing);
  bind(mi, "miopenGetErrorString", api.miopenGetErrorString, missing);
  bind(mi, "miopenCreate", api.miopenCreate, missing);
  bind(mi, "miopenCreateTensorDescriptor", api.miopenCreateTensorDescriptor, missing);
  bind(mi, "miopenSetTensorDescriptor", api.miopenSetTensorDescriptor, missing);
  bind(mi, "miopenDestroyTensorDescriptor", api.miopenDestroyTensorDescriptor, missing);
  bind(mi, "miopenCreateConvolutionDescriptor", api.miopenCreateConvolutionDescriptor, missing);
  bind(mi, "miopenInitConvolutionNdDescriptor", api.miopenInitConvolutionNdDescriptor, missing);
  bind(mi, "miopenSetConvolutionGroupCount", api.miopenSetConvolutionGroupCount, missing);
  bind(mi, "miopenDestroyConvolutionDescriptor", api.miopenDestroyConvolutionDescriptor, missing);
  const char* dirs[3] = {"Forward", "BackwardData", "BackwardWeights"};
  for (int d = 0; d < 3; ++d) {
    const std::string base = std::string("miopenConvolution") + dirs[d];
    bind(mi, (base + "GetSolutionCount").c_str(), api.count[d], missing);
    bind(mi, (base + "GetSolution").c_str(), api.list[d], missing);
    bind(mi, (base + "GetSolutionWorkspaceSize").c_str(), api.workspace[d], missing);
    bind(mi, (base + "CompileSolution").c_str(), api.compile[d], missing);
    bind(mi, (base + "Immediate").c_str(), api.immediate[d], missing);
  }
  if (!missing.empty()) {
    error = api.miopen_path + " / " + api.hip_path +
            " lack functions the plugin calls (MIOpen older than 2.x immediate mode?): " + missing;
    why = error;
    return nullptr;
  }
  return &api;
}

}  // namespace convguard_miopen
