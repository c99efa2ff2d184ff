#pragma once
// Host buffers for workspaces and tensors, from one place. 64-byte aligned: an AMX tile row is
// 64 bytes, and rows loaded from a malloc'd buffer (16-byte aligned) each span two cache lines;
// on the device host's Emerald Rapids that alone made cpu:bf16_planar:amx_bf16's kernels
// 1.15-1.6x slower (docs/perf.md, session 27). From 4 MiB up also 2 MiB aligned and advised as
// transparent huge pages (MADV_HUGEPAGE, honoured where the kernel's THP mode is "madvise" or
// "always"): the tiles' 16 rows lie an image plane apart, each on its own 4 KiB page. Measured
// against 64-byte alignment on 4 KiB pages, interleaved, the huge pages were worth 1-10% on the
// three layers whose buffers got them, on a busy host: advice, kept because it costs nothing.
// Free with std::free.
#include <cstddef>

namespace convguard {

// nullptr when out of memory; bytes 0 allocates 64.
[[nodiscard]] void* allocate_host_buffer(std::size_t bytes);

}  // namespace convguard
