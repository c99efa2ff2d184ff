#include "convguard/tensor.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <numeric>

namespace convguard {

// Both saturate at INT64_MAX instead of wrapping (validate() keeps valid problems far below it;
// a saturated size makes any allocation of it fail cleanly).
std::int64_t TensorDesc::elements() const {
  std::int64_t e = 1;
  for (int i = 0; i < rank; ++i)
    if (__builtin_mul_overflow(e, dims[i], &e)) return INT64_MAX;
  return e;
}

std::int64_t TensorDesc::span() const {
  std::int64_t last = 0;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 0) return 0;
    std::int64_t step;
    if (__builtin_mul_overflow(dims[i] - 1, strides[i], &step) ||
        __builtin_add_overflow(last, step, &last))
      return INT64_MAX;
  }
  return last == INT64_MAX ? INT64_MAX : last + 1;
}

std::int64_t TensorDesc::offset_of(const std::int64_t* index) const {
  std::int64_t o = 0;
  for (int i = 0; i < rank; ++i) o += index[i] * strides[i];
  return o;
}

bool TensorDesc::is_dense() const {
  return span() == elements();
}

void HostTensor::Free::operator()(void* p) const {
  std::free(p);
}

HostTensor::HostTensor(const TensorDesc& desc) : desc_(desc) {
  // validate() keeps every tensor of a valid problem under kMaxTensorBytes; this check is for
  // descriptors built any other way, so that a wrapped size can never allocate too little.
  const std::int64_t span = desc.span();
  std::size_t bytes = 0, rounded = 0;
  if (span < 0 ||
      __builtin_mul_overflow(static_cast<std::size_t>(span), size_of(desc.dtype), &bytes) ||
      __builtin_add_overflow(std::max<std::size_t>(bytes, 1), std::size_t{63}, &rounded))
    throw std::bad_alloc();
  bytes_ = bytes;
  // The guard after the data starts right at its end, not at the rounded size: a write one
  // element past the span must land in it.
  data_.reset(std::aligned_alloc(64, rounded / 64 * 64 + 2 * kGuardBytes));
  if (!data_) throw std::bad_alloc();  // callers turn it into status oom, never a crash
  auto* base = static_cast<unsigned char*>(data_.get());
  fill_guard(base, 0);
  fill_guard(base + kGuardBytes + bytes_, 1);
}

void HostTensor::fill_guard(unsigned char* at, int which) {
  for (std::size_t i = 0; i < kGuardBytes; ++i) at[i] = guard_byte(i, which);
}

bool HostTensor::guards_intact() const {
  if (!data_) return true;
  const auto* base = static_cast<const unsigned char*>(data_.get());
  for (std::size_t i = 0; i < kGuardBytes; ++i)
    if (base[i] != guard_byte(i, 0) || base[kGuardBytes + bytes_ + i] != guard_byte(i, 1))
      return false;
  return true;
}

}  // namespace convguard
