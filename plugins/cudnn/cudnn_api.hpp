// What the cuDNN plugin's two solver families share: the entry points resolved from the
// dlopen'ed library, the process's cuDNN handle, and small helpers.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <string>
#include <vector>

#include "convguard/plugin.h"

namespace convguard_cudnn {

// The entry points this plugin calls, resolved once.
struct Api {
#define CG_CUDNN_FN(name) decltype(&::name) name = nullptr;
  CG_CUDNN_FN(cudnnGetVersion)
  CG_CUDNN_FN(cudnnGetErrorString)
  CG_CUDNN_FN(cudnnCreate)
  CG_CUDNN_FN(cudnnCreateTensorDescriptor)
  CG_CUDNN_FN(cudnnDestroyTensorDescriptor)
  CG_CUDNN_FN(cudnnSetTensorNdDescriptor)
  CG_CUDNN_FN(cudnnCreateFilterDescriptor)
  CG_CUDNN_FN(cudnnDestroyFilterDescriptor)
  CG_CUDNN_FN(cudnnSetFilterNdDescriptor)
  CG_CUDNN_FN(cudnnCreateConvolutionDescriptor)
  CG_CUDNN_FN(cudnnDestroyConvolutionDescriptor)
  CG_CUDNN_FN(cudnnSetConvolutionNdDescriptor)
  CG_CUDNN_FN(cudnnSetConvolutionGroupCount)
  CG_CUDNN_FN(cudnnSetConvolutionMathType)
  CG_CUDNN_FN(cudnnGetConvolutionForwardWorkspaceSize)
  CG_CUDNN_FN(cudnnGetConvolutionBackwardDataWorkspaceSize)
  CG_CUDNN_FN(cudnnGetConvolutionBackwardFilterWorkspaceSize)
  CG_CUDNN_FN(cudnnConvolutionForward)
  CG_CUDNN_FN(cudnnConvolutionBackwardData)
  CG_CUDNN_FN(cudnnConvolutionBackwardFilter)
  CG_CUDNN_FN(cudnnBackendCreateDescriptor)
  CG_CUDNN_FN(cudnnBackendDestroyDescriptor)
  CG_CUDNN_FN(cudnnBackendSetAttribute)
  CG_CUDNN_FN(cudnnBackendGetAttribute)
  CG_CUDNN_FN(cudnnBackendFinalize)
  CG_CUDNN_FN(cudnnBackendExecute)
  CG_CUDNN_FN(cudnnGetLastErrorString)
#undef CG_CUDNN_FN
  void* lib = nullptr;
  std::string path, error;
};

// The library, loaded once (search order in cudnn_plugin.cpp); api().lib is null when absent and
// api().error says why.
Api& api();
// The cuDNN handle of this process (one worker, one GPU), created on first use; null with `error`.
cudnnHandle_t handle(std::string& error);
void say(char* msg, std::size_t len, const std::string& text);
cudnnDataType_t data_type(int dtype);

// Tensors for check/workspace: check() and workspace_bytes() get no tensors, so the plugin
// builds descriptors (no data) from the problem's dims and its ABI-2 strides.
struct Shapes {
  cg_tensor x{}, w{}, y{};
};
Shapes shapes_of(const cg_problem* p);
// Key of a cached build (descriptors, plans): the problem, its tensors' dims and strides, and the
// variant (`tag`: algorithm and math, or engine). Cached builds make run() cost a few
// microseconds of host time instead of rebuilding descriptors on every call.
std::string cache_key(const cg_problem* p, const Shapes& s, int tag);

// Graph (backend) API engines: `cudnn:<direction>:engine<N>` (cudnn_graph.cpp).
void add_graph_solvers(std::vector<cg_solver>& v);

}  // namespace convguard_cudnn
