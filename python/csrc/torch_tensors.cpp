#include "torch_tensors.hpp"

#include <c10/util/Exception.h>

namespace convguard::torch_ext {

DType dtype_of(const at::Tensor& t, const char* what) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return DType::f32;
    case at::kHalf:
      return DType::f16;
    case at::kBFloat16:
      return DType::bf16;
    default:
      TORCH_CHECK(false, "convguard: ", what, ": dtype ", t.scalar_type(),
                  " is not computed (float32, float16, bfloat16 are)");
  }
}

at::MemoryFormat memory_format(Layout l, int64_t rank) {
  // PyTorch has no channels-last format for 3-dim (1D) tensors; dense() gives them nchw.
  if (l == Layout::nchw || rank == 3) return at::MemoryFormat::Contiguous;
  return rank == 5 ? at::MemoryFormat::ChannelsLast3d : at::MemoryFormat::ChannelsLast;
}

at::Tensor dense(const at::Tensor& t, Layout* layout) {
  const auto suggested = t.suggest_memory_format();
  *layout = suggested == at::MemoryFormat::Contiguous ? Layout::nchw : Layout::nhwc;
  if (t.is_contiguous(suggested)) return t;
  return t.contiguous(suggested);
}

std::string device_name(const at::Tensor& t) {
  if (t.is_cpu()) return "cpu";
#ifdef CONVGUARD_TORCH_CUDA
  if (t.is_cuda()) return "cuda:" + std::to_string(t.get_device());
#else
  TORCH_CHECK(!t.is_cuda(),
              "convguard: a CUDA tensor, but this convguard extension was built "
              "without CUDA (docs/pytorch.md: building with CUDA)");
#endif
  TORCH_CHECK(false, "convguard: tensors on ", t.device(), " are not computed (cpu",
#ifdef CONVGUARD_TORCH_CUDA
              ", cuda",
#endif
              " are)");
}

TensorView view_of(const at::Tensor& t, const TensorDesc& desc) {
  return TensorView{t.data_ptr(), desc};
}

}  // namespace convguard::torch_ext
