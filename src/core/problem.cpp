#include "convguard/problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace convguard {

std::string_view to_string(Direction d) {
  switch (d) {
    case Direction::forward:
      return "fwd";
    case Direction::backward_data:
      return "bwd_data";
    case Direction::backward_weights:
      return "bwd_weights";
  }
  return "?";
}

std::string_view to_string(Layout l, int spatial_dims) {
  if (spatial_dims == 3) return l == Layout::nchw ? "NCDHW" : "NDHWC";
  if (spatial_dims == 1) return l == Layout::nchw ? "NCW" : "NWC";
  return l == Layout::nchw ? "NCHW" : "NHWC";
}

std::optional<Layout> parse_layout(std::string_view s) {
  std::string u(s);
  for (auto& ch : u) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (u == "NCHW" || u == "NCDHW" || u == "NCW" || u == "ABX" || u == "KCRS" || u == "KCYX" ||
      u == "OIHW" || u == "OIW")
    return Layout::nchw;
  if (u == "NHWC" || u == "NDHWC" || u == "NWC" || u == "AXB" || u == "KRSC" || u == "KYXC" ||
      u == "OHWI" || u == "OWI")
    return Layout::nhwc;
  return std::nullopt;
}

std::int64_t Problem::output(int d) const {
  const std::int64_t span = input[d] + pad_begin[d] + pad_end[d] - filter_extent(d);
  if (span < 0 || stride[d] <= 0) return 0;
  return span / stride[d] + 1;
}

Dims3 Problem::output_dims() const {
  return {output(0), output(1), output(2)};
}

double Problem::flops() const {
  const Dims3 o = output_dims();
  return 2.0 * static_cast<double>(n) * static_cast<double>(k) *
         static_cast<double>(o[0] * o[1] * o[2]) * static_cast<double>(c_per_group()) *
         static_cast<double>(taps());
}

std::int64_t Problem::reduction_length() const {
  const Dims3 o = output_dims();
  switch (direction) {
    case Direction::forward:
      return c_per_group() * taps();
    case Direction::backward_data: {
      std::int64_t per_dim = 1;  // taps that can reach one input element
      for (int d = 0; d < 3; ++d) per_dim *= (filter[d] + stride[d] - 1) / stride[d];
      return k_per_group() * per_dim;
    }
    case Direction::backward_weights:
      return n * o[0] * o[1] * o[2];
  }
  return 1;
}

bool operator==(const Problem& a, const Problem& b) {
  bool eq = true;
  std::vector<std::int64_t> va, vb;
  visit_fields(a, [&](const char*, std::int64_t v) { va.push_back(v); });
  visit_fields(b, [&](const char*, std::int64_t v) { vb.push_back(v); });
  eq = va == vb;
  return eq && a.x_strides == b.x_strides && a.w_strides == b.w_strides &&
         a.y_strides == b.y_strides;
}

