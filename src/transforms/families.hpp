// The transform families, one file each. A factory takes the text between the parentheses of
// the id (tile(32x32) gives "32x32") and the inner solver, and says what is wrong with the
// parameters when they do not parse (the message names the transform).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "transforms/transform.hpp"

namespace convguard::transforms {

// Each family's factory has this signature: `FactoryFn make_tile;` declares one.
using FactoryFn = Result<std::unique_ptr<TransformSolver>>(std::string_view params,
                                                           const Solver& inner,
                                                           MemoryFactory memory);
using Factory = FactoryFn*;

// tile(HxW) or tile(DxHxW): spatial tiles whose inner problems' inputs are at most that large
// (halo and zero padding included). Forward and backward-weights split the output; backward-data
// splits dx, each tile with every dy element that reaches it; backward-weights adds the tiles' dw.
FactoryFn make_tile;
// pad_channels(c+N,k+N,c%N,k%N, any of them): zero input channels / zero filters added per group
// (N more, or up to a multiple of N); the extra output channels are dropped.
FactoryFn make_pad_channels;
// pad_spatial(%N): zero rows/columns (and planes) appended so every input size is a multiple of
// N; the output is cropped to the exact result. The problem's own padding is kept.
FactoryFn make_pad_spatial;
// relayout(nhwc) / relayout(nchw): the inner solver sees all three tensors in that layout
// (NDHWC / NCDHW in 3D).
FactoryFn make_relayout;
// split_batch(N): at most N images per inner problem (backward-weights adds the parts' dw).
FactoryFn make_split_batch;
// split_groups(G): at most G groups per inner problem (1: every group a dense convolution).
FactoryFn make_split_groups;

// A positive integer parameter; the error names the transform and the text.
Result<std::int64_t> parse_count(std::string_view text, std::string_view what);

}  // namespace convguard::transforms
