#include "convguard/tensor.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace convguard {

std::int64_t TensorDesc::elements() const {
  std::int64_t e = 1;
  for (int i = 0; i < rank; ++i) e *= dims[i];
  return e;
}

std::int64_t TensorDesc::span() const {
  std::int64_t last = 0;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 0) return 0;
    last += (dims[i] - 1) * strides[i];
  }
  return last + 1;
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
  bytes_ = static_cast<std::size_t>(desc.span()) * size_of(desc.dtype);
  const std::size_t rounded = (std::max<std::size_t>(bytes_, 1) + 63) / 64 * 64;
  data_.reset(std::aligned_alloc(64, rounded));
}

}  // namespace convguard
