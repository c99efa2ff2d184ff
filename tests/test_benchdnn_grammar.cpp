// Problem strings are read as oneDNN's benchdnn reads conv descriptors. A small, separate
// statement of benchdnn's rules (benchdnn_reads below, written after str2desc and sanitize_desc)
// is the oracle; random descriptors with random fields left out, random key orders and '_'
// separators must read the same through parse_problem, or be refused for the reasons
// convguard documents (docs/problem-strings.md). Plus the filed issue's examples by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string_view>

#include "convguard/canonical.hpp"

using namespace convguard;

namespace {

constexpr const char* kL[3] = {"d", "h", "w"};

// "s" and "h" -> "sh". (Built with +=: GCC 12 warns falsely on "literal" + std::string.)
std::string key(const char* field, const std::string& dim) {
  std::string k(field);
  k += dim;
  return k;
}

// What benchdnn ends up with: sizes per dimension (d, h, w), dilation 0-based, pr = end padding.
struct Reading {
  int ndims = 0;
  std::int64_t g = 1, mb = 2, ic = 0, oc = 0;
  std::int64_t i[3]{}, o[3]{}, k[3]{}, s[3]{}, p[3]{}, d[3]{}, pr[3]{};
  bool copied[3]{};       // filled from another dimension (not from what was written)
  bool derived_pad[3]{};  // p computed from the output
};

// benchdnn's rules, stated directly: nullopt where benchdnn refuses the descriptor.
std::optional<Reading> benchdnn_reads(const std::map<std::string, std::int64_t>& f) {
  auto get = [&](const std::string& k, std::int64_t otherwise) {
    const auto it = f.find(k);
    return it == f.end() ? otherwise : it->second;
  };
  Reading r;
  if (f.count("g") && get("g", 0) <= 0) return std::nullopt;
  r.g = get("g", 1);
  r.mb = get("mb", 2);
  r.ic = get("ic", 0);
  r.oc = get("oc", 0);
  if (r.ic <= 0 || r.oc <= 0) return std::nullopt;
  bool absent[3];
  for (int x = 0; x < 3; ++x) {
    const std::string L = kL[x];
    r.i[x] = get(key("i", L), 0), r.o[x] = get(key("o", L), 0), r.k[x] = get(key("k", L), 0);
    r.s[x] = get(key("s", L), 1), r.p[x] = get(key("p", L), -1), r.d[x] = get(key("d", L), 0);
    if (r.s[x] <= 0) return std::nullopt;
  }
  for (int x = 0; x < 3; ++x) {
    absent[x] =
        r.i[x] == 0 && r.k[x] == 0 && r.o[x] == 0 && r.d[x] == 0 && r.s[x] == 1 && r.p[x] < 1;
    if (absent[x]) continue;
    if (r.i[x] <= 0 || r.k[x] <= 0) return std::nullopt;
    const std::int64_t ext = (r.k[x] - 1) * (r.d[x] + 1) + 1;
    if (r.o[x] == 0) {
      if (r.p[x] < 0) r.p[x] = 0;
      r.o[x] = (r.i[x] - ext + 2 * r.p[x]) / r.s[x] + 1;
      if (r.o[x] <= 0) return std::nullopt;
    } else if (r.p[x] < 0) {
      r.p[x] = ((r.o[x] - 1) * r.s[x] - r.i[x] + ext) / 2;
      r.derived_pad[x] = true;
    }
  }
  auto copy = [&](int from, int to) {
    r.i[to] = r.i[from], r.o[to] = r.o[from], r.k[to] = r.k[from];
    r.s[to] = r.s[from], r.p[to] = r.p[from], r.d[to] = r.d[from];
    r.copied[to] = true;
  };
  auto unit = [&](int x) { r.i[x] = r.o[x] = r.k[x] = r.s[x] = 1, r.p[x] = r.d[x] = 0; };
  r.ndims = 5 - (absent[0] ? 1 : 0) - (absent[0] && absent[1] ? 1 : 0) -
            (absent[0] && absent[1] && absent[2] ? 1 : 0);
  if (r.ndims <= 2) return std::nullopt;
  if (r.ndims == 5) {
    if (absent[1] && absent[2]) {
      copy(0, 1), copy(0, 2);
    } else if (absent[1] || absent[2]) {
      return std::nullopt;
    }
  } else if (r.ndims == 4 && absent[2]) {
    copy(1, 2);
  }
  if (r.ndims < 5) unit(0);
  if (r.ndims < 4) unit(1);
  for (int x = 0; x < 3; ++x)
    r.pr[x] = (r.o[x] - 1) * r.s[x] - r.i[x] + ((r.k[x] - 1) * (r.d[x] + 1) + 1) - r.p[x];
  return r;
}

struct Case {
  std::map<std::string, std::int64_t> fields;
  std::string text, name;
};

Case random_case(std::mt19937_64& rng) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  Case c;
  auto& f = c.fields;
  const std::int64_t g = pick(1, 3);
  if (g > 1 || pick(0, 3) == 0) f["g"] = g;
  if (pick(0, 1)) f["mb"] = pick(1, 3);
  f["ic"] = g * pick(1, 4);
  f["oc"] = g * pick(1, 4);
  auto write_dim = [&](const std::string& L) {
    std::int64_t i = pick(1, 24), k = pick(1, 5), d = pick(0, 3) == 0 ? pick(1, 2) : 0;
    const std::int64_t s = pick(0, 2) == 0 ? pick(2, 3) : 1, p = pick(0, 3);
    const std::int64_t ext = (k - 1) * (d + 1) + 1;
    if (i + 2 * p < ext && pick(0, 4)) i = ext;
    const std::int64_t o = std::max<std::int64_t>(1, (i - ext + 2 * p) / s + 1 + pick(-1, 1));
    if (pick(0, 29)) f[key("i", L)] = i;
    if (pick(0, 29)) f[key("k", L)] = k;
    if (d != 0 || pick(0, 2) == 0) f[key("d", L)] = d;
    if (s != 1 || pick(0, 2) == 0) f[key("s", L)] = s;
    switch (pick(0, 2)) {
      case 0:  // padding given, output derived
        f[key("p", L)] = p;
        break;
      case 1:  // output given, padding derived
        f[key("o", L)] = o;
        break;
      default:  // both: any end padding, negative included
        f[key("p", L)] = p;
        f[key("o", L)] = o;
    }
  };
  // Fields an absent dimension may still carry with "not given" values (benchdnn reads them by
  // value, so they do not make the dimension present; copied over, they may disagree).
  auto write_defaults = [&](const std::string& L) {
    if (pick(0, 3) == 0) f[key("s", L)] = 1;
    if (pick(0, 3) == 0) f[key("p", L)] = 0;
    if (pick(0, 3) == 0) f[key("d", L)] = 0;
    if (pick(0, 9) == 0) f[key("o", L)] = 0;
  };
  const std::int64_t shape = pick(0, 11);
  const bool dims[3] = {shape >= 7, shape >= 1 && shape != 7 && shape != 11,
                        shape == 0 || (shape >= 5 && shape <= 6) || shape >= 9};
  for (int x = 0; x < 3; ++x) {
    if (dims[x])
      write_dim(kL[x]);
    else
      write_defaults(kL[x]);
  }
  // Rare zeros where benchdnn wants a positive value.
  if (pick(0, 59) == 0) f["ic"] = 0;
  if (pick(0, 59) == 0) f[key("s", kL[pick(0, 2)])] = 0;
  if (pick(0, 59) == 0) f["g"] = 0;

