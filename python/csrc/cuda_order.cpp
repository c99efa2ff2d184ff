#include "cuda_order.hpp"

#ifdef CONVGUARD_TORCH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace convguard::torch_ext {

#ifdef CONVGUARD_TORCH_CUDA
struct CudaOrder::State {
  c10::cuda::CUDAGuard device;
  c10::cuda::CUDAStream current, legacy;
  State(c10::DeviceIndex d)
      : device(d),
        current(c10::cuda::getCurrentCUDAStream(d)),
        legacy(c10::cuda::getDefaultCUDAStream(d)) {}
};

CudaOrder::CudaOrder(const at::Tensor& t) {
  if (!t.is_cuda()) return;
  state_ = std::make_unique<State>(t.get_device());
  if (state_->current == state_->legacy) return;
  at::cuda::CUDAEvent ready;
  ready.record(state_->current);
  ready.block(state_->legacy);
}

CudaOrder::~CudaOrder() {
  if (!state_ || state_->current == state_->legacy) return;
  at::cuda::CUDAEvent done;
  done.record(state_->legacy);
  done.block(state_->current);
}
#else
struct CudaOrder::State {};
CudaOrder::CudaOrder(const at::Tensor&) {}
CudaOrder::~CudaOrder() = default;
#endif

}  // namespace convguard::torch_ext
