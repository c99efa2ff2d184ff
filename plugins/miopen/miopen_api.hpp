// The parts of MIOpen's and HIP's C APIs the plugin calls, declared here and resolved with dlsym,
// so the plugin builds without ROCm and loads wherever libMIOpen is. Names, signatures and enum
// values are API facts (miopen.h of MIOpen 2.x/3.x; hip_runtime_api.h of ROCm 5.2, whose values
// later ROCm releases kept); handles are opaque pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace convguard_miopen {

using Handle = void*;      // miopenHandle_t
using TensorDesc = void*;  // miopenTensorDescriptor_t
using ConvDesc = void*;    // miopenConvolutionDescriptor_t

// miopenConvSolution_t (miopen.h): one applicable solution as *GetSolution lists it.
struct ConvSolution {
  float time;                  // ms; negative: a coarse estimate (the immediate-mode fallback's)
  std::size_t workspace_size;  // bytes
  std::uint64_t solution_id;
  int algorithm;  // miopenConvAlgorithm_t
};

// miopenStatus_t
constexpr int kMiopenSuccess = 0, kMiopenStatusNotImplemented = 6;
// miopenDataType_t
constexpr int kMiopenHalf = 0, kMiopenFloat = 1, kMiopenBFloat16 = 5;
// miopenConvolutionMode_t
constexpr int kMiopenConvolution = 0;

// hipError_t values the plugin tells apart.
constexpr int kHipSuccess = 0, kHipErrorOutOfMemory = 2, kHipErrorIllegalAddress = 700,
              kHipErrorLaunchFailure = 719;
// hipMemcpyKind
constexpr int kHipMemcpyHostToDevice = 1, kHipMemcpyDeviceToHost = 2;
// hipDeviceAttribute_t
constexpr int kHipDeviceAttributeMultiprocessorCount = 63;
// Where hipDeviceProp_t keeps gcnArchName (char[256]): the ROCm 6 layout
// (hipGetDevicePropertiesR0600) and the older one (hipGetDeviceProperties of ROCm 5,
// hipGetDevicePropertiesR0000 of ROCm 6). `name` (char[256]) is at offset 0 in both.
constexpr std::size_t kGcnArchNameOffsetR0600 = 1160, kGcnArchNameOffsetR0000 = 396;

struct Api {
  // HIP runtime
  int (*hipGetDeviceCount)(int*) = nullptr;
  int (*hipSetDevice)(int) = nullptr;
  int (*hipMalloc)(void**, std::size_t) = nullptr;
  int (*hipFree)(void*) = nullptr;
  int (*hipMemcpy)(void*, const void*, std::size_t, int) = nullptr;
  int (*hipMemset)(void*, int, std::size_t) = nullptr;
  int (*hipDeviceSynchronize)() = nullptr;
  int (*hipGetLastError)() = nullptr;
  const char* (*hipGetErrorString)(int) = nullptr;
  int (*hipRuntimeGetVersion)(int*) = nullptr;
  int (*hipDriverGetVersion)(int*) = nullptr;
  int (*hipDeviceGetAttribute)(int*, int, int) = nullptr;
  int (*hipGetDevicePropertiesR0600)(void*, int) = nullptr;  // ROCm 6+
  int (*hipGetDeviceProperties)(void*, int) = nullptr;       // ROCm 5 layout
  // MIOpen
  int (*miopenGetVersion)(std::size_t*, std::size_t*, std::size_t*) = nullptr;
  const char* (*miopenGetErrorString)(int) = nullptr;
  int (*miopenCreate)(Handle*) = nullptr;
  int (*miopenCreateTensorDescriptor)(TensorDesc*) = nullptr;
  int (*miopenSetTensorDescriptor)(TensorDesc, int, int, const int*, const int*) = nullptr;
  int (*miopenDestroyTensorDescriptor)(TensorDesc) = nullptr;
  int (*miopenCreateConvolutionDescriptor)(ConvDesc*) = nullptr;
  int (*miopenInitConvolutionNdDescriptor)(ConvDesc, int, const int*, const int*, const int*,
                                           int) = nullptr;
  int (*miopenSetConvolutionGroupCount)(ConvDesc, int) = nullptr;
  int (*miopenDestroyConvolutionDescriptor)(ConvDesc) = nullptr;
  // Per direction. Forward takes (w, x) -> y; backward-data (dy, w) -> dx; backward-weights
  // (dy, x) -> dw. Only *GetSolution asks IsApplicable for every solver; *GetSolutionWorkspaceSize
  // returns 0 without asking for a solver whose MayNeedWorkspace() is false, and *CompileSolution
  // and *Immediate never ask (docs/miopen.md, "What MIOpen checks").
  using CountFn = int (*)(Handle, TensorDesc, TensorDesc, ConvDesc, TensorDesc, std::size_t*);
  using ListFn = int (*)(Handle, TensorDesc, TensorDesc, ConvDesc, TensorDesc, std::size_t,
                         std::size_t*, ConvSolution*);
  using WorkspaceFn = int (*)(Handle, TensorDesc, TensorDesc, ConvDesc, TensorDesc, std::uint64_t,
                              std::size_t*);
  using CompileFn = int (*)(Handle, TensorDesc, TensorDesc, ConvDesc, TensorDesc, std::uint64_t);
  using ImmediateFn = int (*)(Handle, TensorDesc, const void*, TensorDesc, const void*, ConvDesc,
                              TensorDesc, void*, void*, std::size_t, std::uint64_t);
  CountFn count[3] = {};
  ListFn list[3] = {};
  WorkspaceFn workspace[3] = {};
  CompileFn compile[3] = {};
  ImmediateFn immediate[3] = {};

  std::string miopen_path, hip_path;
};

// Loads libMIOpen (CONVGUARD_MIOPEN_PATH, a file, then $ROCM_PATH/lib, /opt/rocm/lib, then the
// loader path) and takes the HIP runtime from it: the libamdhip64 that libMIOpen links against,
// already loaded with it, never one looked up independently. Returns nullptr and says why in `why`.
const Api* load_api(std::string& why);

}  // namespace convguard_miopen
