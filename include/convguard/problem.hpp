// The convolution problem: one flat descriptor, the single source of truth. Its fields are
// listed once in visit_fields(), which drives JSON output and hashing; the canonical string
// (canonical.hpp) and the driver's flags map onto the same fields.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convguard/dtype.hpp"
#include "convguard/status.hpp"
#include "convguard/tensor.hpp"

namespace convguard {

enum class Direction { forward, backward_data, backward_weights };
std::string_view to_string(Direction d);  // "fwd", "bwd_data", "bwd_weights"

// Memory order of a tensor. For 3D problems nchw means NCDHW and nhwc means NDHWC, for 1D NCW
// and NWC; for filters nchw means K,C,[D],[R],S and nhwc K,[D],[R],S,C.
enum class Layout { nchw, nhwc };
std::string_view to_string(Layout l, int spatial_dims);  // "NCW", "NCHW", "NDHWC", ...
std::optional<Layout> parse_layout(std::string_view text);

using Dims3 = std::array<std::int64_t, 3>;  // spatial sizes in D, H, W order; D is 1 in 2D

// The largest value any one size, count, stride or padding of a problem may have (2^40). Every
// reader (problem strings, the driver's flags, files) refuses larger values before any arithmetic,
// so products of a few fields cannot overflow 64 bits.
inline constexpr std::int64_t kMaxFieldValue = std::int64_t{1} << 40;
// The largest tensor, in bytes of its memory span (what an allocation needs): 2^48 = 256 TiB,
// above any machine's memory. validate() refuses a problem with a larger tensor, so a span times
// its element size never wraps (a wrapped size once allocated 0 bytes and wrote past them).
inline constexpr std::int64_t kMaxTensorBytes = std::int64_t{1} << 48;

// A 1D problem (spatial_dims 1) has unit D and H: its identity, strings and reports are 1D
// (iw/kw/ow only), while its tensor descriptors are the exact lift to 2D with unit height
// (rank 4, H = 1), the same memory as N,C,W. So every solver written for 2D computes it unchanged,
// verified like any other problem; its explicit strides are written in N,C,W order.
struct Problem {
  int spatial_dims = 2;  // 1, 2 or 3
  std::int64_t g = 1;    // groups; depthwise is g == c == k
  std::int64_t n = 1;
  std::int64_t c = 1;  // input channels (all groups)
  std::int64_t k = 1;  // output channels (all groups)
  Dims3 input{1, 1, 1};
  Dims3 filter{1, 1, 1};
  Dims3 stride{1, 1, 1};
  Dims3 dilation{1, 1, 1};  // 1 is a dense filter; benchdnn's strings print dilation - 1
  Dims3 pad_begin{0, 0, 0};
  // Negative end padding (benchdnn's, e.g. ih2 kh2 sh2 ph1 oh1 has -1) means the last input rows
  // are never read; only output() depends on it, and the output must still be non-empty.
  Dims3 pad_end{0, 0, 0};
  Direction direction = Direction::forward;
  DType dtype = DType::f32;  // storage type of x, w, y; accumulation is always fp32 or wider
  Layout x_layout = Layout::nchw;
  Layout w_layout = Layout::nchw;
  Layout y_layout = Layout::nchw;
  // Explicit element strides in logical order (N,C,[D,][H,]W or K,C/G,[D,][R,]S): 3, 4 or 5
  // entries for 1D, 2D or 3D; empty means dense in the tensor's layout.
  std::vector<std::int64_t> x_strides, w_strides, y_strides;
  std::string name;  // benchdnn's _n"name"; not part of the problem's identity

