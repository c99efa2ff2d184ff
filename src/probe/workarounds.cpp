#include "probe/workarounds.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "convguard/canonical.hpp"
#include "convguard/registry.hpp"
#include "transforms/parse.hpp"

namespace convguard::probe {
namespace {

constexpr std::size_t kMaxAutomatic = 16, kMaxAll = 64;

bool power_of_two(std::int64_t v) {
  return v >= 2 && (v & (v - 1)) == 0;
}

// p's identity without its spatial input sizes, so one shape at different sizes compares equal.
std::string shape_key(const Problem& p) {
  std::string key;
  visit_fields(p, [&](const char* name, std::int64_t v) {
    if (std::string_view(name).substr(0, 3) != "in_") key += fmt::format("{}={};", name, v);
  });
  return key;
}

std::string tile_text(const Problem& p, const Dims3& t) {
  // tile(N) is tile(NxN), which tiles a 1D problem's width only (its height is 1).
  if (p.spatial_dims == 1) return fmt::format("{}", t[2]);
  return p.spatial_dims == 3 ? fmt::format("{}x{}x{}", t[0], t[1], t[2])
                             : fmt::format("{}x{}", t[1], t[2]);
}

// Tiles for p: below the known boundary, else halves and quarters of its padded size.
std::vector<std::string> tiles(const Problem& p, const std::optional<Dims3>& boundary) {
  std::vector<std::string> v;
  if (boundary) v.push_back(fmt::format("tile({})", tile_text(p, *boundary)));
  for (int div : {2, 4}) {
    Dims3 t{1, 1, 1};
    bool useful = false;
    for (int d = 3 - p.spatial_dims; d < 3; ++d) {
      const std::int64_t padded = p.input[d] + p.pad_begin[d] + p.pad_end[d];
      t[d] = std::max<std::int64_t>(padded / div, 2 * p.filter_extent(d) + p.stride[d]);
      useful = useful || t[d] < padded;
    }
    if (useful) v.push_back(fmt::format("tile({})", tile_text(p, t)));
  }
  return v;
}

// The transforms (without the inner id) worth trying around a solver that ended in `status`.
std::vector<std::string> transforms_for(const Problem& p, const std::string& status,
                                        const std::optional<Dims3>& boundary) {
  std::vector<std::string> cheap;
  cheap.push_back(p.x_layout == Layout::nhwc ? "relayout(nchw)" : "relayout(nhwc)");
  cheap.push_back("pad_spatial(%2)");  // seed 000's odd 17 and 33, done exactly
  // Seed 004: power-of-two channel counts hang; one zero channel each way moves off them.
  if (power_of_two(p.c_per_group()) || power_of_two(p.k_per_group()))
    cheap.push_back("pad_channels(c+1,k+1)");
  else
    cheap.push_back("pad_channels(c%8,k%8)");
  cheap.push_back("split_groups(1)");
  cheap.push_back("split_batch(1)");
  std::vector<std::string> size = tiles(p, boundary);
  std::vector<std::string> v;
  // A hang is usually size-dependent (the seeds' 42x42): tiles first.
  if (status == "hang") {
    v = size;
    v.insert(v.end(), cheap.begin(), cheap.end());
  } else {
    v = cheap;
    v.insert(v.end(), size.begin(), size.end());
  }
  return v;
}

}  // namespace

std::optional<WorkaroundMode> parse_workaround_mode(std::string_view text) {
  if (text == "off") return WorkaroundMode::off;
  if (text == "auto") return WorkaroundMode::automatic;
  if (text == "all") return WorkaroundMode::all;
  return std::nullopt;
}

std::optional<Dims3> largest_ok_size(const Problem& p, const std::string& solver, db::Store& store,
                                     const std::string& fingerprint) {
  const std::string want = shape_key(p);
  std::optional<Dims3> best;
  for (const db::TrialRecord& r : store.for_solver(fingerprint, solver)) {
    if (r.status != "ok") continue;
    auto q = parse_problem(r.problem);
    if (!q || shape_key(*q) != want) continue;
    bool smaller = true;
    for (int d = 0; d < 3; ++d) smaller = smaller && q->input[d] <= p.input[d];
    if (!smaller || q->input == p.input) continue;
    if (!best || q->input[1] * q->input[2] * q->input[0] > (*best)[1] * (*best)[2] * (*best)[0])
      best = q->input;
  }
  return best;
}

std::vector<std::string> workaround_candidates(const Problem& p,
                                               const std::vector<std::string>& plain,
                                               db::Store& store, const std::string& fingerprint,
                                               WorkaroundMode mode) {
  if (mode == WorkaroundMode::off) return {};
  const std::string key = identity_string(p);
  // Inner solvers: bad ones first (in list order), then those that declined; `all` adds the rest.
  std::vector<std::pair<std::string, std::string>> bad, declined, rest;
  for (const std::string& id : plain) {
    if (id == "cpu:ref") continue;  // the reference itself: a transform of it proves nothing
    const auto rec = store.find(fingerprint, key, id);
    const std::string status = rec ? rec->status : "";
    if (status == "ok" && mode == WorkaroundMode::automatic) return {};
    if (db::is_bad_status(status))
      bad.emplace_back(id, status);
    else if (status == "unsupported")
      declined.emplace_back(id, status);
    else
      rest.emplace_back(id, status);
  }
  std::vector<std::pair<std::string, std::string>> inners = bad;
  inners.insert(inners.end(), declined.begin(), declined.end());
  if (mode == WorkaroundMode::all) inners.insert(inners.end(), rest.begin(), rest.end());
  const std::size_t cap = mode == WorkaroundMode::all ? kMaxAll : kMaxAutomatic;
  std::vector<std::string> out;
  for (const auto& [inner, status] : inners) {
    const auto boundary =
        status == "hang" ? largest_ok_size(p, inner, store, fingerprint) : std::nullopt;
    for (const std::string& t : transforms_for(p, status, boundary)) {
      const std::string id = std::string(transforms::kPrefix) + t + ":" + inner;
      auto s = resolve_solver(id);
      if (!s) continue;
      // Only transforms that change p; whether the inner solver takes the inner problems is
      // for the worker to find out (a plugin's check() runs in the sandbox too).
      const auto* ts = dynamic_cast<const transforms::TransformSolver*>(*s);
      if (!ts || !ts->decompose(p)) continue;
      if (std::find(out.begin(), out.end(), std::string((*s)->id())) == out.end())
        out.emplace_back((*s)->id());
      if (out.size() >= cap) return out;
    }
  }
  return out;
}

}  // namespace convguard::probe
