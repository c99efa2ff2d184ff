// .npy files loaded into a tensor (driver --load-dir): any bytes are loaded into the tensor or
// refused with a message; the header is bounded and parsed as a dict, never searched as text.
#include "npy.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

#include "convguard/tensor.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz_input_file("npy", data, size);
  if (path.empty()) return 0;
  // A 2x3x4x5 tensor (a 2D problem's) or a 2x3x5 one (a 1D problem's, held with a unit H), f32
  // or f16, by the first byte: the shapes the fuzzer's headers must match.
  convguard::TensorDesc d;
  d.rank = 4;
  d.dtype = size > 0 && (data[0] & 1) ? convguard::DType::f16 : convguard::DType::f32;
  const int spatial_dims = size > 0 && (data[0] & 2) ? 1 : 2;
  const std::int64_t dims[4] = {2, 3, spatial_dims == 1 ? 1 : 4, 5};
  std::int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    d.dims[i] = dims[i];
    d.strides[i] = stride;
    stride *= dims[i];
  }
  convguard::HostTensor t(d);
  auto st = convguard::cli::load_npy(path, t.view(), spatial_dims);
  if (!st && st.message().empty()) __builtin_trap();
  return 0;
}
