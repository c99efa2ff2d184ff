/* convguard plugin ABI: solvers in a shared object, loaded with dlopen. Plain C so that vendor
 * wrappers (cuDNN, MIOpen) and test plugins can be built with any compiler; versioned so that a
 * plugin built against another ABI is refused with a message instead of misread.
 *
 * A plugin exports one function, convguard_plugin(), returning a static table. Every call is made
 * in a probe worker process (a plugin may hang or crash; that is what the sandbox is for). */
#ifndef CONVGUARD_PLUGIN_H
#define CONVGUARD_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2 added `device` and `describe` at the end of cg_plugin and the tensor strides at the end of
 * cg_problem; 3 added `device_api` (a device the plugin drives itself); 4 added `prepare` (a
 * compile step timed apart from the run). Plugins built for 1 to 3 still load (1 as CPU plugins
 * without a description). */
#define CONVGUARD_PLUGIN_ABI_VERSION 4u

/* Mirrors convguard::Problem (spatial arrays in D, H, W order; D is 1 in 2D; dilation 1-based).
 * spatial_dims is 2 or 3: a 1D problem is given as its exact lift to 2D with unit height.
 * direction: 0 forward, 1 backward-data, 2 backward-weights. dtype: 0 f32, 1 f16, 2 bf16. */
typedef struct cg_problem {
  int32_t spatial_dims;
  int64_t g, n, c, k;
  int64_t input[3], filter[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
  int32_t direction;
  int32_t dtype;
  /* ABI 2: the tensors' element strides in logical order (N, C, [D,] H, W for x and y; K, C/G,
   * [D,] R, S for w), so check() and workspace_bytes() can see the layout run() will get. */
  int64_t x_strides[5], w_strides[5], y_strides[5];
} cg_problem;

/* A tensor: logical dims (N, C, [D,] H, W or K, C/G, [D,] R, S) and element strides. */
typedef struct cg_tensor {
  void* data;
  int32_t dtype;
  int32_t rank;
  int64_t dims[5];
  int64_t strides[5];
} cg_tensor;

/* Return codes. */
#define CG_OK 0
#define CG_NOT_APPLICABLE 1 /* check(): message says why */
#define CG_ERROR 2          /* run(): message says what failed */
#define CG_OUT_OF_MEMORY 3
#define CG_DEVICE_LOST                                                       \
  4 /* run() or a device call: the device context is unusable (a GPU fault); \
     * the probe replaces its worker after recording the trial */

/* A solver's arithmetic is not described by the ABI: convguard verifies plugin solvers with the
 * tolerance of an unknown summation order. One convention in the id: an id ending in ":tf32"
 * computes f32 problems with operands rounded to TF32 (10 mantissa bits); it is verified with
 * that rounding allowed and selected only where the caller allows TF32. */
typedef struct cg_solver {
  const char* id; /* "<plugin>:<name>", stable */
  int (*check)(const cg_problem* p, char* message, size_t message_len);
  uint64_t (*workspace_bytes)(const cg_problem* p);
  int (*run)(const cg_problem* p, const cg_tensor* x, const cg_tensor* w, const cg_tensor* y,
             void* workspace, uint64_t workspace_bytes, char* message, size_t message_len);
} cg_solver;

/* ABI 3: a device that the plugin drives itself, through a runtime it loads (an AMD GPU through
 * the HIP runtime, for MIOpen). A probe worker started with --device <name>:<index> opens it, and
 * the trial stages the host test data through these calls; solvers of the plugin then get
 * pointers that alloc() returned. Every call returns CG_OK or an error code with a message. */
typedef struct cg_device_api {
  const char* name;   /* "hip": devices are named "hip:0", "hip:1", ... */
  int (*count)(void); /* devices present (0 when none or the runtime is missing) */
  /* Makes `index` current. description: for people ("hip:0: gfx1010 ..."); fingerprint: every
   * fact that can change a result (arch, CU count, runtime and library versions). */
  int (*open)(int index, char* description, size_t description_len, char* fingerprint,
              size_t fingerprint_len);
  int (*alloc)(void** p, uint64_t bytes, char* message, size_t message_len);
  void (*release)(void* p);
  /* to_device 1: host src to device dst; 0: device src to host dst. Synchronous. */
  int (*copy)(void* dst, const void* src, uint64_t bytes, int to_device, char* message,
              size_t message_len);
  int (*fill_bytes)(void* p, int value, uint64_t bytes, char* message, size_t message_len);
  /* Waits for all work on the device; CG_DEVICE_LOST for a fault that poisons the context. */
  int (*synchronize)(char* message, size_t message_len);
} cg_device_api;

typedef struct cg_plugin {
  uint32_t abi_version; /* CONVGUARD_PLUGIN_ABI_VERSION the plugin was built with */
  const char* name;
  /* CG_OK when the plugin can run here (libraries found, device present); else why not. */
  int (*available)(char* message, size_t message_len);
  uint64_t solver_count;
  const cg_solver* solvers;
  /* ABI 2: where tensors passed to run() live: CG_DEVICE_CPU (host memory) or CG_DEVICE_GPU
   * (device memory of the worker's current GPU; run() may return before the GPU finishes, on the
   * default stream). */
  int32_t device;
  /* ABI 2, may be NULL: the vendor library and version actually loaded ("cuDNN 9.14.0 from
   * /usr/lib/..."); part of the device fingerprint, so an upgrade starts fresh evidence. */
  const char* (*describe)(void);
  /* ABI 3, NULL unless device == CG_DEVICE_PLUGIN. */
  const cg_device_api* device_api;
  /* ABI 4, may be NULL: solver `solver_index`'s one-time preparation for p (MIOpen: compiling its
   * kernels, seconds to minutes the first time, then found in the kernel cache). A probe worker
   * calls it after check() accepts p and before the first run, under a deadline of its own (the
   * run's deadline starts after it), so a slow compile is never taken for a hang. run() must work
   * without it (the driver never calls it). CG_OK, CG_NOT_APPLICABLE, or an error code. */
  int (*prepare)(uint64_t solver_index, const cg_problem* p, char* message, size_t message_len);
} cg_plugin;

#define CG_DEVICE_CPU 0
#define CG_DEVICE_GPU 1    /* the CUDA/HIP device convguard's own GPU backend drives */
#define CG_DEVICE_PLUGIN 2 /* the plugin's own device_api */

typedef const cg_plugin* (*cg_plugin_entry)(void);
#define CONVGUARD_PLUGIN_ENTRY "convguard_plugin"

#ifdef __cplusplus
}
#endif

#endif /* CONVGUARD_PLUGIN_H */
