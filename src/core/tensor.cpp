#include "convguard/tensor.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <numeric>

#include "core/host_buffer.hpp"

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
  data_.reset(allocate_host_buffer(rounded / 64 * 64 + 2 * kGuardBytes));
  if (!data_) throw std::bad_alloc();  // callers turn it into status oom, never a crash
  fill_guard_zones(data_.get(), bytes_);
}

bool HostTensor::guards_intact() const {
  return !data_ || guard_zones_intact(data_.get(), bytes_);
}

namespace {
// Guard zone byte i (which 0: before the data, 1: after): a pattern no fill or poison writes.
unsigned char guard_byte(std::size_t i, int which) {
  return static_cast<unsigned char>(0xA5 ^ (i * 7) ^ (which * 0x3C));
}
}  // namespace

void fill_guard_zones(void* base, std::size_t bytes) {
  auto* b = static_cast<unsigned char*>(base);
  for (std::size_t i = 0; i < kGuardZoneBytes; ++i) {
    b[i] = guard_byte(i, 0);
    b[kGuardZoneBytes + bytes + i] = guard_byte(i, 1);
  }
}

bool guard_zones_intact(const void* base, std::size_t bytes) {
  const auto* b = static_cast<const unsigned char*>(base);
  for (std::size_t i = 0; i < kGuardZoneBytes; ++i)
    if (b[i] != guard_byte(i, 0) || b[kGuardZoneBytes + bytes + i] != guard_byte(i, 1))
      return false;
  return true;
}

}  // namespace convguard
