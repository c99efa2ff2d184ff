// Shards (probe/shard.hpp): a job array's shares are disjoint, cover the sweep, are balanced by
// estimated cost rather than count, do not depend on the order of the problem list, and bad
// values name what was wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "convguard/canonical.hpp"
#include "probe/shard.hpp"

using namespace convguard;
using convguard::probe::Shard;

namespace {

Problem problem(const std::string& text) {
  auto p = parse_problem(text);
  EXPECT_TRUE(p) << text;
  return *p;
}

// A suite-like list: one large layer, several small ones, and a duplicate under another name.
std::vector<Problem> suite() {
  std::vector<Problem> v;
  v.push_back(problem("mb1ic256ih64oc512oh64kh3ph1"));  // ~9.7 GFLOP
  for (int h : {8, 12, 16, 20, 24, 28, 32, 36})
    v.push_back(problem("mb1ic3ih" + std::to_string(h) + "oc16kh3ph1"));
  v.push_back(problem("mb1ic3ih8oc16kh3ph1_n\"again\""));
  return v;
}

std::map<std::string, int> shard_of_each(const std::vector<Problem>& v, int count) {
  std::map<std::string, int> of;
  for (int i = 1; i <= count; ++i)
    for (std::size_t k : probe::shard_problems(v, Shard{i, count})) {
      const std::string key = identity_string(v[k]);
      EXPECT_TRUE(!of.count(key) || of[key] == i) << key << " in two shards";
      of[key] = i;
    }
  return of;
}

}  // namespace

TEST(Shard, SharesAreDisjointAndCoverEveryProblem) {
  const auto v = suite();
  for (int n : {1, 2, 3, 7, 20}) {
    std::size_t total = 0;
    for (int i = 1; i <= n; ++i) total += probe::shard_problems(v, Shard{i, n}).size();
    EXPECT_EQ(total, v.size()) << n << " shards";
    EXPECT_EQ(shard_of_each(v, n).size(), v.size() - 1) << "the duplicate is one problem";
  }
}

TEST(Shard, BalancedByCostNotCount) {
  // Two shards: the large layer alone costs more than all the small ones, so it gets a shard
  // of its own and the other shard takes every small one (a split by count would pair it with
  // four small ones).
  const auto v = suite();
  const auto first = probe::shard_problems(v, Shard{1, 2});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], 0u);
  EXPECT_EQ(probe::shard_problems(v, Shard{2, 2}).size(), v.size() - 1);
}

TEST(Shard, IndependentOfTheListsOrder) {
  auto v = suite();
  const auto before = shard_of_each(v, 3);
  std::reverse(v.begin(), v.end());
  EXPECT_EQ(shard_of_each(v, 3), before);
}

TEST(Shard, ParsesIOverN) {
  auto s = probe::parse_shard("2/4");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  for (const char* bad :
       {"", "2", "0/4", "5/4", "1/0", "-1/4", "a/4", "2/4/1", " 2/4", "1.5/4", "2/99999999"})
    EXPECT_FALSE(probe::parse_shard(bad)) << bad;
}

TEST(Shard, FromSlurmsArrayVariables) {
  std::map<std::string, std::string> env;
  const auto get = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto none = probe::shard_from_slurm(get);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value()) << "not in a job array";
  // --array=4-6: task 5 is shard 2 of 3.
  env = {{"SLURM_ARRAY_TASK_ID", "5"},
         {"SLURM_ARRAY_TASK_COUNT", "3"},
         {"SLURM_ARRAY_TASK_MIN", "4"},
         {"SLURM_ARRAY_TASK_MAX", "6"}};
  auto s = probe::shard_from_slurm(get);
  ASSERT_TRUE(s && s->has_value());
  EXPECT_EQ((*s)->index, 2);
  EXPECT_EQ((*s)->count, 3);
  // --array=0-12:4 (0, 4, 8, 12): task 8 is shard 3 of 4.
  env = {{"SLURM_ARRAY_TASK_ID", "8"},
         {"SLURM_ARRAY_TASK_COUNT", "4"},
         {"SLURM_ARRAY_TASK_MIN", "0"},
         {"SLURM_ARRAY_TASK_STEP", "4"}};
  s = probe::shard_from_slurm(get);
  ASSERT_TRUE(s && s->has_value());
  EXPECT_EQ((*s)->index, 3);
  // Each bad value is refused naming its variable.
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> bad = {
      {{{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}, "SLURM_ARRAY_TASK_ID"},
      {{{"SLURM_ARRAY_TASK_ID", "1"}}, "SLURM_ARRAY_TASK_COUNT"},
      {{{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "0"}}, "SLURM_ARRAY_TASK_COUNT"},
      {{{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}, "SLURM_ARRAY_TASK_ID=3"},
      {{{"SLURM_ARRAY_TASK_ID", "1"},
        {"SLURM_ARRAY_TASK_COUNT", "3"},
        {"SLURM_ARRAY_TASK_MIN", "-1"}},
       "SLURM_ARRAY_TASK_MIN"},
      // --array=1,2,7: not a range, so a task cannot tell which share is its own.
      {{{"SLURM_ARRAY_TASK_ID", "2"},
        {"SLURM_ARRAY_TASK_COUNT", "3"},
        {"SLURM_ARRAY_TASK_MIN", "1"},
        {"SLURM_ARRAY_TASK_MAX", "7"}},
       "not a regular range"},
  };
  for (const auto& [vars, named] : bad) {
    env = vars;
    auto r = probe::shard_from_slurm(get);
    ASSERT_FALSE(r) << named;
    EXPECT_NE(r.status().message().find(named), std::string::npos) << r.status().message();
  }
}
