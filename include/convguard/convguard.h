/* convguard's C API: the same calls as include/convguard/context.hpp for other languages.
 * Every function returns 0 on success; on failure a non-zero code and a message in `msg`.
 * Problems are canonical strings (docs/problem-strings.md); tensors are buffers laid out as the
 * problem's layouts say (dense NCHW unless --stag/--wtag/--dtag/--strides say otherwise). */
#ifndef CONVGUARD_H
#define CONVGUARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cg_context cg_context;
typedef struct cg_plan cg_plan;

/* device: "cpu", a GPU ("cuda:0": tensors are then device pointers) or a plugin's device ("hip:0");
 * db_path: NULL for the default database. */
int cg_context_open(const char* device, const char* db_path, cg_context** out, char* msg, size_t msg_len);
/* Flags of cg_context_open_ex. CG_PROBE_UNKNOWN: a problem with no evidence on this device is
 * probed (every solver, each in a sandboxed worker process, recorded) before a solver is chosen. */
#define CG_PROBE_UNKNOWN 1u
/* CG_ALLOW_TF32: f32 problems may run on TF32 variants (ids ending in ":tf32"). */
#define CG_ALLOW_TF32 2u
int cg_context_open_ex(const char* device, const char* db_path, unsigned flags, cg_context** out,
                       char* msg, size_t msg_len);
void cg_context_close(cg_context* ctx);

int cg_plan_create(cg_context* ctx, const char* problem, cg_plan** out, char* msg, size_t msg_len);
const char* cg_plan_solver(const cg_plan* plan); /* the chosen solver's id */
const char* cg_plan_why(const cg_plan* plan);    /* why it was chosen */
uint64_t cg_plan_workspace_bytes(const cg_plan* plan);
/* x, w, y: the convolution's tensors (which are read and which written depends on the
 * problem's direction, as in MIOpen: forward writes y, backward-data x, backward-weights w). */
int cg_plan_run(cg_plan* plan, void* x, void* w, void* y, char* msg, size_t msg_len);
void cg_plan_destroy(cg_plan* plan);

#ifdef __cplusplus
}
#endif

#endif /* CONVGUARD_H */
