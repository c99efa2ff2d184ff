#include "convguard/canonical.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <fstream>
#include <map>

#include "core/text_file.hpp"

namespace convguard {
namespace {

// benchdnn field keys: key -> (which quantity, spatial index or -1).
enum Quantity { kG, kMb, kIc, kOc, kIn, kOut, kKer, kStr, kPad, kDil };
struct Key {
  Quantity q;
  int dim;
};
const std::map<std::string, Key>& keys() {
  static const std::map<std::string, Key> m = {
      {"g", {kG, -1}},   {"mb", {kMb, -1}}, {"ic", {kIc, -1}}, {"oc", {kOc, -1}}, {"id", {kIn, 0}},
      {"ih", {kIn, 1}},  {"iw", {kIn, 2}},  {"od", {kOut, 0}}, {"oh", {kOut, 1}}, {"ow", {kOut, 2}},
      {"kd", {kKer, 0}}, {"kh", {kKer, 1}}, {"kw", {kKer, 2}}, {"sd", {kStr, 0}}, {"sh", {kStr, 1}},
      {"sw", {kStr, 2}}, {"pd", {kPad, 0}}, {"ph", {kPad, 1}}, {"pw", {kPad, 2}}, {"dd", {kDil, 0}},
      {"dh", {kDil, 1}}, {"dw", {kDil, 2}}};
  return m;
}

struct Parsed {
  std::optional<std::int64_t> g, mb, ic, oc;
  std::optional<std::int64_t> v[10][3];  // [quantity][dim] for spatial quantities
  std::string name;
};

Status parse_descriptor(std::string_view s, Parsed& out) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '_') {
      ++i;
      continue;
    }
    if (s[i] == 'n' && (i + 1 == s.size() || !std::isalpha(static_cast<unsigned char>(s[i + 1])) ||
                        s[i + 1] == '"')) {
      // _n"name" (or n followed by the rest of the token)
      std::string_view rest = s.substr(i + 1);
      if (!rest.empty() && rest.front() == '"') {
        const auto close = rest.find('"', 1);
        if (close == std::string_view::npos) return invalid_argument("name: unterminated n\"...\"");
        out.name = std::string(rest.substr(1, close - 1));
        i += 1 + close + 1;
      } else {
        out.name = std::string(rest);
        i = s.size();
      }
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
    const std::string key(s.substr(i, j - i));
    if (key.empty()) {
      return invalid_argument(
          fmt::format("problem string: unexpected '{}' at position {} of '{}'", s[i], i, s));
    }
    const auto it = keys().find(key);
    if (it == keys().end()) {
      return invalid_argument(fmt::format("problem string: unknown field '{}' in '{}'", key, s));
    }
    std::int64_t value = 0;
    const char* b = s.data() + j;
    const char* e = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(b, e, value);
    if (ec != std::errc() || ptr == b) {
      return invalid_argument(
          fmt::format("{}: expected an integer after '{}' in '{}'", key, key, s));
    }
    if (value > kMaxFieldValue || value < -kMaxFieldValue) {
      return invalid_argument(fmt::format("{}: {} is out of range (at most 2^40 = {})", key,
                                          std::string_view(b, ptr - b), kMaxFieldValue));
    }
    i = static_cast<std::size_t>(ptr - s.data());
    std::optional<std::int64_t>* slot = nullptr;
    switch (it->second.q) {
      case kG:
        slot = &out.g;
        break;
      case kMb:
        slot = &out.mb;
        break;
      case kIc:
        slot = &out.ic;
        break;
      case kOc:
        slot = &out.oc;
        break;
      default:
        slot = &out.v[it->second.q][it->second.dim];
    }
    if (slot->has_value()) return invalid_argument(fmt::format("{}: given twice in '{}'", key, s));
    *slot = value;
  }
  return Status::ok();
}

std::string join_strides(const std::vector<std::int64_t>& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) r += 'x';
    r += std::to_string(s[i]);
  }
  return r;
}

Status parse_stride_list(std::string_view field, std::string_view text,
                         std::vector<std::int64_t>& out) {
  out.clear();
  if (text.empty()) return Status::ok();
  std::size_t i = 0;
  while (i <= text.size()) {
    std::size_t j = text.find('x', i);
    if (j == std::string_view::npos) j = text.size();
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + j, v);
    if (ec != std::errc() || ptr != text.data() + j) {
      return invalid_argument(
          fmt::format("{}: '{}' is not an 'x'-separated list of integers", field, text));
    }
    if (v < 0 || v > kMaxTensorBytes) {
      return invalid_argument(
          fmt::format("{}: {} is out of range (0 to 2^48)", field, std::string_view(text).substr(i, j - i)));
    }
    out.push_back(v);
    i = j + 1;
  }
  return Status::ok();
}