namespace {

constexpr const char* kDimLetter[3] = {"d", "h", "w"};

// The rank of p's descriptors: a 1D problem's are 2D with unit height.
int desc_rank(const Problem& p) {
  return p.spatial_dims == 3 ? 5 : 4;
}

// Explicit strides as the descriptor holds them: a 1D problem's N,C,W strides get a unit H whose
// stride (any value serves a dimension of size 1) is W's span, as in a dense NCHW lift.
std::vector<std::int64_t> desc_strides(const Problem& p, const std::vector<std::int64_t>& s,
                                       std::int64_t w_size) {
  if (p.spatial_dims != 1 || s.size() != 3) return s;
  std::int64_t h = 0;
  if (__builtin_mul_overflow(s[2], w_size, &h)) h = INT64_MAX;
  return {s[0], s[1], std::max<std::int64_t>(h, 1), s[2]};
}

// Dense strides for logical dims (N,C,spatial...) in channels-first or channels-last order.
TensorDesc make_desc(const Problem& p, std::int64_t d0, std::int64_t d1, const Dims3& spatial,
                     Layout layout, const std::vector<std::int64_t>& explicit_strides) {
  TensorDesc t;
  t.dtype = p.dtype;
  t.rank = desc_rank(p);
  t.dims[0] = d0;
  t.dims[1] = d1;
  const int spatial_rank = t.rank - 2, first = 3 - spatial_rank;  // skip D in 1D and 2D
  for (int i = 0; i < spatial_rank; ++i) t.dims[2 + i] = spatial[first + i];
  if (!explicit_strides.empty()) {
    // A 1D problem's N,C,W strides get their unit H; the others are used as they are (no copy).
    std::vector<std::int64_t> lifted;
    if (p.spatial_dims == 1) lifted = desc_strides(p, explicit_strides, spatial[2]);
    const std::vector<std::int64_t>& given = p.spatial_dims == 1 ? lifted : explicit_strides;
    if (static_cast<int>(given.size()) == t.rank) {
      for (int i = 0; i < t.rank; ++i) t.strides[i] = given[i];
      return t;
    }
  }
  // Memory order as a permutation of logical dims, outermost first.
  std::array<int, 5> order{};
  int m = 0;
  order[m++] = 0;
  if (layout == Layout::nchw) order[m++] = 1;
  for (int i = 0; i < spatial_rank; ++i) order[m++] = 2 + i;
  if (layout == Layout::nhwc) order[m++] = 1;
  std::int64_t s = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    t.strides[order[i]] = s;
    // Saturate: validate() rejects overflowing sizes, but builds these descriptors first.
    if (__builtin_mul_overflow(s, t.dims[order[i]], &s)) s = INT64_MAX;
  }
  return t;
}

bool mul_ok(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

Status check_strides(const Problem& p, const char* field, const TensorDesc& dense,
                     const std::vector<std::int64_t>& written) {
  if (written.empty()) return Status::ok();
  if (static_cast<int>(written.size()) != p.spatial_dims + 2) {
    return invalid_argument(fmt::format("{}: needs {} strides (one per logical dim), got {}", field,
                                        p.spatial_dims + 2, written.size()));
  }
  const std::vector<std::int64_t> s = desc_strides(p, written, dense.dims[3]);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] < 1) {
      return invalid_argument(
          fmt::format("{}: stride {} is {}; strides must be >= 1", field, i, s[i]));
    }
  }
  // No two logical elements may share memory: sorted by stride, each dim must step over the
  // whole extent of the dims inside it.
  std::vector<int> idx(s.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) { return s[a] < s[b]; });
  std::int64_t extent = 1;
  for (int i : idx) {
    if (dense.dims[i] == 1) continue;
    if (s[i] < extent) {
      return invalid_argument(fmt::format(
          "{}: strides do not cover the tensor: dim {} (size {}) has stride {} but the dims inside "
          "it span {} elements, so elements would overlap",
          field, i, dense.dims[i], s[i], extent));
    }
    std::int64_t e;
    if (!mul_ok(s[i], dense.dims[i], e))
      return invalid_argument(fmt::format("{}: span overflows", field));
    extent = e;
  }
  // The memory the strides address: 1 + sum (size - 1) * stride elements, in bytes at the widest
  // element (8), checked, and at most kMaxTensorBytes.
  std::int64_t span = 1;
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::int64_t step;
    if (!mul_ok(dense.dims[i] - 1, s[i], step) || __builtin_add_overflow(span, step, &span))
      return invalid_argument(fmt::format("{}: span overflows", field));
  }
  if (std::int64_t bytes; !mul_ok(span, 8, bytes) || bytes > kMaxTensorBytes) {
    return invalid_argument(fmt::format(
        "{}: the strides address {} elements, more than any memory holds (at most {} bytes)", field,
        span, kMaxTensorBytes));
  }
  return Status::ok();
}

}  // namespace

TensorDesc x_desc(const Problem& p) {
  return make_desc(p, p.n, p.c, p.input, p.x_layout, p.x_strides);
}
TensorDesc w_desc(const Problem& p) {
  return make_desc(p, p.k, p.c_per_group(), p.filter, p.w_layout, p.w_strides);
}
TensorDesc y_desc(const Problem& p) {
  return make_desc(p, p.n, p.k, p.output_dims(), p.y_layout, p.y_strides);
}

