// benchdnn's rules for the fields a convolution descriptor leaves out (oneDNN
// tests/benchdnn/conv/conv_aux.cpp str2desc, common.cpp sanitize_desc, conv.hpp init_pad_r):
//
//  - mb is 2, g 1, every stride 1, every dilation 0 (0-based) unless written.
//  - A dimension (d, h or w) is present when any of its fields differs from "not given":
//    i, k, o or d nonzero, s not 1, p at least 1. benchdnn decides this by value, so `sw1` or
//    `pw0` alone do not make w present.
//  - A present dimension needs its input and filter sizes. Its output, when not given (or 0),
//    follows from the padding (0 when not given): (i - ext + 2p) / s + 1 with C's truncating
//    division. Its padding, when not given, follows from the output: ((o-1)s - i + ext) / 2,
//    truncated. The end padding always follows from both: (o-1)s - i + ext - p, which is
//    negative when the last input rows are never read.
//  - The number of spatial dims follows from which dims are present: d makes 3D, and then h and
//    w are both present or both take d's values; else h makes 2D and w takes h's values when
//    absent; w alone makes 1D (d and h unit dimensions); none is refused.
//
// Where benchdnn would silently read a written field as another value (a written `sw1` when w
// takes h's `sh2`), the descriptor is refused instead, naming the field.
#include <fmt/format.h>

#include <initializer_list>

#include "core/descriptor.hpp"