Status parse_option(std::string_view opt, Problem& p) {
  const auto eq = opt.find('=');
  if (eq == std::string_view::npos)
    return invalid_argument(fmt::format("{}: expected --name=value", opt));
  const std::string_view name = opt.substr(0, eq), value = opt.substr(eq + 1);
  if (name == "--dir") {
    if (value == "FWD_D" || value == "FWD_I" || value == "FWD_B" || value == "fwd")
      p.direction = Direction::forward;
    else if (value == "BWD_D" || value == "bwd_data")
      p.direction = Direction::backward_data;
    else if (value == "BWD_W" || value == "bwd_weights")
      p.direction = Direction::backward_weights;
    else
      return invalid_argument(fmt::format("--dir: '{}' is not FWD_D, BWD_D or BWD_W", value));
  } else if (name == "--dt") {
    const auto t = parse_dtype(value);
    if (!t) return invalid_argument(fmt::format("--dt: '{}' is not f32, f16 or bf16", value));
    p.dtype = *t;
  } else if (name == "--stag" || name == "--wtag" || name == "--dtag") {
    const auto l = parse_layout(value);
    if (!l)
      return invalid_argument(
          fmt::format("{}: '{}' is not abx (channels first) or axb (channels last)", name, value));
    (name == "--stag" ? p.x_layout : name == "--wtag" ? p.w_layout : p.y_layout) = *l;
  } else if (name == "--strides") {
    const auto a = value.find(':');
    const auto b = a == std::string_view::npos ? a : value.find(':', a + 1);
    if (b == std::string_view::npos) return invalid_argument("--strides: expected SRC:WEI:DST");
    if (auto s = parse_stride_list("--strides (src)", value.substr(0, a), p.x_strides); !s)
      return s;
    if (auto s = parse_stride_list("--strides (wei)", value.substr(a + 1, b - a - 1), p.w_strides);
        !s)
      return s;
    if (auto s = parse_stride_list("--strides (dst)", value.substr(b + 1), p.y_strides); !s)
      return s;
  } else {
    return invalid_argument(
        fmt::format("{}: unknown option (known: --dir --dt --stag --wtag --dtag --strides)", name));
  }
  return Status::ok();
}

}  // namespace

Result<Problem> parse_problem(std::string_view text) {
  Problem p;
  Parsed d;
  bool have_descriptor = false;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) break;
    std::size_t j = i;
    bool quoted = false;
    while (j < text.size() && (quoted || !std::isspace(static_cast<unsigned char>(text[j])))) {
      if (text[j] == '"') quoted = !quoted;
      ++j;
    }
    const std::string_view tok = text.substr(i, j - i);
    i = j;
    if (tok.starts_with("--")) {
      if (auto s = parse_option(tok, p); !s) return s;
    } else {
      if (have_descriptor)
        return invalid_argument(
            fmt::format("problem string: more than one descriptor ('{}')", tok));
      have_descriptor = true;
      if (auto s = parse_descriptor(tok, d); !s) return s;
    }
  }
  if (!have_descriptor)
    return invalid_argument("problem string: no descriptor (e.g. mb1ic3ih32oc16kh3ph1)");
  if (!d.ic) return invalid_argument("ic (input channels): missing");
  if (!d.oc) return invalid_argument("oc (output channels): missing");
  p.g = d.g.value_or(1);
  p.n = d.mb.value_or(2);
  p.c = *d.ic;
  p.k = *d.oc;
  p.name = d.name;

  bool is3d = false;
  for (int q = kIn; q <= kDil; ++q) is3d = is3d || d.v[q][0].has_value();
  p.spatial_dims = is3d ? 3 : 2;
  // Square/cubic defaults: a missing w equals h (and h equals w); a missing d equals h.
  for (int q = kIn; q <= kDil; ++q) {
    auto& v = d.v[q];
    if (!v[1] && v[2]) v[1] = v[2];
    if (!v[2] && v[1]) v[2] = v[1];
    if (is3d && !v[0] && v[1]) v[0] = v[1];
  }
  if (!d.v[kIn][1]) return invalid_argument("ih (input height): missing");
  if (!d.v[kKer][1]) return invalid_argument("kh (filter height): missing");
  static constexpr const char* L[3] = {"d", "h", "w"};
  for (int dim = 0; dim < 3; ++dim) {
    if (!is3d && dim == 0) continue;
    p.input[dim] = *d.v[kIn][dim];
    p.filter[dim] = *d.v[kKer][dim];
    p.stride[dim] = d.v[kStr][dim].value_or(1);
    p.dilation[dim] = d.v[kDil][dim].value_or(0) + 1;
    // Each field is within +-2^40 (checked above), but products of two are not: checked.
    std::int64_t eff = 0, reach = 0;
    if (__builtin_mul_overflow(p.filter[dim] - 1, p.dilation[dim], &eff)) {
      return invalid_argument(
          fmt::format("k{}/d{}: the dilated filter's size overflows", L[dim], L[dim]));
    }
    ++eff;
    const auto& o = d.v[kOut][dim];
    const auto& pad = d.v[kPad][dim];
    if (!o) {
      p.pad_begin[dim] = p.pad_end[dim] = pad.value_or(0);
    } else {
      if (__builtin_mul_overflow(*o - 1, p.stride[dim], &reach)) {
        return invalid_argument(fmt::format("o{}/s{}: output size times stride overflows", L[dim], L[dim]));
      }
      const std::int64_t total = reach + eff - p.input[dim];
      p.pad_begin[dim] = pad ? *pad : std::max<std::int64_t>(0, total / 2);
      p.pad_end[dim] = std::max<std::int64_t>(0, total - p.pad_begin[dim]);
    }
  }
  if (auto s = validate(p); !s) return s;
  for (int dim = is3d ? 0 : 1; dim < 3; ++dim) {
    const auto& o = d.v[kOut][dim];
    if (o && p.output(dim) != *o) {
      return invalid_argument(fmt::format(
          "o{}: output size {} does not follow from i{}={} k{}={} s{}={} d{}={} p{}={} (that gives "
          "{})",
          L[dim], *o, L[dim], p.input[dim], L[dim], p.filter[dim], L[dim], p.stride[dim], L[dim],
          p.dilation[dim] - 1, L[dim], p.pad_begin[dim], p.output(dim)));
    }
  }
  return p;
}

