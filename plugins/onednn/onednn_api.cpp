#include "onednn_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace convguard_onednn {
namespace {

bool resolve(Api& a) {
#define CG_DNNL_RESOLVE(name)                                       \
  a.name = reinterpret_cast<decltype(a.name)>(dlsym(a.lib, #name)); \
  if (!a.name) {                                                    \
    a.error = a.path + ": no symbol " #name;                        \
    return false;                                                   \
  }
  CG_DNNL_RESOLVE(dnnl_version)
  CG_DNNL_RESOLVE(dnnl_status2str)
  CG_DNNL_RESOLVE(dnnl_engine_create)
  CG_DNNL_RESOLVE(dnnl_stream_create)
  CG_DNNL_RESOLVE(dnnl_stream_wait)
  CG_DNNL_RESOLVE(dnnl_memory_desc_init_by_strides)
  CG_DNNL_RESOLVE(dnnl_memory_desc_init_by_tag)
  CG_DNNL_RESOLVE(dnnl_memory_desc_equal)
  CG_DNNL_RESOLVE(dnnl_memory_desc_get_size)
  CG_DNNL_RESOLVE(dnnl_dilated_convolution_forward_desc_init)
  CG_DNNL_RESOLVE(dnnl_dilated_convolution_backward_data_desc_init)
  CG_DNNL_RESOLVE(dnnl_dilated_convolution_backward_weights_desc_init)
  CG_DNNL_RESOLVE(dnnl_primitive_attr_create)
  CG_DNNL_RESOLVE(dnnl_primitive_attr_destroy)
  CG_DNNL_RESOLVE(dnnl_primitive_attr_set_scratchpad_mode)
  CG_DNNL_RESOLVE(dnnl_primitive_attr_set_fpmath_mode)
  CG_DNNL_RESOLVE(dnnl_primitive_desc_create)
  CG_DNNL_RESOLVE(dnnl_primitive_desc_iterator_create)
  CG_DNNL_RESOLVE(dnnl_primitive_desc_iterator_next)
  CG_DNNL_RESOLVE(dnnl_primitive_desc_iterator_fetch)
  CG_DNNL_RESOLVE(dnnl_primitive_desc_iterator_destroy)
  CG_DNNL_RESOLVE(dnnl_primitive_desc_query)
  CG_DNNL_RESOLVE(dnnl_primitive_desc_query_md)
  CG_DNNL_RESOLVE(dnnl_primitive_desc_destroy)
  CG_DNNL_RESOLVE(dnnl_reorder_primitive_desc_create)
  CG_DNNL_RESOLVE(dnnl_primitive_create)
  CG_DNNL_RESOLVE(dnnl_primitive_execute)
  CG_DNNL_RESOLVE(dnnl_primitive_destroy)
  CG_DNNL_RESOLVE(dnnl_memory_create)
  CG_DNNL_RESOLVE(dnnl_memory_set_data_handle)
  CG_DNNL_RESOLVE(dnnl_memory_destroy)
#undef CG_DNNL_RESOLVE
  const dnnl_version_t* v = a.dnnl_version();
  if (!v || v->major != DNNL_VERSION_MAJOR) {
    a.error = a.path + ": oneDNN " + (v ? std::to_string(v->major) : std::string("?")) +
              ".x; this plugin speaks the oneDNN " + std::to_string(DNNL_VERSION_MAJOR) +
              ".x C API";
    return false;
  }
  return true;
}

}  // namespace

Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string candidate = "libdnnl.so.2";
    if (const char* e = std::getenv("CONVGUARD_DNNL_PATH"); e && *e) {
      const std::string s(e);
      candidate = s.find(".so") != std::string::npos ? s : s + "/libdnnl.so.2";
    }
    a.lib = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!a.lib) {
      const char* why = dlerror();
      a.error = candidate + " not found (" + (why ? why : "dlopen failed") +
                "; install libdnnl2 or set CONVGUARD_DNNL_PATH)";
      return;
    }
    char where[4096] = {};
    a.path = dlinfo(a.lib, RTLD_DI_ORIGIN, where) == 0 && candidate.find('/') == std::string::npos
                 ? std::string(where) + "/" + candidate
                 : candidate;
    if (resolve(a)) return;
    dlclose(a.lib);
    a.lib = nullptr;
  });
  return a;
}

const std::string& describe_library() {
  static const std::string d = [] {
    Api& a = api();
    if (!a.lib) return std::string("oneDNN not loaded");
    const dnnl_version_t* v = a.dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + " (" + a.path + ")";
  }();
  return d;
}

std::string status_text(dnnl_status_t s) {
  const char* t = api().dnnl_status2str ? api().dnnl_status2str(s) : nullptr;
  return t ? t : "status " + std::to_string(static_cast<int>(s));
}

dnnl_engine_t engine() {
  static dnnl_engine_t e = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    if (api().lib && api().dnnl_engine_create(&e, dnnl_cpu, 0) != dnnl_success) e = nullptr;
  });
  return e;
}

dnnl_stream_t stream() {
  static dnnl_stream_t s = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    if (engine() &&
        api().dnnl_stream_create(&s, engine(), dnnl_stream_default_flags) != dnnl_success)
      s = nullptr;
  });
  return s;
}

}  // namespace convguard_onednn
