#include "transforms/parse.hpp"

#include <fmt/format.h>

#include <charconv>

#include "transforms/families.hpp"

namespace convguard::transforms {
namespace {

struct Entry {
  TransformKind kind;
  Factory make;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> v = {
      {{"relayout", "relayout(nchw|nhwc)", "relayout(nhwc)",
        "all three tensors dense in the other layout"},
       make_relayout},
      {{"pad_spatial", "pad_spatial(%N)", "pad_spatial(%2)",
        "zeros appended so input sizes are multiples of N; output cropped"},
       make_pad_spatial},
      {{"pad_channels", "pad_channels(c+N|c%N,k+N|k%N)", "pad_channels(c+1,k+1)",
        "zero channels/filters added per group; extra outputs dropped"},
       make_pad_channels},
      {{"split_groups", "split_groups(G)", "split_groups(1)", "at most G groups per inner call"},
       make_split_groups},
      {{"split_batch", "split_batch(N)", "split_batch(1)", "at most N images per inner call"},
       make_split_batch},
      {{"tile", "tile(HxW|DxHxW)", "tile(32x32)",
        "spatial tiles with halo, inner inputs at most that large"},
       make_tile},
  };
  return v;
}

}  // namespace

Result<std::int64_t> parse_count(std::string_view text, std::string_view what) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > (1 << 24))
    return invalid_argument(fmt::format("{}: '{}' is not a positive whole number", what, text));
  return v;
}

const std::vector<TransformKind>& transform_kinds() {
  static const std::vector<TransformKind> v = [] {
    std::vector<TransformKind> k;
    for (const Entry& e : entries()) k.push_back(e.kind);
    return k;
  }();
  return v;
}

Result<std::unique_ptr<TransformSolver>> make_transform(std::string_view id, const Resolver& r) {
  if (!is_transform_id(id))
    return invalid_argument(fmt::format("'{}' is not a transform id (xform:...)", id));
  const std::string_view rest = id.substr(kPrefix.size());
  const std::size_t open = rest.find('(');
  const std::size_t close = rest.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      close + 1 >= rest.size() || rest[close + 1] != ':')
    return invalid_argument(fmt::format(
        "'{}': a transform id is xform:NAME(PARAMS):SOLVER, e.g. xform:tile(32x32):cpu:direct",
        id));
  const std::string_view name = rest.substr(0, open);
  const std::string_view params = rest.substr(open + 1, close - open - 1);
  const std::string_view inner_id = rest.substr(close + 2);
  const Entry* entry = nullptr;
  for (const Entry& e : entries())
    if (name == e.kind.name) entry = &e;
  if (!entry) {
    std::string names;
    for (const Entry& e : entries())
      names += (names.empty() ? "" : ", ") + std::string(e.kind.name);
    return invalid_argument(
        fmt::format("'{}': unknown transform '{}' (there are {})", id, name, names));
  }
  auto inner = r.find(inner_id);
  if (!inner)
    return Status{inner.status().code(),
                  fmt::format("'{}': inner solver: {}", id, inner.status().message())};
  auto made = entry->make(params, **inner, r.memory(**inner));
  if (!made)
    return Status{made.status().code(), fmt::format("'{}': {}", id, made.status().message())};
  return made;
}

}  // namespace convguard::transforms
