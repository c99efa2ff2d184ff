#pragma once
// Host buffers for workspaces and tensors. 64-byte aligned; from 4 MiB up also 2 MiB aligned and
// advised as transparent huge pages (MADV_HUGEPAGE, honoured where the kernel's THP mode is
// "madvise" or "always"), because the AMX kernels load tiles whose 16 rows lie a whole image
// plane apart: on 4 KiB pages each row is its own TLB entry, and a 1x1 layer's steps walk more
// pages than the second-level TLB holds. Free with std::free.
#include <cstddef>

namespace convguard {

// nullptr when out of memory; bytes 0 allocates 64.
[[nodiscard]] void* allocate_host_buffer(std::size_t bytes);

}  // namespace convguard
