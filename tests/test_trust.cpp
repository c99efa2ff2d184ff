// Evidence never becomes code: shell quoting for each shell `env` writes, comment text, variable
// names, UTF-8 tails, the database's field grammar (solver ids, problem keys, timestamps), and
// imports that are all-or-nothing and never let a forged timestamp outrank local evidence.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "convguard/registry.hpp"
#include "core/json_text.hpp"
#include "core/safe_text.hpp"
#include "db/fields.hpp"
#include "db/store.hpp"
#include "probe/pool.hpp"
#include "probe/protocol.hpp"
#include "temp_store.hpp"
#include "vendor/miopen_table.hpp"

using namespace convguard;

TEST(Trust, BashQuoting) {
  EXPECT_EQ(shell_quoted("a b"), "'a b'");
  EXPECT_EQ(shell_quoted("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quoted("$(touch x)`id`;\\\n"), "'$(touch x)`id`;\\\n'");
  EXPECT_EQ(shell_quoted(""), "''");
}

TEST(Trust, FishQuoting) {
  // Inside fish's '...' only \' and \\ are escapes; everything else is literal.
  EXPECT_EQ(shell_quoted("it's", Shell::fish), "'it\\'s'");
  EXPECT_EQ(shell_quoted("a\\b", Shell::fish), "'a\\\\b'");
  EXPECT_EQ(shell_quoted("a\\'; touch x; echo '", Shell::fish), "'a\\\\\\'; touch x; echo \\''");
  EXPECT_EQ(shell_quoted("$(id)\n", Shell::fish), "'$(id)\n'");
}

TEST(Trust, PowerShellQuoting) {
  EXPECT_EQ(shell_quoted("it's", Shell::powershell), "'it''s'");
  EXPECT_EQ(shell_quoted("$(id)", Shell::powershell), "'$(id)'");
  // U+2018, U+2019, U+201A, U+201B end a PowerShell single-quoted string too: doubled.
  EXPECT_EQ(shell_quoted("a\u2018b\u2019c\u201Ad\u201Be", Shell::powershell),
            "'a\u2018\u2018b\u2019\u2019c\u201A\u201Ad\u201B\u201Be'");
  // U+201C (a double quote) and other non-ASCII text stay as they are.
  EXPECT_EQ(shell_quoted("\u201C\u00e9", Shell::powershell), "'\u201C\u00e9'");
  // A truncated sequence at the end is not mistaken for a quote.
  EXPECT_EQ(shell_quoted("x\xE2\x80", Shell::powershell), "'x\xE2\x80'");
}

TEST(Trust, CommentTextIsOneLineOfPrintableAscii) {
  EXPECT_EQ(comment_text("cpu:direct ok"), "cpu:direct ok");
  EXPECT_EQ(comment_text("a\nb\rc\td"), "a?b?c?d");
  // U+0085 (NEL), U+2028, U+2029: every byte of them replaced.
  EXPECT_EQ(comment_text("a\u0085b"), "a??b");
  EXPECT_EQ(comment_text("a\u2028b\u2029c"), "a???b???c");
  EXPECT_EQ(comment_text(std::string("a\0b\x7f", 4)), "a?b?");
}

TEST(Trust, EnvNames) {
  EXPECT_TRUE(is_env_name("MIOPEN_DEBUG_CONV_GEMM"));
  EXPECT_TRUE(is_env_name("_X1"));
  EXPECT_FALSE(is_env_name(""));
  EXPECT_FALSE(is_env_name("1X"));
  EXPECT_FALSE(is_env_name("X=1;touch"));
  EXPECT_FALSE(is_env_name("x"));
  EXPECT_FALSE(is_env_name("A B"));
}

TEST(Trust, Utf8TailStartsOnACharacter) {
  EXPECT_EQ(utf8_tail("abc", 10), "abc");
  EXPECT_EQ(utf8_tail("abcdef", 3), "def");
  // "\u00e9" is C3 A9, "\u2028" is E2 80 A8: a cut inside either skips the rest of it.
  EXPECT_EQ(utf8_tail("x\u00e9yz", 3), "yz");
  EXPECT_EQ(utf8_tail("x\u2028yz", 4), "yz");
  EXPECT_EQ(utf8_tail("x\u2028yz", 5), "\u2028yz");
}

// What the PostgreSQL store writes in place of bytes it would refuse: valid text is kept as it is,
// each byte of an ill-formed sequence becomes U+FFFD (RFC 3629's table, not "has the high bit").
TEST(Trust, ValidUtf8ReplacesEachBadByte) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(valid_utf8("plain \u00e9\u2028\U0001F600"), "plain \u00e9\u2028\U0001F600");
  EXPECT_EQ(valid_utf8(std::string("a\xff"
                                   "b")),
            "a" + fffd + "b");
  EXPECT_EQ(valid_utf8(std::string("\xC0\xAF")), fffd + fffd);             // overlong '/'
  EXPECT_EQ(valid_utf8(std::string("\xED\xA0\x80")), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(valid_utf8(std::string("\xF4\x90\x80\x80")), fffd + fffd + fffd + fffd);  // > U+10FFFF
  EXPECT_EQ(valid_utf8(std::string("x\xE2\x80")), "x" + fffd + fffd);  // cut off at the end
  EXPECT_EQ(valid_utf8(std::string("\x80z")), fffd + "z");             // stray continuation
}

TEST(Trust, JsonTextReplacesInvalidUtf8) {
  const nlohmann::json j = {{"m", std::string("a\xff"
                                              "b")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  EXPECT_EQ(json_text(j),
            "{\"m\":\"a\xEF\xBF\xBD"
            "b\"}");
}

TEST(Trust, SolverIdGrammarAcceptsEveryIdThatExists) {
  for (const Solver* s : all_solvers()) EXPECT_TRUE(check_solver_id(s->id()).is_ok()) << s->id();
  for (const char* id :
       {"cpu:winograd:f2x2_3x3", "gpu:tc_implicit_gemm:tf32", "chaos:hang_16_32_above_32",
        "gpu:chaos_hang", "cudnn:fwd:IMPLICIT_PRECOMP_GEMM:tensor_op", "cudnn:bwd_data:heur0:tf32",
        "cudnn:bwd_weights:engine12", "xform:tile(32x32):cpu:direct",
        "xform:pad_channels(c+1,k%8):xform:tile(2x32x32):miopen:ConvAsm1x1U",
        "xform:pad_spatial(%2):xform:relayout(nhwc):cpu:direct", "xform:split_batch(1):gpu:naive",
        "miopen:ConvOclBwdWrW2<16>", "miopen:ConvWinograd3x3MultipassWrW<3-2>"}) {
    EXPECT_TRUE(check_solver_id(id).is_ok()) << id << ": " << check_solver_id(id).message();
  }
  auto table = miopen_table::load();
  ASSERT_TRUE(table.is_ok()) << table.status().message();
  for (const auto& s : table->solvers) {
    EXPECT_TRUE(check_solver_id("miopen:" + s.name).is_ok()) << s.name;
  }
}

TEST(Trust, SolverIdGrammarRefusesEverythingElse) {
  for (const char* id : {"",
                         "cpu",
                         "cpu:",
                         ":direct",
                         "cpu::direct",
                         "cpu:direct:",
                         "chaos:x';touch /tmp/p;'",
                         "chaos:$(id)",
                         "chaos:`id`",
                         "chaos:a b",
                         "chaos:a\nb",
                         "chaos:a\rb",
                         "chaos:a;b",
                         "chaos:a\u2028b",
                         "miopen:X<a>",
                         "miopen:X<1>y",
                         "miopen:X<>",
                         "xform:tile(32x32)",
                         "xform:tile(32x32):",
                         "xform:Tile(3):cpu:direct",
                         "xform:tile(3;x):cpu:direct",
                         "xform:tile(3:cpu:direct",
                         "-x:y",
                         "cpu:-x"}) {
    EXPECT_FALSE(check_solver_id(id).is_ok()) << id;
  }
  EXPECT_FALSE(check_solver_id(std::string(600, 'a') + ":b").is_ok());
  EXPECT_FALSE(check_solver_id(std::string("cpu:dir\0ect", 11)).is_ok());
}

TEST(Trust, ProblemKeysAreCanonical) {
  auto k = db::canonical_problem_key("mb1ic1ih4oc1kh1");
  ASSERT_TRUE(k.is_ok());
  EXPECT_EQ(*k, "g1mb1ic1ih4iw4oc1oh4ow4kh1kw1sh1sw1ph0pw0");
  EXPECT_EQ(*db::canonical_problem_key(*k), *k);
  EXPECT_FALSE(db::canonical_problem_key("mb1ic1ih4oc1kh1\ntouch x").is_ok());
  EXPECT_FALSE(db::canonical_problem_key("mb1ic1ih4oc1kh1;touch x").is_ok());
  EXPECT_FALSE(db::canonical_problem_key("$(touch x)").is_ok());
}

TEST(Trust, Timestamps) {
  EXPECT_TRUE(db::check_timestamp("2024-02-29T23:59:59Z").is_ok());
  EXPECT_TRUE(db::check_timestamp(db::now_timestamp()).is_ok());
  for (const char* t : {"", "2024-01-01", "2024-01-01T00:00:00", "2024-01-01 00:00:00Z",
                        "2024-01-01T00:00:00+00:00", "2024-01-01T00:00:00.5Z",
                        "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-32T00:00:00Z",
                        "2024-01-01T24:00:00Z", "2024-01-01T00:60:00Z", "2024-01-01T00:00:60Z",
                        "~~~~-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2999-01-01T00:00:00Z"}) {
    EXPECT_FALSE(db::check_timestamp(t).is_ok()) << t;
  }
}

namespace {

db::TrialRecord row(const std::string& solver, const std::string& status, const std::string& at) {
  db::TrialRecord r;
  r.device = "dev";
  r.problem = "mb1ic1ih4oc1kh1";
  r.solver = solver;
  r.status = status;
  r.started_at = r.finished_at = at;
  return r;
}

}  // namespace

TEST(Trust, ImportIsAllOrNothing) {
  TempStore t("trust");
  auto bad = row("chaos:x", "crash", "2024-01-01T00:00:00Z");
  bad.reason = std::string("cut\0here", 8);
  auto r = t.store->import_records({row("cpu:direct", "ok", "2024-01-01T00:00:00Z"), bad});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("record 2: reason: contains a NUL"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(t.store->all().empty());
}

TEST(Trust, ImportKeepsTheNewerRowAndSaysWhatItReplaced) {
  TempStore t("trust");
  ASSERT_TRUE(t.store->import_records({row("cpu:direct", "ok", "2024-01-02T00:00:00Z")}).is_ok());
  // Older evidence is kept out; a forged future time is refused outright.
  auto older = t.store->import_records({row("cpu:direct", "crash", "2024-01-01T00:00:00Z")});
  ASSERT_TRUE(older.is_ok());
  EXPECT_EQ(older->kept, 1);
  EXPECT_FALSE(
      t.store->import_records({row("cpu:direct", "crash", "9999-01-01T00:00:00Z")}).is_ok());
  auto newer = t.store->import_records({row("cpu:direct", "wrong", "2024-01-03T00:00:00Z")});
  ASSERT_TRUE(newer.is_ok());
  ASSERT_EQ(newer->replaced.size(), 1u);
  EXPECT_EQ(newer->replaced[0].old_status, "ok");
  EXPECT_EQ(newer->replaced[0].new_status, "wrong");
  EXPECT_EQ(newer->replaced[0].problem, "g1mb1ic1ih4iw4oc1oh4ow4kh1kw1sh1sw1ph0pw0");
  const auto rows = t.store->all();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, "wrong");
}

TEST(Trust, TheProbesWritesAreCheckedToo) {
  TempStore t("trust");
  ASSERT_TRUE(t.store->add_device("dev", "dev").is_ok());
  auto r = row("chaos:x\ntouch y", "crash", "");
  EXPECT_FALSE(t.store->begin(r, std::nullopt).is_ok());
  r = row("cpu:direct", "ok", "");
  r.problem = "mb1ic1ih4oc1kh1 --dir=FWD_D";  // parses; stored canonical
  ASSERT_TRUE(t.store->begin(r, std::nullopt).is_ok());
  ASSERT_TRUE(t.store->finish(r).is_ok());
  EXPECT_TRUE(t.store->find("dev", "g1mb1ic1ih4iw4oc1oh4ow4kh1kw1sh1sw1ph0pw0", "cpu:direct"));
}

// Numbers from outside are read by kind and range (found by the protocol fuzzer: a seq of 7.2e19
// converted to uint64 was undefined behaviour): refused with the field named, never converted.
TEST(Trust, NumbersFromOutsideAreCheckedByKindAndRange) {
  auto reply = convguard::probe::decode_reply(R"({"seq":72222222222222222222,"status":"ok"})");
  EXPECT_FALSE(reply.is_ok());
  auto neg = convguard::probe::decode_reply(R"({"seq":-1,"status":"ok"})");
  EXPECT_FALSE(neg.is_ok());
  auto runs = convguard::probe::decode_reply(R"({"seq":1,"status":"ok","runs":1e30})");
  ASSERT_FALSE(runs.is_ok());
  EXPECT_NE(runs.status().message().find("runs"), std::string::npos) << runs.status().message();
  auto good = convguard::probe::decode_reply(R"({"seq":1,"status":"ok","runs":5,"first_ms":2})");
  ASSERT_TRUE(good.is_ok()) << good.status().message();
  EXPECT_EQ(good->runs, 5);
  EXPECT_EQ(good->first_ms, 2.0);
}

// A killed worker stuck in the kernel (state D) may never exit: the parent's wait for it has a
// deadline. A child that stays alive is reported as not reaped; once it exits it is reaped with
// the status it died with.
TEST(Trust, WaitingForAChildHasADeadline) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  int status = 0;
  EXPECT_FALSE(probe::wait_for_exit(child, &status, 0.05)) << "a live child counted as reaped";
  ::kill(child, SIGKILL);
  ASSERT_TRUE(probe::wait_for_exit(child, &status, 60));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  // Not a child any more: nothing to wait for, at once.
  EXPECT_TRUE(probe::wait_for_exit(child, &status, 60));
}
