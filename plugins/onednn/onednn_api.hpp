// oneDNN's C API as the plugin sees it: libdnnl.so.2 opened with dlopen at run time (never linked),
// so convguard builds and runs where oneDNN is absent and the plugin then says why it is
// unavailable. Types and signatures come from oneDNN 2.x's dnnl.h (Debian's libdnnl-dev, needed at
// build time only); a library of another major version is refused, because the v2 operation
// descriptors this plugin builds do not exist in oneDNN 3.
//
// Searched: $CONVGUARD_DNNL_PATH (a file, or a folder holding libdnnl.so.2), then the loader path.
#pragma once

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <string>

namespace convguard_onednn {

struct Api {
  void* lib = nullptr;
  std::string path;   // the file loaded
  std::string error;  // why nothing was loaded
#define CG_DNNL_FN(name) decltype(&::name) name = nullptr;
  CG_DNNL_FN(dnnl_version)
  CG_DNNL_FN(dnnl_status2str)
  CG_DNNL_FN(dnnl_engine_create)
  CG_DNNL_FN(dnnl_stream_create)
  CG_DNNL_FN(dnnl_stream_wait)
  CG_DNNL_FN(dnnl_memory_desc_init_by_strides)
  CG_DNNL_FN(dnnl_memory_desc_init_by_tag)
  CG_DNNL_FN(dnnl_memory_desc_equal)
  CG_DNNL_FN(dnnl_memory_desc_get_size)
  CG_DNNL_FN(dnnl_dilated_convolution_forward_desc_init)
  CG_DNNL_FN(dnnl_dilated_convolution_backward_data_desc_init)
  CG_DNNL_FN(dnnl_dilated_convolution_backward_weights_desc_init)
  CG_DNNL_FN(dnnl_primitive_attr_create)
  CG_DNNL_FN(dnnl_primitive_attr_destroy)
  CG_DNNL_FN(dnnl_primitive_attr_set_scratchpad_mode)
  CG_DNNL_FN(dnnl_primitive_attr_set_fpmath_mode)
  CG_DNNL_FN(dnnl_primitive_desc_create)
  CG_DNNL_FN(dnnl_primitive_desc_iterator_create)
  CG_DNNL_FN(dnnl_primitive_desc_iterator_next)
  CG_DNNL_FN(dnnl_primitive_desc_iterator_fetch)
  CG_DNNL_FN(dnnl_primitive_desc_iterator_destroy)
  CG_DNNL_FN(dnnl_primitive_desc_query)
  CG_DNNL_FN(dnnl_primitive_desc_query_md)
  CG_DNNL_FN(dnnl_primitive_desc_destroy)
  CG_DNNL_FN(dnnl_reorder_primitive_desc_create)
  CG_DNNL_FN(dnnl_primitive_create)
  CG_DNNL_FN(dnnl_primitive_execute)
  CG_DNNL_FN(dnnl_primitive_destroy)
  CG_DNNL_FN(dnnl_memory_create)
  CG_DNNL_FN(dnnl_memory_set_data_handle)
  CG_DNNL_FN(dnnl_memory_destroy)
#undef CG_DNNL_FN
};

// The library, loaded on first use (thread-safe); lib == nullptr and error set when it is missing.
Api& api();

// "oneDNN 2.6.3 (/usr/lib/x86_64-linux-gnu/libdnnl.so.2)": enters the CPU device fingerprint.
const std::string& describe_library();

// oneDNN's name for a status ("unimplemented").
std::string status_text(dnnl_status_t s);

// The CPU engine and an in-order stream of this process, created on first use.
dnnl_engine_t engine();
dnnl_stream_t stream();

}  // namespace convguard_onednn
