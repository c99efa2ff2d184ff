#include "driver_args.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "convguard/canonical.hpp"
#include "convguard/memory.hpp"

namespace convguard::cli {

std::vector<FlagSpec> driver_flag_specs() {
  return {
      // MIOpenDriver conv flags: letter, long name and default as MIOpenDriver has them.
      {'_', "spatial_dim", "2", "convolution spatial dimension"},
      {'n', "batchsize", "100", "Mini-batch size"},
      {'c', "in_channels", "3", "Number of Input Channels"},
      {'!', "in_d", "32", "Input Depth"},
      {'H', "in_h", "32", "Input Height"},
      {'W', "in_w", "32", "Input Width"},
      {'I', "in_layout", "", "Input Layout (NCHW, NHWC, NCDHW, NDHWC)"},
      {'k', "out_channels", "32", "Number of Output Channels"},
      {'@', "fil_d", "3", "Filter Depth"},
      {'y', "fil_h", "3", "Filter Height"},
      {'x', "fil_w", "3", "Filter Width"},
      {'f', "fil_layout", "", "Filter Layout (NCHW, NHWC, NCDHW, NDHWC)"},
      {'O', "out_layout", "", "Output Layout (NCHW, NHWC, NCDHW, NDHWC)"},
      {'$', "pad_d", "0", "Zero Padding for Depth"},
      {'p', "pad_h", "0", "Zero Padding for Height"},
      {'q', "pad_w", "0", "Zero Padding for Width"},
      {'#', "conv_stride_d", "1", "Convolution Stride for Depth"},
      {'u', "conv_stride_h", "1", "Convolution Stride for Height"},
      {'v', "conv_stride_w", "1", "Convolution Stride for Width"},
      {'^', "dilation_d", "1", "Dilation of Filter Depth"},
      {'l', "dilation_h", "1", "Dilation of Filter Height"},
      {'j', "dilation_w", "1", "Dilation of Filter Width"},
      {'%', "trans_output_pad_d", "0", "Zero Padding Output for Depth (trans mode)"},
      {'Y', "trans_output_pad_h", "0", "Zero Padding Output for Height (trans mode)"},
      {'X', "trans_output_pad_w", "0", "Zero Padding Output for Width (trans mode)"},
      {'g', "group_count", "1", "Number of Groups"},
      {'m', "mode", "conv", "Convolution Mode (conv, trans)"},
      {'z', "pad_mode", "default", "Padding Mode (same, valid, default)"},
      {'F', "forw", "0",
       "Flag enables fwd, bwd, wrw convolutions (0 all, 1 fwd, 2 bwd data, 4 bwd weights, sums)"},
      {'b', "bias", "0", "Use Bias (not supported: must be 0)"},
      {'t', "time", "0", "Time Each Layer"},
      {'i', "iter", "10", "Number of Iterations"},
      {'V', "verify", "1", "Verify Each Layer"},
      {'S', "solution", "-1",
       "Solver id, 'all' (every applicable solver), or -1 (first applicable)"},
      {'P', "printconv", "1", "Print Convolution Dimensions"},
      {'w', "wall", "0", "Wall-clock Time (convguard always reports wall-clock time)"},
      {'s', "search", "0", "Search Kernel Config (-S all is convguard's search)"},
      // convguard extensions.
      {0, "solver", "", "same as -S (--solution)"},
      {0, "db", "",
       "results database for -S auto (default: $CONVGUARD_DB or ~/.cache/convguard/convguard.db)"},
      {0, "problem", "", "canonical problem string (benchdnn grammar); repeatable", false, true},
      {0, "suite", "", "file of canonical problem strings, one a line", false, true},
      {0, "device", "cpu", "device to run on: cpu, cuda:N, or a plugin's device (hip:N)"},
      {0, "tf32", "", "-S auto may choose TF32 variants (ids ending in :tf32) for f32", true},
      {0, "seed", "1", "seed of the random test data"},
      {0, "fill", "uniform", "test data: uniform (in [-1,1)) or integer (small integers; exact)"},
      {0, "threads", "0", "CPU threads (0: OMP_NUM_THREADS or all cores)"},
      {0, "memory-limit", "",
       "host memory a problem may use (bytes, or K/M/G/T); default: $CONVGUARD_MEMORY_LIMIT, else "
       "90% of available memory"},
      {0, "json", "", "print results as JSON", true},
      {0, "save-dir", "", "write x/w/dy.npy (inputs) and y/dx/dw.npy (outputs) here"},
      {0, "load-dir", "", "read the inputs (x/w/dy.npy) from here instead of the seed"},
      {'h', "help", "", "print this help", true},
  };
}

namespace {

std::vector<Direction> directions_of(std::int64_t forw) {
  std::vector<Direction> d;
  if (forw == 0 || (forw & 1)) d.push_back(Direction::forward);
  if (forw == 0 || (forw & 2)) d.push_back(Direction::backward_data);
  if (forw == 0 || (forw & 4)) d.push_back(Direction::backward_weights);
  return d;
}

}  // namespace

Result<DriverOptions> driver_options(const Flags& f, const std::string& command) {
  DriverOptions o;
  auto get = [&](const char* name) { return f.integer(name); };
#define CG_INT(var, name)                \
  auto var##_r = get(name);              \
  if (!var##_r) return var##_r.status(); \
  const std::int64_t var = *var##_r;
  CG_INT(forw, "forw");
  if (forw < 0 || forw > 7)
    return invalid_argument(fmt::format("flag -F (--forw): {} is not 0..7", forw));
  CG_INT(verify, "verify");
  CG_INT(time, "time");
  auto get_in = [&](const char* name, std::int64_t lo, std::int64_t hi) {
    return f.integer_in(name, lo, hi);
  };
#define CG_INT_IN(var, name, lo, hi)     \
  auto var##_r = get_in(name, lo, hi);   \
  if (!var##_r) return var##_r.status(); \
  const std::int64_t var = *var##_r;
  CG_INT_IN(iter, "iter", 1, 1000000);
  CG_INT(seed, "seed");
  CG_INT_IN(threads, "threads", 0, 4096);
  CG_INT(printconv, "printconv");
  CG_INT(bias, "bias");
  if (bias != 0)
    return invalid_argument("flag -b (--bias): bias is not supported by convguard (use -b 0)");
  o.threads = static_cast<int>(threads);
  if (f.given("memory-limit")) {
    auto limit = parse_memory_size(f.str("memory-limit").c_str());
    if (!limit) return invalid_argument("flag --memory-limit: " + limit.status().message());
    o.memory_limit = *limit;
  }
  o.device = f.str("device");
  o.allow_tf32 = f.on("tf32");
  const std::string fill = f.str("fill");
  if (fill != "uniform" && fill != "integer")
    return invalid_argument("flag --fill: must be uniform or integer");
  o.trial.fill = fill == "integer" ? FillMode::integer : FillMode::uniform;
  o.trial.verify = verify != 0;
  o.trial.time = time != 0;
  o.trial.iterations = static_cast<int>(iter);
  o.trial.seed = static_cast<std::uint64_t>(seed);
  o.print_problem = printconv != 0;
  o.json = f.on("json");
  o.save_dir = f.str("save-dir");
  o.db = f.str("db");
  o.load_dir = f.str("load-dir");
  const std::string sol = f.given("solver") ? f.str("solver") : f.str("solution");
  o.solver = sol == "-1" ? "" : sol;

  // Problems from --problem / --suite: their own direction unless -F is given.
  std::vector<Problem> listed;
  for (const auto& s : f.all("problem")) {
    auto p = parse_problem(s);
    if (!p) return invalid_argument("--problem: " + p.status().message());
    listed.push_back(*p);
  }
  for (const auto& path : f.all("suite")) {
    auto suite = read_problem_file(path);
    if (!suite) return Status{suite.status().code(), "--suite: " + suite.status().message()};
    listed.insert(listed.end(), suite->begin(), suite->end());
  }
  if (!listed.empty()) {
    if (!command.empty())
      return invalid_argument(
          fmt::format("'{}' with --problem/--suite: give one or the other", command));
    for (const Problem& p : listed) {
      if (f.given("forw")) {
        for (Direction d : directions_of(forw)) {
          Problem q = p;
          q.direction = d;
          o.problems.push_back(q);
        }
      } else {
        o.problems.push_back(p);
      }
    }
    return o;
  }

  DType dtype;
  if (command == "conv")
    dtype = DType::f32;
  else if (command == "convfp16")
    dtype = DType::f16;
  else if (command == "convbfp16")
    dtype = DType::bf16;
  else if (command.empty())
    return invalid_argument(
        "driver: give a command (conv, convfp16, convbfp16), --problem or --suite");
  else
    return invalid_argument(
        fmt::format("driver: unknown command '{}' (conv, convfp16, convbfp16)", command));

  CG_INT(sdim, "spatial_dim");
  if (sdim != 2 && sdim != 3)
    return invalid_argument(fmt::format("flag -_ (--spatial_dim): must be 2 or 3 (got {})", sdim));
  // Sizes are range-checked here, before the arithmetic below ('same' padding, transposed
  // output sizes) could overflow; validate() then names what is inconsistent.
  CG_INT_IN(n, "batchsize", -kMaxFieldValue, kMaxFieldValue);
  CG_INT_IN(c, "in_channels", -kMaxFieldValue, kMaxFieldValue);
  CG_INT_IN(k, "out_channels", -kMaxFieldValue, kMaxFieldValue);
  CG_INT_IN(g, "group_count", -kMaxFieldValue, kMaxFieldValue);
  const char* in_f[3] = {"in_d", "in_h", "in_w"};
  const char* fil_f[3] = {"fil_d", "fil_h", "fil_w"};
  const char* pad_f[3] = {"pad_d", "pad_h", "pad_w"};
  const char* str_f[3] = {"conv_stride_d", "conv_stride_h", "conv_stride_w"};
  const char* dil_f[3] = {"dilation_d", "dilation_h", "dilation_w"};
  const char* opad_f[3] = {"trans_output_pad_d", "trans_output_pad_h", "trans_output_pad_w"};
  Dims3 in{1, 1, 1}, fil{1, 1, 1}, pad{0, 0, 0}, str{1, 1, 1}, dil{1, 1, 1}, opad{0, 0, 0};
  for (int d = (sdim == 3 ? 0 : 1); d < 3; ++d) {
    for (auto [arr, name] : {std::pair{&in, in_f[d]},
                             {&fil, fil_f[d]},
                             {&pad, pad_f[d]},
                             {&str, str_f[d]},
                             {&dil, dil_f[d]},
                             {&opad, opad_f[d]}}) {
      auto v = get_in(name, -kMaxFieldValue, kMaxFieldValue);
      if (!v) return v.status();
      (*arr)[d] = *v;
    }
  }
  // Name the MIOpenDriver flag in errors about the problem's geometry.
  auto flag_error = [&](const Status& st) {
    return invalid_argument(st.message() +
                            " (flags: -n -c -k -g -! -H -W -@ -y -x -$ -p -q -# -u -v -^ -l -j)");
  };
  const std::string mode = f.str("mode");
  if (mode != "conv" && mode != "trans")
    return invalid_argument(fmt::format("flag -m (--mode): '{}' is not conv or trans", mode));
  const std::string pad_mode = f.str("pad_mode");
  if (pad_mode != "default" && pad_mode != "same" && pad_mode != "valid") {
    return invalid_argument(
        fmt::format("flag -z (--pad_mode): '{}' is not default, same or valid", pad_mode));
  }
  Layout layouts[3] = {Layout::nchw, Layout::nchw, Layout::nchw};
  const char* layout_flags[3] = {"in_layout", "fil_layout", "out_layout"};
  for (int i = 0; i < 3; ++i) {
    const std::string s = f.str(layout_flags[i]);
    if (s.empty()) continue;
    auto l = parse_layout(s);
    const bool rank_ok = s.size() == static_cast<std::size_t>(sdim + 2);
    if (!l || !rank_ok) {
      return invalid_argument(fmt::format("flag {}: '{}' is not a {}D layout ({})",
                                          f.name_of(layout_flags[i]), s, sdim,
                                          sdim == 3 ? "NCDHW or NDHWC" : "NCHW or NHWC"));
    }
    layouts[i] = *l;
  }
  for (Direction dir : directions_of(forw)) {
    Problem p;
    if (mode == "trans") {
      TransposedConv t;
      t.spatial_dims = static_cast<int>(sdim);
      t.g = g;
      t.n = n;
      t.in_channels = c;
      t.out_channels = k;
      t.input = in;
      t.filter = fil;
      t.stride = str;
      t.dilation = dil;
      t.pad = pad;
      t.output_padding = opad;
      t.direction = dir;
      t.dtype = dtype;
      auto r = problem_from_transposed(t);
      if (!r) return flag_error(r.status());
      p = *r;
    } else {
      p.spatial_dims = static_cast<int>(sdim);
      p.g = g;
      p.n = n;
      p.c = c;
      p.k = k;
      p.input = in;
      p.filter = fil;
      p.stride = str;
      p.dilation = dil;
      p.pad_begin = pad;
      p.pad_end = pad;
      p.direction = dir;
      p.dtype = dtype;
      for (int d = (sdim == 3 ? 0 : 1); d < 3; ++d) {
        if (pad_mode == "valid") {
          p.pad_begin[d] = p.pad_end[d] = 0;
        } else if (pad_mode == "same" && str[d] > 0 && in[d] > 0) {
          // Output = ceil(input / stride); the padding it needs is split, extra at the end.
          const std::int64_t out = (in[d] + str[d] - 1) / str[d];
          // (out - 1) * str + 1 - in is at most the stride; the dilated filter's extent may
          // overflow, and so may its sum with that (summed in another order, an intermediate
          // overflowed: fuzz/driver_flags.cpp, -W 2^40 -x 2^40 -j 2^23 -z same).
          std::int64_t eff = 0, total = 0;
          if (__builtin_mul_overflow(fil[d] - 1, dil[d], &eff) ||
              __builtin_add_overflow(eff, (out - 1) * str[d] + 1 - in[d], &total))
            return flag_error(invalid_argument("filter size times dilation overflows"));
          total = std::max<std::int64_t>(0, total);
          p.pad_begin[d] = total / 2;
          p.pad_end[d] = total - total / 2;
        }
      }
    }
    p.x_layout = layouts[0];
    p.w_layout = layouts[1];
    p.y_layout = layouts[2];
    if (auto st = validate(p); !st) return flag_error(st);
    o.problems.push_back(p);
  }
  return o;
#undef CG_INT
}

}  // namespace convguard::cli