Status validate(const Problem& p) {
  if (p.spatial_dims < 1 || p.spatial_dims > 3) {
    return invalid_argument(
        fmt::format("spatial_dims: must be 1, 2 or 3 (got {})", p.spatial_dims));
  }
  auto positive = [](const char* field, const char* what, std::int64_t v) -> Status {
    if (v < 1)
      return invalid_argument(fmt::format("{} ({}): must be positive (got {})", field, what, v));
    return Status::ok();
  };
  if (auto s = positive("mb", "batch size", p.n); !s) return s;
  if (auto s = positive("ic", "input channels", p.c); !s) return s;
  if (auto s = positive("oc", "output channels", p.k); !s) return s;
  if (auto s = positive("g", "groups", p.g); !s) return s;
  if (p.c % p.g != 0) {
    return invalid_argument(
        fmt::format("g (groups): {} groups do not divide ic={} input channels", p.g, p.c));
  }
  if (p.k % p.g != 0) {
    return invalid_argument(
        fmt::format("g (groups): {} groups do not divide oc={} output channels", p.g, p.k));
  }
  for (int d = 0; d < 3; ++d) {
    const char* L = kDimLetter[d];
    if (d < first_spatial(p)) {
      if (p.input[d] != 1 || p.filter[d] != 1 || p.stride[d] != 1 || p.dilation[d] != 1 ||
          p.pad_begin[d] != 0 || p.pad_end[d] != 0) {
        return invalid_argument(fmt::format(
            "i{0}/k{0}/s{0}/d{0}/p{0}: {1} fields must be 1 (0 for padding) in a {2}D problem", L,
            d == 0 ? "depth" : "height", p.spatial_dims));
      }
      continue;
    }
    if (p.input[d] < 1)
      return invalid_argument(
          fmt::format("i{} (input size): must be positive (got {})", L, p.input[d]));
    if (p.filter[d] < 1)
      return invalid_argument(
          fmt::format("k{} (filter size): must be positive (got {})", L, p.filter[d]));
    if (p.stride[d] < 1)
      return invalid_argument(
          fmt::format("s{} (stride): must be positive (got {})", L, p.stride[d]));
    if (p.dilation[d] < 1)
      return invalid_argument(
          fmt::format("d{} (dilation): must be >= 1, i.e. >= 0 in benchdnn's 0-based form (got {})",
                      L, p.dilation[d]));
    if (p.pad_begin[d] < 0)
      return invalid_argument(
          fmt::format("p{} (padding): must be >= 0 (got {})", L, p.pad_begin[d]));
    std::int64_t eff;
    if (!mul_ok(p.filter[d] - 1, p.dilation[d], eff) || eff > kMaxFieldValue ||
        p.input[d] > kMaxFieldValue || p.pad_begin[d] > kMaxFieldValue ||
        p.pad_end[d] > kMaxFieldValue || p.pad_end[d] < -kMaxFieldValue ||
        p.stride[d] > kMaxFieldValue) {
      return invalid_argument(fmt::format("i{}/k{}/d{}/p{}: sizes overflow", L, L, L, L));
    }
    const std::int64_t out = p.output(d);
    if (out < 1) {
      return invalid_argument(fmt::format(
          "o{} (output size): empty output: input {} + padding {}+{} is smaller than the dilated "
          "filter {}",
          L, p.input[d], p.pad_begin[d], p.pad_end[d], eff + 1));
    }
    // Every reader refuses a written field above 2^40, so a derived one must not exceed it
    // either: the problem's own string would not read back (huge padding once made ow 2^40.8).
    if (out > kMaxFieldValue) {
      return invalid_argument(fmt::format(
          "o{} (output size): {} is out of range (at most 2^40 = {}): input {} + padding {}+{}",
          L, out, kMaxFieldValue, p.input[d], p.pad_begin[d], p.pad_end[d]));
    }
  }
  // Every tensor's element count and byte size must fit in 63 bits.
  const char* names[3] = {"x (input)", "w (weights)", "y (output)"};
  const TensorDesc dense[3] = {make_desc(p, p.n, p.c, p.input, p.x_layout, {}),
                               make_desc(p, p.k, p.c_per_group(), p.filter, p.w_layout, {}),
                               make_desc(p, p.n, p.k, p.output_dims(), p.y_layout, {})};
  for (int t = 0; t < 3; ++t) {
    std::int64_t e = 1;
    for (int i = 0; i < dense[t].rank; ++i) {
      if (!mul_ok(e, dense[t].dims[i], e)) {
        return invalid_argument(fmt::format("{}: element count overflows", names[t]));
      }
    }
    std::int64_t bytes;
    if (!mul_ok(e, 8, bytes) || bytes > kMaxTensorBytes)
      return invalid_argument(
          fmt::format("{}: {} elements, more than any memory holds (at most {} bytes)", names[t], e,
                      kMaxTensorBytes));
  }
  if (auto s = check_strides(p, "x_strides", dense[0], p.x_strides); !s) return s;
  if (auto s = check_strides(p, "w_strides", dense[1], p.w_strides); !s) return s;
  if (auto s = check_strides(p, "y_strides", dense[2], p.y_strides); !s) return s;
  return Status::ok();
}