Result<std::vector<Problem>> read_problem_file(const std::string& path) {
  std::vector<Problem> out;
  const Status st = for_each_line(path, [&](const std::string& text, int lineno) -> Status {
    std::string line = text;
    const auto hash = line.find('#');
    if (hash != std::string::npos && line.find('"') > hash) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) return Status::ok();
    auto p = parse_problem(line);
    if (!p) return invalid_argument(fmt::format("{}:{}: {}", path, lineno, p.status().message()));
    out.push_back(std::move(*p));
    return Status::ok();
  });
  if (!st) return st;
  return out;
}

std::string identity_string(const Problem& p) {
  Problem q = p;
  q.name.clear();
  return to_canonical(q);
}

Problem normalized(const Problem& p) {
  Problem q = p;
  for (int d = 0; d < 3; ++d) {
    q.pad_end[d] = std::max<std::int64_t>(
        0, (p.output(d) - 1) * p.stride[d] + p.filter_extent(d) - p.input[d] - p.pad_begin[d]);
  }
  return q;
}

std::string to_canonical(const Problem& p) {
  std::string s;
  if (p.direction != Direction::forward) {
    s += p.direction == Direction::backward_data ? "--dir=BWD_D " : "--dir=BWD_W ";
  }
  if (p.dtype != DType::f32) s += fmt::format("--dt={} ", to_string(p.dtype));
  if (p.x_layout == Layout::nhwc) s += "--stag=axb ";
  if (p.w_layout == Layout::nhwc) s += "--wtag=axb ";
  if (p.y_layout == Layout::nhwc) s += "--dtag=axb ";
  if (!p.x_strides.empty() || !p.w_strides.empty() || !p.y_strides.empty()) {
    s += fmt::format("--strides={}:{}:{} ", join_strides(p.x_strides), join_strides(p.w_strides),
                     join_strides(p.y_strides));
  }
  const int first = p.spatial_dims == 3 ? 0 : 1;
  auto group = [&](const char* prefix, const Dims3& v, std::int64_t bias = 0) {
    static constexpr const char* L[3] = {"d", "h", "w"};
    for (int d = first; d < 3; ++d) s += fmt::format("{}{}{}", prefix, L[d], v[d] + bias);
  };
  s += fmt::format("g{}mb{}ic{}", p.g, p.n, p.c);
  group("i", p.input);
  s += fmt::format("oc{}", p.k);
  group("o", p.output_dims());
  group("k", p.filter);
  group("s", p.stride);
  group("p", p.pad_begin);
  bool dilated = false;
  for (int d = first; d < 3; ++d) dilated = dilated || p.dilation[d] != 1;
  if (dilated) group("d", p.dilation, -1);
  if (!p.name.empty()) s += fmt::format("_n\"{}\"", p.name);
  return s;
}

}  // namespace convguard