  std::vector<std::string> tokens;
  for (const auto& [k, v] : f) tokens.push_back(k + std::to_string(v));
  std::shuffle(tokens.begin(), tokens.end(), rng);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (t && pick(0, 2) == 0) c.text += '_';
    c.text += tokens[t];
  }
  switch (pick(0, 5)) {
    case 0:
      c.name = "layer_" + std::to_string(pick(0, 99));
      c.text += "_n\"" + c.name + "\"";
      break;
    case 1:
      c.name = "conv" + std::to_string(pick(0, 99));
      c.text += "n" + c.name;
      break;
    default:
      break;
  }
  return c;
}

bool contains(const std::string& s, std::string_view what) {
  return s.find(what) != std::string::npos;
}

}  // namespace

TEST(BenchdnnGrammar, RandomDescriptorsReadAsBenchdnnReadsThem) {
  std::mt19937_64 rng(20250314);
  std::map<std::string, int> outcomes;
  for (int n = 0; n < 20000; ++n) {
    const Case c = random_case(rng);
    const auto want = benchdnn_reads(c.fields);
    const auto got = parse_problem(c.text);
    const std::string msg = got ? "" : got.status().message();
    SCOPED_TRACE(c.text + (got ? "" : "  -> " + msg));
    if (!want) {
      EXPECT_FALSE(got.is_ok()) << "benchdnn refuses this descriptor";
      ++outcomes["refused by benchdnn too"];
      continue;
    }
    const Reading& r = *want;
    bool negative_pad = false, disagrees = false;
    for (int x = 0; x < 3; ++x) {
      negative_pad = negative_pad || (r.derived_pad[x] && r.p[x] < 0);
      if (!r.copied[x]) continue;
      const std::int64_t final_value[3] = {r.s[x], r.p[x], r.d[x]};
      const char* letter[3] = {"s", "p", "d"};
      for (int q = 0; q < 3; ++q) {
        const auto it = c.fields.find(key(letter[q], kL[x]));
        disagrees = disagrees || (it != c.fields.end() && it->second != final_value[q]);
      }
    }
    if (negative_pad) {
      ASSERT_FALSE(got.is_ok());
      EXPECT_TRUE(contains(msg, "negative padding at the beginning")) << msg;
      ++outcomes["refused: negative begin padding"];
    } else if (disagrees) {
      ASSERT_FALSE(got.is_ok());
      EXPECT_TRUE(contains(msg, "benchdnn does not read it")) << msg;
      ++outcomes["refused: written field benchdnn overrides"];
    } else {
      ASSERT_TRUE(got.is_ok()) << msg;
      const Problem& p = *got;
      EXPECT_EQ(p.spatial_dims, r.ndims - 2);
      EXPECT_EQ(p.g, r.g);
      EXPECT_EQ(p.n, r.mb);
      EXPECT_EQ(p.c, r.ic);
      EXPECT_EQ(p.k, r.oc);
      EXPECT_EQ(p.name, c.name);
      for (int x = 0; x < 3; ++x) {
        SCOPED_TRACE(kL[x]);
        EXPECT_EQ(p.input[x], r.i[x]);
        EXPECT_EQ(p.output(x), r.o[x]);
        EXPECT_EQ(p.filter[x], r.k[x]);
        EXPECT_EQ(p.stride[x], r.s[x]);
        EXPECT_EQ(p.dilation[x], r.d[x] + 1);
        EXPECT_EQ(p.pad_begin[x], r.p[x]);
        EXPECT_EQ(p.pad_end[x], r.pr[x]);
      }
      // The canonical string is explicit and reads back to the same problem.
      const std::string canon = to_canonical(p);
      const auto back = parse_problem(canon);
      ASSERT_TRUE(back.is_ok()) << canon << ": " << back.status().message();
      EXPECT_TRUE(*back == p) << canon;
      EXPECT_EQ(to_canonical(*back), canon);
      ++outcomes[r.ndims == 5 ? "read: 3D" : r.ndims == 4 ? "read: 2D" : "read: 1D"];
      if (std::any_of(std::begin(r.pr), std::end(r.pr), [](std::int64_t v) { return v < 0; }))
        ++outcomes["read: negative end padding"];
    }
    if (::testing::Test::HasFailure()) break;  // one clear failure, not thousands
  }
  for (const auto& [what, n] : outcomes) std::printf("  %-44s %d\n", what.c_str(), n);
  for (const char* what :
       {"read: 1D", "read: 2D", "read: 3D", "read: negative end padding", "refused by benchdnn too",
        "refused: written field benchdnn overrides", "refused: negative begin padding"})
    EXPECT_GT(outcomes[what], 50) << what << " was exercised too rarely";
}

