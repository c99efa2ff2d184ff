// NumPy .npy files (format 1.0), so a run's tensors can be reproduced or compared with another
// framework: arrays in logical shape, C order, whatever the tensor's memory layout; fp32 and
// fp16 as those dtypes, bf16 as float32 values (NumPy has no bfloat16).
#pragma once

#include <string>

#include "convguard/status.hpp"
#include "convguard/tensor.hpp"

namespace convguard::cli {

[[nodiscard]] Status save_npy(const std::string& path, const TensorView& t);
// Reads `path` into t (converting to t's dtype); the file's shape must equal t's logical dims and
// its dtype must be the one save_npy writes for t's dtype. Errors name the file.
[[nodiscard]] Status load_npy(const std::string& path, const TensorView& t);

}  // namespace convguard::cli
