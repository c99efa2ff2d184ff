#include "device_list.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "core/safe_text.hpp"

namespace convguard::cli {
namespace {

std::string kind_of(const std::string& device) {
  return device.substr(0, device.find(':'));
}

// The devices present of one kind, in index order.
std::vector<std::string> present_of(const std::string& kind, const PresentDevices& p) {
  std::vector<std::string> v;
  if (p.is_plugin_kind && p.is_plugin_kind(kind)) {
    for (const auto& d : p.plugin_devices)
      if (kind_of(d) == kind) v.push_back(d);
  } else if (kind == p.gpu_kind) {
    for (int i = 0; i < p.gpus; ++i) v.push_back(fmt::format("{}:{}", kind, i));
  }
  return v;
}

std::string everything(const PresentDevices& p) {
  std::vector<std::string> all{"cpu"};
  if (p.gpus > 0) all.push_back(fmt::format("{}:0..{}", p.gpu_kind, p.gpus - 1));
  all.insert(all.end(), p.plugin_devices.begin(), p.plugin_devices.end());
  return fmt::format("{}", fmt::join(all, ", "));
}

}  // namespace

Result<std::vector<std::string>> expand_devices(const std::string& text,
                                                const PresentDevices& present) {
  std::vector<std::string> out;
  std::vector<std::string> items;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) items.push_back(item);
  if (items.empty()) {
    out.push_back("cpu");
    for (const auto& d : present_of(present.gpu_kind, present)) out.push_back(d);
    out.insert(out.end(), present.plugin_devices.begin(), present.plugin_devices.end());
    return out;
  }
  for (const std::string& item : items) {
    std::vector<std::string> named;
    const std::string kind = kind_of(item);
    const std::vector<std::string> here = present_of(kind, present);
    const bool known = item == "cpu" || kind == present.gpu_kind ||
                       (present.is_plugin_kind && present.is_plugin_kind(kind));
    if (item == "cpu") {
      named.push_back(item);
    } else if (!known || item.find(':') == std::string::npos) {
      return invalid_argument(fmt::format(
          "--device: '{}' is not a device name (cpu, {}:N, {}:all, or a plugin's device such as "
          "hip:N; here: {})",
          item, present.gpu_kind, present.gpu_kind, everything(present)));
    } else if (item == kind + ":all") {
      if (here.empty())
        return invalid_argument(fmt::format("--device: '{}': no {} device is present here ({})",
                                            item, kind, everything(present)));
      named = here;
    } else {
      const std::string index = item.substr(kind.size() + 1);
      const std::optional<long> n = digits_only(index, 999999);
      if (!n)
        return invalid_argument(fmt::format(
            "--device: '{}' has no device index (expected {}:N with N a number, or {}:all)", item,
            kind, kind));
      const std::string canonical = fmt::format("{}:{}", kind, *n);
      if (std::find(here.begin(), here.end(), canonical) == here.end())
        return invalid_argument(
            fmt::format("--device: '{}' is not available here ({})", item, everything(present)));
      named.push_back(canonical);
    }
    for (const std::string& d : named) {
      if (std::find(out.begin(), out.end(), d) != out.end())
        return invalid_argument(fmt::format(
            "--device: '{}' is named twice in '{}' (each device gets one worker)", d, text));
      out.push_back(d);
    }
  }
  return out;
}

std::vector<std::vector<std::string>> device_sweeps(const std::vector<std::string>& devices) {
  std::vector<std::vector<std::string>> sweeps;
  for (const std::string& d : devices) {
    auto same = std::find_if(sweeps.begin(), sweeps.end(), [&](const auto& s) {
      return d != "cpu" && kind_of(s.front()) == kind_of(d);
    });
    if (same == sweeps.end())
      sweeps.push_back({d});
    else
      same->push_back(d);
  }
  return sweeps;
}

}  // namespace convguard::cli