// The examples.
TEST(BenchdnnGrammar, OneDimensionalIsReadAs1DNotAs2D) {
  auto p = parse_problem("mb1ic512iw32oc512kw5pw1sw1");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->spatial_dims, 1);
  EXPECT_EQ(p->input[1], 1);  // not iw's 32
  EXPECT_EQ(p->filter[1], 1);
  EXPECT_EQ(p->output(2), 30);
  EXPECT_EQ(to_canonical(*p), "g1mb1ic512iw32oc512ow30kw5sw1pw1");
  EXPECT_DOUBLE_EQ(p->flops(), 2.0 * 512 * 30 * 512 * 5);  // not the 2D square's 30x the work
  // Written h fields with "not given" values keep it 1D; a real one makes it 2D.
  p = parse_problem("mb1ic4iw32oc4kw5sh1ph0");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->spatial_dims, 1);
  p = parse_problem("mb1ic4iw32oc4kw5sh2");
  ASSERT_FALSE(p.is_ok());
  EXPECT_TRUE(contains(p.status().message(), "ih (input height): missing (sh2 gives"))
      << p.status().message();
}

TEST(BenchdnnGrammar, SquareShorthandIsPerDimensionNotPerField) {
  auto p = parse_problem("mb4ic1ih16iw53oc304oh16ow22kh1kw8sw2dh1dw1pw4");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->stride[1], 1);     // not sw's 2
  EXPECT_EQ(p->pad_begin[1], 0);  // derived from oh, not pw's 4
  EXPECT_EQ(p->output(1), 16);
  EXPECT_EQ(p->output(2), 22);
  EXPECT_EQ(p->pad_end[2], 0);
  p = parse_problem("mb1_g16ic16oc16_ih14oh3kh5sh5ph1_iw10ow10kw3");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->stride[2], 1);
  EXPECT_EQ(p->pad_begin[2], 1);  // ((10-1)*1 - 10 + 3) / 2
  EXPECT_EQ(p->pad_end[2], 1);
  EXPECT_EQ(p->output(1), 3);
  p = parse_problem("mb1_ic16oc1_ih2oh1kh2sh1dh0ph0_iw100kw6sw1dw30pw86");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->output(2), 117);
  EXPECT_EQ(p->pad_end[2], 86);
  EXPECT_EQ(p->output(1), 1);
  EXPECT_EQ(to_canonical(*p), "g1mb1ic16ih2iw100oc1oh1ow117kh2kw6sh1sw1ph0pw86dh0dw30");
}

