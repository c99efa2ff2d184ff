// Stream order for CUDA tensors. convguard's GPU solvers and plugins launch on the legacy default
// stream; PyTorch's work runs on its current stream, which is that same stream unless the caller
// chose another (torch.cuda.stream(...)). Then an event makes the default stream wait for the
// current one before the convolution, and the current one wait for the default one after it: no
// host synchronisation, no copy, and the default case costs nothing.
#pragma once

#include <ATen/ATen.h>

#include <memory>

namespace convguard::torch_ext {

class CudaOrder {
 public:
  // No-op for CPU tensors and in builds without CUDA.
  explicit CudaOrder(const at::Tensor& t);
  ~CudaOrder();
  CudaOrder(const CudaOrder&) = delete;
  CudaOrder& operator=(const CudaOrder&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace convguard::torch_ext
