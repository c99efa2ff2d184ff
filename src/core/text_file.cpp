#include "core/text_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>

namespace convguard {

Status for_each_line(const std::string& path,
                     const std::function<Status(const std::string&, int)>& on_line,
                     std::size_t max_line) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return {StatusCode::io_error, fmt::format("cannot open '{}'", path)};
  if (S_ISDIR(st.st_mode))
    return {StatusCode::invalid_argument, fmt::format("'{}' is a directory, not a file", path)};
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return {StatusCode::io_error, fmt::format("cannot open '{}'", path)};
  std::string line;
  int lineno = 0;
  bool nul = false;
  for (;;) {
    const int c = std::fgetc(f.get());
    if (c == EOF || c == '\n') {
      if (c == EOF && std::ferror(f.get()))
        return {StatusCode::io_error, fmt::format("{}: read error after line {}", path, lineno)};
      if (c == EOF && line.empty()) break;
      ++lineno;
      if (nul)
        return invalid_argument(fmt::format("{}:{}: contains a NUL byte: not text", path, lineno));
      if (auto s = on_line(line, lineno); !s) return s;
      if (c == EOF) break;
      line.clear();
      continue;
    }
    if (line.size() >= max_line) {
      return invalid_argument(fmt::format("{}:{}: line longer than {} bytes: not a file of lines",
                                          path, lineno + 1, max_line));
    }
    nul = nul || c == 0;
    line.push_back(static_cast<char>(c));
  }
  return Status::ok();
}

}  // namespace convguard
