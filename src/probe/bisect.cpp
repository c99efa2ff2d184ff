#include "probe/bisect.hpp"

#include <fmt/format.h>

#include <sstream>

namespace convguard::probe {

std::string default_vary(const Problem& p) {
  return p.spatial_dims == 1 ? "W" : "H,W";
}

Result<Vary> parse_vary(const std::string& given, const Problem& p) {
  const std::string text = given.empty() ? default_vary(p) : given;
  Vary v;
  if (text == "C" || text == "K" || text == "N") {
    if (text != "N" && p.g != 1)
      return invalid_argument(fmt::format(
          "--vary {}: the problem has {} groups; vary C or K on g=1 problems", text, p.g));
    v.count = text[0];
    return v;
  }
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const int dim = item == "D" ? 0 : item == "H" ? 1 : item == "W" ? 2 : -1;
    if (dim < 0)
      return invalid_argument(
          fmt::format("--vary: '{}' is not one of D, H, W (comma-separated), C, K or N", item));
    if (dim < first_spatial(p))
      return invalid_argument(
          fmt::format("--vary: {} is not a dimension of this {}D problem", item, p.spatial_dims));
    v.spatial.push_back(dim);
  }
  if (v.spatial.empty()) return invalid_argument("--vary: give H,W, D,H,W, W, C, K or N");
  return v;
}

Result<Problem> with_value(const Problem& p, const Vary& v, std::int64_t value) {
  Problem q = p;
  if (v.count == 'C') q.c = value;
  if (v.count == 'K') q.k = value;
  if (v.count == 'N') q.n = value;
  for (int d : v.spatial) q.input[d] = value;
  q.x_strides.clear();
  q.w_strides.clear();
  q.y_strides.clear();
  if (auto st = validate(q); !st) return st;
  return q;
}

std::int64_t smallest_value(const Problem& p, const Vary& v) {
  if (v.count) return 1;
  std::int64_t lo = 1;
  for (int d : v.spatial) {
    lo = std::max(lo, p.filter_extent(d) - p.pad_begin[d] - p.pad_end[d]);
  }
  return lo;
}

std::int64_t value_of(const Problem& p, const Vary& v) {
  if (v.count == 'C') return p.c;
  if (v.count == 'K') return p.k;
  if (v.count == 'N') return p.n;
  return p.input[v.spatial.front()];
}

std::string describe_value(const Problem& p, const Vary& v, std::int64_t value) {
  if (v.count) return fmt::format("{}={}", v.count, value);
  // The varied dims at `value`, the others as they are: 43x43, 43x64, 17x43x43.
  std::string s;
  for (int d = 3 - p.spatial_dims; d < 3; ++d) {
    bool varied = false;
    for (int x : v.spatial) varied = varied || x == d;
    s += fmt::format("{}{}", s.empty() ? "" : "x", varied ? value : p.input[d]);
  }
  return s;
}

Result<BisectResult> bisect(std::int64_t lo, std::int64_t hi,
                            const std::function<Result<std::string>(std::int64_t)>& status_at) {
  if (lo >= hi) return invalid_argument(fmt::format("--range: {}:{} is empty", lo, hi));
  BisectResult r;
  auto run = [&](std::int64_t v) -> Result<std::string> {
    auto s = status_at(v);
    if (s) r.steps.push_back({v, *s});
    return s;
  };
  auto a = run(lo);
  if (!a) return a.status();
  auto b = run(hi);
  if (!b) return b.status();
  r.first_status = *a;
  r.other_status = *b;
  if (*a == *b) return r;
  // Invariant: status(lo) is the first status, status(hi) is not.
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    auto s = run(mid);
    if (!s) return s.status();
    if (*s == r.first_status) {
      lo = mid;
    } else {
      hi = mid;
      r.other_status = *s;
    }
  }
  r.found = true;
  r.last_first = lo;
  r.first_other = hi;
  return r;
}

}  // namespace convguard::probe
