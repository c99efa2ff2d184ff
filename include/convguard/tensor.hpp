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

// Guard zones: kGuardZoneBytes of a known pattern on each side of `bytes` bytes that start at
// base + kGuardZoneBytes. HostTensor's buffers and run_trial's workspace have them: a write just
// past (or before) a buffer, the commonest overrun, changes one.
constexpr std::size_t kGuardZoneBytes = 256;
void fill_guard_zones(void* base, std::size_t bytes);
[[nodiscard]] bool guard_zones_intact(const void* base, std::size_t bytes);

// An owned, 64-byte-aligned host buffer sized for a descriptor's span, between two guard zones of
// kGuardBytes filled with a known pattern: run_trial checks them after a solver's runs, so that a
// solver writing just past (or before) a tensor, the commonest overrun, is a wrong result with a
// name instead of silent damage to whatever lies next to it.
class HostTensor {
 public:
  static constexpr std::size_t kGuardBytes = kGuardZoneBytes;
  HostTensor() = default;
  explicit HostTensor(const TensorDesc& desc);
  TensorView view() { return {data(), desc_}; }
  const TensorDesc& desc() const { return desc_; }
  void* data() { return data_ ? static_cast<std::byte*>(data_.get()) + kGuardBytes : nullptr; }
  const void* data() const {
    return data_ ? static_cast<const std::byte*>(data_.get()) + kGuardBytes : nullptr;
  }
  std::size_t bytes() const { return bytes_; }
  // Whether both guard zones still hold their pattern (true for an empty tensor).
  [[nodiscard]] bool guards_intact() const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;  // the allocation, guard zones included
  TensorDesc desc_;
  std::size_t bytes_ = 0;
};

}  // namespace convguard