  std::int64_t output(int dim) const;  // output size along spatial dim 0..2 (D, H, W)
  Dims3 output_dims() const;
  std::int64_t taps() const { return filter[0] * filter[1] * filter[2]; }
  // How many input positions one window spans along spatial dim 0..2: (filter - 1) * dilation + 1.
  std::int64_t filter_extent(int dim) const { return (filter[dim] - 1) * dilation[dim] + 1; }
  std::int64_t c_per_group() const { return c / g; }
  std::int64_t k_per_group() const { return k / g; }
  bool is_depthwise() const { return g == c && g == k; }
  // Multiply-adds * 2 of the direction (all three directions cost the same).
  double flops() const;
  // How many products are summed into one output element; drives the verification tolerance.
  std::int64_t reduction_length() const;
  // Input/output roles: the tensor written by this direction.
  bool writes_x() const { return direction == Direction::backward_data; }
  bool writes_w() const { return direction == Direction::backward_weights; }
  bool writes_y() const { return direction == Direction::forward; }
};

bool operator==(const Problem& a, const Problem& b);  // ignores name

// The first of D, H, W (0..2) that is a dimension of p: 2 in 1D, 1 in 2D, 0 in 3D.
inline int first_spatial(const Problem& p) {
  return 3 - p.spatial_dims;
}

// The tensor p's direction writes: y (forward), x (dx, backward-data) or w (dw, backward-weights).
inline const TensorView& output_of(const Problem& p, const ConvTensors& t) {
  return p.writes_x() ? t.x : p.writes_w() ? t.w : t.y;
}

// Visits every identity field as (name, value) in a fixed order. Used for JSON and hashing.
template <class F>
void visit_fields(const Problem& p, F&& f) {
  f("spatial_dims", std::int64_t{p.spatial_dims});
  f("g", p.g);
  f("n", p.n);
  f("c", p.c);
  f("k", p.k);
  static constexpr const char* dn[3] = {"d", "h", "w"};
  for (int i = 0; i < 3; ++i) f((std::string("in_") + dn[i]).c_str(), p.input[i]);
  for (int i = 0; i < 3; ++i) f((std::string("filter_") + dn[i]).c_str(), p.filter[i]);
  for (int i = 0; i < 3; ++i) f((std::string("stride_") + dn[i]).c_str(), p.stride[i]);
  for (int i = 0; i < 3; ++i) f((std::string("dilation_") + dn[i]).c_str(), p.dilation[i]);
  for (int i = 0; i < 3; ++i) f((std::string("pad_begin_") + dn[i]).c_str(), p.pad_begin[i]);
  for (int i = 0; i < 3; ++i) f((std::string("pad_end_") + dn[i]).c_str(), p.pad_end[i]);
  f("direction", static_cast<std::int64_t>(p.direction));
  f("dtype", static_cast<std::int64_t>(p.dtype));
  f("x_layout", static_cast<std::int64_t>(p.x_layout));
  f("w_layout", static_cast<std::int64_t>(p.w_layout));
  f("y_layout", static_cast<std::int64_t>(p.y_layout));
}

// Rejects problems a convolution cannot be defined for; the message names the field.
[[nodiscard]] Status validate(const Problem& p);

// Tensor descriptors of the problem (from its layouts or explicit strides): rank 4 for 1D and
// 2D problems, 5 for 3D.
TensorDesc x_desc(const Problem& p);
TensorDesc w_desc(const Problem& p);
TensorDesc y_desc(const Problem& p);
// The descriptor of the tensor p's direction writes (y, dx or dw).
inline TensorDesc output_desc(const Problem& p) {
  return p.writes_x() ? x_desc(p) : p.writes_w() ? w_desc(p) : y_desc(p);
}

// A transposed convolution (PyTorch ConvTranspose, MIOpenDriver -m trans): `in_channels`
// inputs of `input` size to `out_channels` outputs. Its forward pass is exactly the
// backward-data pass of the ordinary convolution with the channel counts swapped whose input is
// the transposed convolution's output; output_padding extends that output at the end. Its
// backward-data pass is that ordinary convolution's forward pass, its backward-weights pass
// that convolution's backward-weights pass with x and dy exchanged.
struct TransposedConv {
  int spatial_dims = 2;
  std::int64_t g = 1, n = 1, in_channels = 1, out_channels = 1;
  Dims3 input{1, 1, 1}, filter{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};
  Dims3 output_padding{0, 0, 0};
  Direction direction = Direction::forward;
  DType dtype = DType::f32;
};
[[nodiscard]] Result<Problem> problem_from_transposed(const TransposedConv& t);

}  // namespace convguard