namespace convguard::detail {
namespace {

constexpr const char* kLetters[3] = {"d", "h", "w"};
constexpr const char* kDimNames[3] = {"depth", "height", "width"};

// One dimension in benchdnn's terms: 0 means "not given" for i, o, k and d; p is -1 until
// given or derived; d is 0-based. pe is the end padding.
struct Dim {
  std::int64_t i = 0, o = 0, k = 0, s = 1, p = -1, d = 0, pe = 0;
};

Dim written_dim(const WrittenDescriptor& w, int dim) {
  auto get = [&](SpatialField f, std::int64_t otherwise) {
    return w.spatial[f][static_cast<std::size_t>(dim)].value_or(otherwise);
  };
  return {get(kInput, 0),
          get(kOutput, 0),
          get(kKernel, 0),
          get(kStride, 1),
          get(kPad, -1),
          get(kDilation, 0),
          0};
}

bool present(const Dim& v) {
  return v.i != 0 || v.k != 0 || v.o != 0 || v.d != 0 || v.s != 1 || v.p >= 1;
}

// The fields of `dim` the user wrote, as written ("iw32 kw5 pw1"): what messages point at.
std::string written_fields(const WrittenDescriptor& w, int dim) {
  std::string r;
  for (int f = 0; f < kSpatialFieldCount; ++f) {
    if (const auto& v = w.spatial[f][static_cast<std::size_t>(dim)]) {
      if (!r.empty()) r += ' ';
      r += key(static_cast<SpatialField>(f), dim) + std::to_string(*v);
    }
  }
  return r;
}

// Derives o, p and pe of a present dimension.
Status derive(const WrittenDescriptor& w, int dim, Dim& v) {
  const char* L = kLetters[dim];
  for (const auto& [f, value] : {std::pair{kInput, v.i}, std::pair{kKernel, v.k}}) {
    if (value != 0) continue;
    const bool zero = w.spatial[f][static_cast<std::size_t>(dim)].has_value();
    return invalid_argument(fmt::format(
        "{} ({} {}): {} ({} gives the {} dimension, which then needs its input and filter sizes)",
        key(f, dim), f == kInput ? "input" : "filter", kDimNames[dim],
        zero ? "must be positive (got 0)" : "missing", written_fields(w, dim), kDimNames[dim]));
  }
  // Each field is at most 2^40 (the lexer checks), but products of two are not: checked.
  std::int64_t ext = 0;
  if (__builtin_mul_overflow(v.k - 1, v.d + 1, &ext))
    return invalid_argument(fmt::format("k{}/d{}: the dilated filter's size overflows", L, L));
  ++ext;
  if (v.o == 0) {
    if (v.p < 0) v.p = 0;
    v.o = (v.i - ext + 2 * v.p) / v.s + 1;  // C's division, as benchdnn's: truncates toward 0
    if (v.o <= 0) {
      return invalid_argument(fmt::format(
          "o{} (output {}): not given, and i{}{} k{}{} d{}{} p{}{} leave no output: the dilated "
          "filter spans {} but the padded input only {}",
          L, kDimNames[dim], L, v.i, L, v.k, L, v.d, L, v.p, ext, v.i + 2 * v.p));
    }
  }
  std::int64_t reach = 0;
  if (__builtin_mul_overflow(v.o - 1, v.s, &reach))
    return invalid_argument(fmt::format("o{}/s{}: output size times stride overflows", L, L));
  if (v.p < 0) {
    v.p = (reach - v.i + ext) / 2;
    if (v.p < 0) {
      return invalid_argument(fmt::format(
          "o{}{}: with i{}{} k{}{} s{}{} d{}{} this output needs padding {} at the beginning "
          "(benchdnn derives p{} = ((o{}-1)*s{} - i{} + (k{}-1)*(d{}+1) + 1) / 2); negative "
          "padding at the beginning is not supported: write p{} (e.g. p{}0)",
          L, v.o, L, v.i, L, v.k, L, v.s, L, v.d, v.p, L, L, L, L, L, L, L, L));
    }
  }
  v.pe = reach - v.i + ext - v.p;
  return Status::ok();
}

// A dimension benchdnn fills by copying another (`to` takes `from`'s values) or with unit
// values: every field written in it must agree, or benchdnn would read it as something else.
Status check_written_agree(const WrittenDescriptor& w, int dim, const Dim& v, const char* why) {
  const std::int64_t final_value[kSpatialFieldCount] = {v.i, v.o, v.k, v.s, v.p, v.d};
  for (int f = 0; f < kSpatialFieldCount; ++f) {
    const auto& written = w.spatial[f][static_cast<std::size_t>(dim)];
    // A written 0 for a size means "not given" to benchdnn, like leaving it out.
    if (!written || ((f == kInput || f == kOutput || f == kKernel) && *written == 0)) continue;
    if (*written == final_value[f]) continue;
    const std::string k = key(static_cast<SpatialField>(f), dim);
    return invalid_argument(fmt::format(
        "{}{}: benchdnn does not read it: {}, so {} = {}; write the {} sizes (i{}, k{}) too, or "
        "leave {} out",
        k, *written, why, k, final_value[f], kDimNames[dim], kLetters[dim], kLetters[dim], k));
  }
  return Status::ok();
}

}  // namespace

Status apply_descriptor(const WrittenDescriptor& w, Problem& p) {
  if (w.g && *w.g == 0) return invalid_argument("g (groups): must be positive (got 0)");
  if (!w.ic) return invalid_argument("ic (input channels): missing");
  if (!w.oc) return invalid_argument("oc (output channels): missing");
  // benchdnn checks the strides before anything else, present dimension or not.
  for (int dim = 0; dim < 3; ++dim) {
    if (w.spatial[kStride][static_cast<std::size_t>(dim)] == 0)
      return invalid_argument(fmt::format("s{} (stride): must be positive (got 0)", kLetters[dim]));
  }
  std::array<Dim, 3> v{written_dim(w, 0), written_dim(w, 1), written_dim(w, 2)};
  const bool has[3] = {present(v[0]), present(v[1]), present(v[2])};
  for (int dim = 0; dim < 3; ++dim) {
    if (has[dim]) {
      if (auto s = derive(w, dim, v[dim]); !s) return s;
    }
  }

  // Dimensions filled from another one or with unit values; every field written there must agree.
  const Dim unit{1, 1, 1, 1, 0, 0, 0};
  auto take = [&](std::initializer_list<int> dims, const Dim& value, const char* why) -> Status {
    for (int dim : dims) {
      v[static_cast<std::size_t>(dim)] = value;
      if (auto s = check_written_agree(w, dim, value, why); !s) return s;
    }
    return Status::ok();
  };
  Status filled = Status::ok();
  if (has[0]) {
    if (has[1] != has[2]) {
      const int given = has[1] ? 1 : 2, missing = has[1] ? 2 : 1;
      return invalid_argument(fmt::format(
          "{}: a 3D descriptor (d fields: {}) needs fields of both h and w, or of neither (then "
          "both take d's values); this one has {} fields but no {} field",
          written_fields(w, given), written_fields(w, 0), kLetters[given], kLetters[missing]));
    }
    if (!has[1])
      filled = take({1, 2}, v[0], "no other h or w field is given, so h and w take d's values");
    p.spatial_dims = 3;
  } else if (!has[1] && has[2]) {
    filled = take({0, 1}, unit,
                  "no other d or h field is given, so this is a 1D convolution and d and h are "
                  "unit dimensions");
    p.spatial_dims = 1;
  } else {
    if (!has[1])
      return invalid_argument(fmt::format(
          "problem string: no spatial dimension in '{}' (give at least iw and kw)", w.text));
    if (!has[2]) filled = take({2}, v[1], "no other w field is given, so w takes h's values");
    if (filled) filled = take({0}, unit, "no other d field is given, so d is a unit dimension");
    p.spatial_dims = 2;
  }
  if (!filled) return filled;

  p.g = w.g.value_or(1);
  p.n = w.mb.value_or(2);
  p.c = *w.ic;
  p.k = *w.oc;
  p.name = w.name;
  for (std::size_t dim = 0; dim < 3; ++dim) {
    p.input[dim] = v[dim].i;
    p.filter[dim] = v[dim].k;
    p.stride[dim] = v[dim].s;
    p.dilation[dim] = v[dim].d + 1;
    p.pad_begin[dim] = v[dim].p;
    p.pad_end[dim] = v[dim].pe;
  }
  if (auto s = validate(p); !s) return s;
  // By construction each output is the one derived or written; a difference is a bug here.
  for (int dim = 3 - p.spatial_dims; dim < 3; ++dim) {
    if (p.output(dim) != v[static_cast<std::size_t>(dim)].o)
      return {StatusCode::internal_error,
              fmt::format("o{}: read as {} but the problem gives {} ('{}')", kLetters[dim],
                          v[static_cast<std::size_t>(dim)].o, p.output(dim), w.text)};
  }
  return Status::ok();
}

}  // namespace convguard::detail
