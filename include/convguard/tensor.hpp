// Tensor descriptors and views. Every tensor is addressed by its logical index
// (N, C, [D,] H, W for activations; K, C/G, [D,] R, S for filters) and explicit element
// strides, so layouts (NCHW, NHWC, NCDHW, NDHWC) and arbitrary strides are one mechanism.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "convguard/dtype.hpp"

namespace convguard {

struct TensorDesc {
  DType dtype = DType::f32;
  int rank = 4;                           // 4 (2D problems) or 5 (3D problems)
  std::array<std::int64_t, 5> dims{};     // logical order
  std::array<std::int64_t, 5> strides{};  // elements, same order as dims

  std::int64_t elements() const;
  // One past the largest element offset: the buffer size a tensor with these strides needs.
  std::int64_t span() const;
  std::int64_t offset_of(const std::int64_t* index) const;
  bool is_dense() const;  // no gaps (strides a permutation of a packed layout)
};

struct TensorView {
  void* data = nullptr;
  TensorDesc desc;
};

// The three tensors of a convolution, named as in MIOpen. Which are read and which is written
// depends on the direction: forward reads x,w writes y; backward-data reads y (dy), w and writes
// x (dx); backward-weights reads x, y (dy) and writes w (dw).
struct ConvTensors {
  TensorView x, w, y;
};

// An owned, 64-byte-aligned host buffer sized for a descriptor's span.
class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(const TensorDesc& desc);
  TensorView view() { return {data_.get(), desc_}; }
  const TensorDesc& desc() const { return desc_; }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  TensorDesc desc_;
  std::size_t bytes_ = 0;
};

}  // namespace convguard
