// convguard driver: MIOpenDriver's conv command on convguard's solvers, with verification
// against the fp64 reference and MIOpenDriver-style output lines.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "convguard/canonical.hpp"
#include "convguard/memory.hpp"
#include "convguard/registry.hpp"
#include "core/json_text.hpp"
#include "db/select.hpp"
#include "driver_args.hpp"
#include "npy.hpp"
#include "probe/device.hpp"
#include "probe/reproduce.hpp"

namespace convguard::cli {
using probe::reproduce_command;
namespace {

const char* direction_title(Direction d) {
  switch (d) {
    case Direction::forward:
      return "Forward Convolution";
    case Direction::backward_data:
      return "Backward Convolution Data";
    case Direction::backward_weights:
      return "Backward Convolution Weights";
  }
  return "?";
}

std::string rerun_command(const Problem& p, std::string_view solver, const std::string& device) {
  return reproduce_command(to_canonical(p), std::string(solver), device);
}

// Input tensors of a direction and their .npy names.
struct NamedTensor {
  const char* file;
  TensorView view;
};
std::vector<NamedTensor> inputs_of(const Problem& p, TrialTensors& t) {
  switch (p.direction) {
    case Direction::forward:
      return {{"x.npy", t.x.view()}, {"w.npy", t.w.view()}};
    case Direction::backward_data:
      return {{"dy.npy", t.y.view()}, {"w.npy", t.w.view()}};
    case Direction::backward_weights:
      return {{"x.npy", t.x.view()}, {"dy.npy", t.y.view()}};
  }
  return {};
}
const char* output_file(const Problem& p) {
  return p.writes_x() ? "dx.npy" : p.writes_w() ? "dw.npy" : "y.npy";
}

std::vector<const Solver*> solvers_for(const Problem& p, const DriverOptions& o,
                                       const probe::DeviceInfo& dev, Status& error) {
  const std::string& choice = o.solver;
  std::vector<const Solver*> out;
  if (choice == "all") return solvers_on(o.device_kind);
  if (choice == "auto") {
    auto store = db::Store::open(o.db.empty() ? db::default_path() : o.db);
    if (!store) {
      error = invalid_argument("-S auto: " + store.status().message());
      return out;
    }
    auto sel =
        db::select_solver(**store, dev.fingerprint, p, {dev.kind, dev.plugin_kind, o.allow_tf32});
    if (!sel) {
      error = sel.status();
      return out;
    }
    if (!o.json)
      std::printf("-S auto chose %s: %s\n", std::string(sel->solver->id()).c_str(),
                  sel->why.c_str());
    return {sel->solver};
  }
  if (!choice.empty()) {
    auto found = resolve_solver(choice);
    const Solver* s = found ? *found : nullptr;
    if (!s)
      error = invalid_argument("flag -S (--solution): " + found.status().message());
    else if (s->device() != o.device_kind)
      error = invalid_argument(
          fmt::format("flag -S (--solution): {} does not run on --device {}", choice, o.device));
    else
      out.push_back(s);
    return out;
  }
  for (const Solver* s : solvers_on(o.device_kind)) {
    if (s->id() != "cpu:ref" && !skipped_by_environment(s->id()) && s->check(p).is_ok()) return {s};
  }
  return {find_solver("cpu:ref")};
}

}  // namespace

int driver_main(int argc, char** argv) {
  Flags flags(driver_flag_specs());
  if (auto st = flags.parse(argc, argv, 2); !st) {
    std::fprintf(stderr, "convguard driver: %s\n", st.message().c_str());
    return 2;
  }
  if (flags.on("help")) {
    std::printf(
        "usage: convguard driver conv|convfp16|convbfp16 [MIOpenDriver flags]\n"
        "       convguard driver --problem STRING | --suite FILE [flags]\n\n%s",
        flags.usage().c_str());
    return 0;
  }
  const auto& pos = flags.positional();
  if (pos.size() > 1) {
    std::fprintf(stderr, "convguard driver: unexpected argument '%s'\n", pos[1].c_str());
    return 2;
  }
  auto opts = driver_options(flags, pos.empty() ? "" : pos[0]);
  Status applied = opts ? apply_driver_options(*opts) : opts.status();
  if (!applied) {
    std::fprintf(stderr, "convguard driver: %s\n", applied.message().c_str());
    return 2;
  }
  const DriverOptions& o = *opts;
  // The device, opened once: its fingerprint is -S auto's evidence key.
  probe::DeviceInfo dev = probe::cpu_device();
  if (o.device_kind != Device::cpu) {
    auto opened = probe::open_device(o.device);
    if (!opened) {
      std::fprintf(stderr, "convguard driver: --device %s: %s\n", o.device.c_str(),
                   opened.status().message().c_str());
      return 1;
    }
    dev = std::move(*opened);
    if (!o.json) std::printf("device %s\n", dev.description.c_str());
  }
  if (!o.save_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.save_dir, ec);
    if (ec) {
      std::fprintf(stderr, "convguard driver: --save-dir %s: %s\n", o.save_dir.c_str(),
                   ec.message().c_str());
      return 2;
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  bool any_failed = false;
  struct Row {
    std::string problem, solver, status, detail;
    double first_ms, mean_ms, gflops, err, tol;
    std::size_t ws;
  };
  std::vector<Row> table;
  for (const Problem& p : o.problems) {
    Status sel_error;
    const auto solvers = solvers_for(p, o, dev, sel_error);
    if (!sel_error) {
      std::fprintf(stderr, "convguard driver: %s\n", sel_error.message().c_str());
      return 2;
    }
    if (o.print_problem && !o.json) {
      std::printf(
          "convguard driver --problem %s   # %s %s\n", shell_quoted(to_canonical(p)).c_str(),
          std::string(to_string(p.direction)).c_str(), std::string(to_string(p.dtype)).c_str());
    }
    // Refused before anything is allocated: a problem too big for this machine is the user's
    // input, and says so (driver.md), rather than failing in an allocation.
    if (auto st = check_host_memory(p, o.trial); !st) {
      std::fprintf(stderr, "convguard driver: %s: %s\n", to_canonical(p).c_str(),
                   st.message().c_str());
      return 2;
    }
    TrialTensors t(p);
    if (!o.load_dir.empty()) {
      for (auto& in : inputs_of(p, t)) {
        if (auto st = load_npy((std::filesystem::path(o.load_dir) / in.file).string(), in.view,
                               p.spatial_dims);
            !st) {
          std::fprintf(stderr, "convguard driver: --load-dir: %s\n", st.message().c_str());
          return 2;
        }
      }
    } else {
      fill_inputs(p, t, o.trial.seed, o.trial.fill);
    }
    bool saved_output = false;
    for (const Solver* s : solvers) {
      const TrialResult r = probe::run_trial_on_device(*s, p, t, o.trial);
      Row row{to_canonical(p),  std::string(s->id()), "", "", r.first_ms, r.mean_ms, 0, 0, 0,
              r.workspace_bytes};
      const double ms = r.iterations ? r.mean_ms : r.first_ms;
      row.gflops = ms > 0 ? p.flops() / (ms * 1e6) : 0;
      if (!r.ran()) {
        const bool declined = r.status.code() == StatusCode::not_applicable;
        row.status = declined ? "unsupported" : "error";
        row.detail = r.status.message();
        if (!declined) any_failed = true;
        if (!o.json && (solvers.size() == 1 || !declined)) {
          std::printf("%s [%s]: %s: %s\n", direction_title(p.direction), row.solver.c_str(),
                      declined ? "not applicable" : "FAILED", r.status.message().c_str());
        }
        if (solvers.size() == 1 && declined) any_failed = true;
      } else {
        // -V 0: it ran, but nothing checked its numbers; "ok" is only ever a verified result.
        row.status = r.verdict ? "ok" : "unverified";
        if (r.verdict) {
          row.err = r.verdict->rel_error;
          row.tol = r.verdict->tolerance;
          const std::string how =
              r.verdict->sampled ? fmt::format(", {} sampled points", r.verdict->checked) : "";
          if (r.verdict->ok) {
            if (!o.json)
              std::printf("%s Verifies OK on CPU reference (%.3g < %.3g%s) [%s]\n",
                          direction_title(p.direction), r.verdict->rel_error, r.verdict->tolerance,
                          how.c_str(), row.solver.c_str());
          } else {
            row.status = "wrong";
            row.detail = r.verdict->message;
            any_failed = true;
            if (!o.json)
              std::printf("%s FAILED: %s%s [%s]\n", direction_title(p.direction),
                          r.verdict->message.c_str(), how.c_str(), row.solver.c_str());
          }
        }
        if (o.trial.time && !o.json) {
          std::printf(
              "%s Elapsed: %.4f ms (mean of %d), min %.4f ms, first run %.4f ms, %.1f GFLOP/s "
              "[%s]\n",
              direction_title(p.direction), r.mean_ms, r.iterations, r.min_ms, r.first_ms,
              row.gflops, row.solver.c_str());
        }
        if (!o.save_dir.empty() && !saved_output && row.status != "wrong") {
          saved_output = true;
          for (auto& in : inputs_of(p, t)) {
            if (auto st = save_npy((std::filesystem::path(o.save_dir) / in.file).string(), in.view,
                                   p.spatial_dims);
                !st) {
              std::fprintf(stderr, "convguard driver: %s\n", st.message().c_str());
              return 2;
            }
          }
          if (auto st = save_npy((std::filesystem::path(o.save_dir) / output_file(p)).string(),
                                 t.output(p), p.spatial_dims);
              !st) {
            std::fprintf(stderr, "convguard driver: %s\n", st.message().c_str());
            return 2;
          }
        }
      }
      rows.push_back({{"problem", row.problem},
                      {"direction", to_string(p.direction)},
                      {"dtype", to_string(p.dtype)},
                      {"solver", row.solver},
                      {"status", row.status},
                      {"detail", row.detail},
                      {"first_ms", r.first_ms},
                      {"mean_ms", r.mean_ms},
                      {"min_ms", r.min_ms},
                      {"iterations", r.iterations},
                      {"gflops", row.gflops},
                      {"rel_error", row.err},
                      {"tolerance", row.tol},
                      {"workspace_bytes", r.workspace_bytes},
                      {"command", rerun_command(p, s->id(), o.device)}});
      table.push_back(row);
    }
  }
  if (o.json) {
    std::printf("%s\n", json_text(nlohmann::json{{"results", rows}}, 2).c_str());
  } else if (o.solver == "all") {
    std::printf("\n%-12s %-26s %-11s %10s %10s %9s %10s %10s %10s  %s\n", "direction", "solver",
                "status", "first ms", "mean ms", "GFLOP/s", "rel err", "tolerance", "workspace",
                "problem / reason");
    std::size_t i = 0;
    for (const Problem& p : o.problems) {
      for (std::size_t j = 0; j < solvers_on(o.device_kind).size() && i < table.size(); ++j, ++i) {
        const Row& r = table[i];
        if (r.status == "unsupported") {
          std::printf("%-12s %-26s %-11s %10s %10s %9s %10s %10s %10s  %s\n",
                      std::string(to_string(p.direction)).c_str(), r.solver.c_str(),
                      r.status.c_str(), "-", "-", "-", "-", "-", "-", r.detail.c_str());
          continue;
        }
        std::printf("%-12s %-26s %-11s %10.3f %10s %9.1f %10.2e %10.2e %9.1fM  %s%s\n",
                    std::string(to_string(p.direction)).c_str(), r.solver.c_str(), r.status.c_str(),
                    r.first_ms, o.trial.time ? fmt::format("{:.3f}", r.mean_ms).c_str() : "-",
                    r.gflops, r.err, r.tol, static_cast<double>(r.ws) / (1 << 20),
                    r.problem.c_str(), r.detail.empty() ? "" : ("  " + r.detail).c_str());
      }
    }
  }
  return any_failed ? 1 : 0;
}

}  // namespace convguard::cli
