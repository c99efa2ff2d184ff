// One convolution problem in oneDNN's terms: which implementations its primitive-descriptor
// iterator offers, and one of them prepared (primitive descriptor, primitive, reorders) and run.
//
// Two layout variants of every implementation:
//   caller: the caller's tensors as they are (their strides forced on oneDNN; no reorders). Only
//           implementations that read plain layouts apply (gemm, ref, some jit for NHWC).
//   any:    oneDNN picks its preferred (blocked) layouts (format_tag any); run() reorders the
//           inputs from the caller's layout and the output back, inside the timed call, because
//           that is what a caller holding plain tensors pays. It declines where every preferred
//           layout is the caller's own (then it is the caller variant again).
// Both directions of backward get the forward primitive descriptor oneDNN asks for as a hint.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "convguard/plugin.h"

namespace convguard_onednn {

enum class Variant { caller, any };

// The implementation name as a solver-id segment: impl_info_str with every character outside
// [A-Za-z0-9_.-] made '_' ("x64:gemm:jit" -> "x64_gemm_jit").
std::string sanitized(const char* impl_info);

// The implementations oneDNN offers for p in variant v, sanitized, in the iterator's order (its
// own preference), direct algorithm before Winograd; empty with `why` set when none.
std::vector<std::string> offered(const cg_problem& p, Variant v, std::string& why);

class Prepared;  // opaque: onednn_conv.cpp

// Implementation `impl` of p in variant v, built once per (problem, strides, variant, impl,
// thread count) and cached for the life of the process (run() is then a few library calls).
// Never null; error() says why it cannot run.
const Prepared& prepare(const cg_problem& p, Variant v, const std::string& impl);

const std::string& error_of(const Prepared& prep);
// Bytes run() needs: oneDNN's scratchpad and, in the any variant, the reordered tensors.
std::uint64_t workspace_of(const Prepared& prep);
// Runs the prepared convolution on the caller's tensors; CG_OK or CG_ERROR with a message.
int execute(const Prepared& prep, const cg_tensor* x, const cg_tensor* w, const cg_tensor* y,
            void* workspace, std::uint64_t workspace_bytes, char* msg, std::size_t len);

}  // namespace convguard_onednn
