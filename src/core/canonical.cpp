#include "convguard/canonical.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <fstream>

#include "core/descriptor.hpp"
#include "core/text_file.hpp"

namespace convguard {
namespace {

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
      return invalid_argument(fmt::format("{}: {} is out of range (0 to 2^48)", field,
                                          std::string_view(text).substr(i, j - i)));
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
  detail::WrittenDescriptor d;
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
      if (auto s = detail::lex_descriptor(tok, d); !s) return s;
    }
  }
  if (!have_descriptor)
    return invalid_argument("problem string: no descriptor (e.g. mb1ic3ih32oc16kh3ph1)");
  // Options are applied first, so validate() inside sees the strides and layouts too.
  if (auto s = detail::apply_descriptor(d, p); !s) return s;
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
    q.pad_end[d] =
        (p.output(d) - 1) * p.stride[d] + p.filter_extent(d) - p.input[d] - p.pad_begin[d];
  }
  return q;
}

std::optional<Problem> with_nonnegative_end_padding(const Problem& p) {
  Problem q = normalized(p);
  for (int d = 0; d < 3; ++d) {
    const std::int64_t least = q.pad_end[d], most = least + p.stride[d] - 1;
    if (most < 0) return std::nullopt;
    const std::int64_t begin = p.pad_begin[d];
    q.pad_end[d] = begin >= least && begin <= most ? begin : std::max<std::int64_t>(least, 0);
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
  const int first = first_spatial(p);
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