Result<Problem> problem_from_transposed(const TransposedConv& t) {
  Problem p;
  p.spatial_dims = t.spatial_dims;
  p.g = t.g;
  p.n = t.n;
  // The ordinary convolution's input is the transposed one's output (out_channels), its output
  // the transposed one's input (in_channels).
  p.c = t.out_channels;
  p.k = t.in_channels;
  p.filter = t.filter;
  p.stride = t.stride;
  p.dilation = t.dilation;
  p.pad_begin = t.pad;
  p.pad_end = t.pad;
  p.dtype = t.dtype;
  for (int d = 3 - t.spatial_dims; d < 3; ++d) {
    if (t.output_padding[d] < 0 || t.output_padding[d] >= std::max(t.stride[d], t.dilation[d])) {
      return invalid_argument(fmt::format(
          "output padding {}: must be >= 0 and smaller than the stride or the dilation (got {})",
          kDimLetter[d], t.output_padding[d]));
    }
    for (std::int64_t v :
         {t.input[d], t.stride[d], t.pad[d], t.dilation[d], t.filter[d], t.output_padding[d]}) {
      if (v > kMaxFieldValue || v < -kMaxFieldValue) {
        return invalid_argument(
            fmt::format("transposed convolution, dimension {}: {} is out of range (at most 2^40)",
                        kDimLetter[d], v));
      }
    }
    // The fields are each within +-2^40, their products are not: checked.
    std::int64_t reach = 0, eff = 0, out = 0;
    if (__builtin_mul_overflow(t.input[d] - 1, t.stride[d], &reach) ||
        __builtin_mul_overflow(t.dilation[d], t.filter[d] - 1, &eff) ||
        __builtin_add_overflow(reach, eff, &out) ||
        __builtin_sub_overflow(out, 2 * t.pad[d] - t.output_padding[d] - 1, &out)) {
      return invalid_argument(fmt::format("transposed output size {}: overflows", kDimLetter[d]));
    }
    if (out < 1) {
      return invalid_argument(
          fmt::format("transposed output size {}: empty ({})", kDimLetter[d], out));
    }
    p.input[d] = out;
  }
  switch (t.direction) {
    case Direction::forward:
      p.direction = Direction::backward_data;
      break;
    case Direction::backward_data:
      p.direction = Direction::forward;
      break;
    case Direction::backward_weights:
      p.direction = Direction::backward_weights;
      break;
  }
  if (auto s = validate(p); !s) return s;
  for (int d = 3 - t.spatial_dims; d < 3; ++d) {
    if (p.output(d) != t.input[d]) {
      return invalid_argument(
          fmt::format("transposed convolution: input size {} = {} is not "
                      "reachable with this stride/padding",
                      kDimLetter[d], t.input[d]));
    }
  }
  return p;
}

}  // namespace convguard
