// NumPy .npy files (format 1.0), so a run's tensors can be reproduced or compared with another
// framework: arrays in logical shape, C order, whatever the tensor's memory layout; fp32 and
// fp16 as those dtypes, bf16 as float32 values (NumPy has no bfloat16).
#pragma once

#include <string>

#include "convguard/status.hpp"
#include "convguard/tensor.hpp"

namespace convguard::cli {

// spatial_dims: the problem's (1, 2 or 3); a 1D problem's arrays are N,C,W without its unit H.
[[nodiscard]] Status save_npy(const std::string& path, const TensorView& t, int spatial_dims);
// Reads `path` into t (converting to t's dtype); the file's shape must equal t's logical dims and
// its dtype must be the one save_npy writes for t's dtype. Errors name the file.
[[nodiscard]] Status load_npy(const std::string& path, const TensorView& t, int spatial_dims);

}  // namespace convguard::cli
