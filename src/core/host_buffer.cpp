#include "core/host_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>

namespace convguard {

void* allocate_host_buffer(std::size_t bytes) {
  constexpr std::size_t kHuge = std::size_t{2} << 20, kHugeFrom = std::size_t{4} << 20;
  const std::size_t align = bytes >= kHugeFrom ? kHuge : 64;
  std::size_t rounded = 0;
  if (__builtin_add_overflow(bytes == 0 ? 1 : bytes, align - 1, &rounded)) return nullptr;
  rounded = rounded / align * align;
  void* p = std::aligned_alloc(align, rounded);
  // Advice only: a kernel without THP (or a failure) leaves ordinary pages, which are correct.
  if (p && align == kHuge) (void)madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

}  // namespace convguard
