// The driver's command line (MIOpenDriver's conv flags and convguard's, tools/convguard/
// driver_args.cpp): any argument list either becomes problems or is refused with a message; every
// flag's value reads as an integer or a number or is refused; every problem made is valid, prints
// canonically and parses back, and its memory estimate never overflows. The input is the argument
// list, one argument a line (after `convguard driver`).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "convguard/canonical.hpp"
#include "convguard/memory.hpp"
#include "driver_args.hpp"

namespace {
// A refusal always says why.
void refused(const convguard::Status& st) {
  if (st.message().empty()) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace convguard;
  std::vector<std::string> args{"convguard", "driver"};
  std::string arg;
  for (std::size_t i = 0; i <= size; ++i) {
    if (i == size || data[i] == '\n') {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += static_cast<char>(data[i]);
    }
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cli::Flags f(cli::driver_flag_specs());
  if (auto st = f.parse(static_cast<int>(argv.size()), argv.data(), 2); !st) {
    refused(st);
    return 0;
  }
  // Suite files are paths: this harness is about flags (fuzz/suite_file.cpp reads suites), and a
  // path could name a FIFO that blocks.
  if (f.given("suite")) return 0;
  (void)f.usage();
  for (const cli::FlagSpec& spec : cli::driver_flag_specs()) {
    if (!f.given(spec.long_name)) continue;  // defaults are the same every time
    (void)f.name_of(spec.long_name);
    if (auto v = f.integer_in(spec.long_name, -1000, 1000); !v) refused(v.status());
    if (auto v = f.number_in(spec.long_name, -1e300, 1e300); !v) refused(v.status());
  }
  const auto& pos = f.positional();
  auto o = cli::driver_options(f, pos.empty() ? "" : pos[0]);
  if (!o) {
    refused(o.status());
    return 0;
  }
  for (const Problem& p : o->problems) {
    if (!validate(p).is_ok()) __builtin_trap();
    const std::string canonical = to_canonical(p);
    auto q = parse_problem(canonical);
    if (!q || to_canonical(*q) != canonical) {
      std::fprintf(stderr, "round trip broke: '%s' -> %s\n", canonical.c_str(),
                   q ? to_canonical(*q).c_str() : q.status().message().c_str());
      __builtin_trap();
    }
    if (trial_host_bytes(p, o->trial) < 0) __builtin_trap();
  }
  return 0;
}