TEST(BenchdnnGrammar, CubicShorthandFillsHAndWFromD) {
  const auto p = parse_problem("g2_ic32oc32_id17kd2");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->spatial_dims, 3);
  EXPECT_EQ(p->n, 2);
  EXPECT_EQ(p->g, 2);
  for (int x = 0; x < 3; ++x) {
    EXPECT_EQ(p->input[x], 17);
    EXPECT_EQ(p->filter[x], 2);
    EXPECT_EQ(p->output(x), 16);
  }
  EXPECT_EQ(to_canonical(*p), "g2mb2ic32id17ih17iw17oc32od16oh16ow16kd2kh2kw2sd1sh1sw1pd0ph0pw0");
}

TEST(BenchdnnGrammar, NegativeEndPadding) {
  // ih2 kh2 sh2 ph1 oh1: the one window reads the padding row and input row 0; row 1 is never
  // read, so the end padding is -1.
  const auto p = parse_problem("mb1ic1oc1ih2kh2sh2ph1oh1");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->pad_end[1], -1);
  EXPECT_EQ(p->pad_end[2], -1);
  EXPECT_EQ(p->output(1), 1);
  const auto q = parse_problem(to_canonical(*p));
  ASSERT_TRUE(q.is_ok());
  EXPECT_TRUE(*q == *p);
  // benchdnn's truncating division: (4 - 1 + 0) / 2 + 1 = 2 outputs, input row 3 never read.
  const auto r = parse_problem("ic1oc1ih4kh1sh2");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->output(1), 2);
  EXPECT_EQ(r->pad_end[1], -1);
}

TEST(BenchdnnGrammar, RefusalsNameAWrittenField) {
  auto msg = [](const char* s) { return parse_problem(s).status().message(); };
  // w would take h's stride 2, not the written 1.
  EXPECT_TRUE(contains(msg("ic1oc1ih8kh3sh2sw1"), "sw1: benchdnn does not read it"));
  // 3D with h but no w field.
  EXPECT_TRUE(contains(msg("ic1oc1id4kd2ih4kh2"), "ih4 kh2: a 3D descriptor"));
  // The output needs negative padding at the beginning: ((5-1)*1 - 10 + 1) / 2 = -2.
  EXPECT_TRUE(contains(msg("ic1oc1ih10kh1oh5"), "oh5: "));
  EXPECT_TRUE(contains(msg("ic1oc1ih10kh1oh5"), "negative padding at the beginning"));
  EXPECT_TRUE(contains(msg("ic1oc1ih2kh5"), "oh (output height): not given"));
  EXPECT_TRUE(contains(msg("ic1oc1kh3"), "ih (input height): missing (kh3 gives"));
  EXPECT_TRUE(contains(msg("ic1oc1ih3kh-1"), "kh: must not be negative"));
  EXPECT_TRUE(contains(msg("ic1oc1"), "no spatial dimension"));
}
