#include "npy.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

#include "core/tensor_iter.hpp"

namespace convguard::cli {
namespace {

const char* descr_for(DType t) {
  return t == DType::f16 ? "<f2" : "<f4";
}

// The array's shape: the tensor's dims without a 1D problem's unit height.
std::vector<std::int64_t> shape_of(const TensorDesc& d, int spatial_dims) {
  std::vector<std::int64_t> v;
  for (int i = 0; i < d.rank; ++i)
    if (!(spatial_dims == 1 && i == 2)) v.push_back(d.dims[i]);
  return v;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::int64_t v : shape) s += fmt::format("{}, ", v);
  if (shape.size() > 1) s.resize(s.size() - 2);
  return s + (shape.size() == 1 ? ",)" : ")");
}

constexpr std::uint32_t kMaxHeader = 65536;

struct Header {
  std::string descr;
  bool fortran_order = true;
  std::vector<std::int64_t> shape;
};

// The header is a Python dict literal with exactly the keys 'descr' (a string), 'fortran_order'
// (True/False) and 'shape' (a tuple of integers), each once, then spaces and a newline. Parsed,
// not searched: text that merely contains the expected words (under another key, in a string) is
// refused.
Result<Header> parse_header(std::string_view h) {
  std::size_t i = 0;
  auto ws = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\t')) ++i;
  };
  auto eat = [&](char c) {
    ws();
    if (i < h.size() && h[i] == c) {
      ++i;
      return true;
    }
    return false;
  };
  auto string = [&]() -> std::optional<std::string> {
    ws();
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) return std::nullopt;
    const char q = h[i++];
    const auto end = h.find(q, i);
    if (end == std::string_view::npos) return std::nullopt;
    std::string s(h.substr(i, end - i));
    i = end + 1;
    return s;
  };
  Header out;
  bool seen[3] = {false, false, false};
  if (!eat('{')) return invalid_argument("not a dict");
  while (!eat('}')) {
    auto key = string();
    if (!key || !eat(':')) return invalid_argument("expected 'key': value");
    ws();
    if (*key == "descr" && !seen[0]) {
      auto v = string();
      if (!v) return invalid_argument("descr: not a string");
      out.descr = *v;
      seen[0] = true;
    } else if (*key == "fortran_order" && !seen[1]) {
      if (h.substr(i, 4) == "True") {
        out.fortran_order = true, i += 4;
      } else if (h.substr(i, 5) == "False") {
        out.fortran_order = false, i += 5;
      } else {
        return invalid_argument("fortran_order: not True or False");
      }
      seen[1] = true;
    } else if (*key == "shape" && !seen[2]) {
      if (!eat('(')) return invalid_argument("shape: not a tuple");
      while (!eat(')')) {
        ws();
        std::int64_t v = 0;
        auto [p, ec] = std::from_chars(h.data() + i, h.data() + h.size(), v);
        if (ec != std::errc() || v < 0) return invalid_argument("shape: not a tuple of sizes");
        i = static_cast<std::size_t>(p - h.data());
        out.shape.push_back(v);
        if (out.shape.size() > 8) return invalid_argument("shape: more than 8 dimensions");
        if (!eat(',') && !(ws(), i < h.size() && h[i] == ')'))
          return invalid_argument("shape: expected ',' or ')'");
      }
      seen[2] = true;
    } else {
      return invalid_argument(fmt::format("unexpected or repeated key '{}'", *key));
    }
    if (!eat(',') && !(ws(), i < h.size() && h[i] == '}'))
      return invalid_argument("expected ',' or '}'");
  }
  while (i < h.size() && (h[i] == ' ' || h[i] == '\n')) ++i;
  if (i != h.size()) return invalid_argument("text after the dict");
  if (!seen[0] || !seen[1] || !seen[2])
    return invalid_argument("needs 'descr', 'fortran_order' and 'shape'");
  return out;
}

}  // namespace

Status save_npy(const std::string& path, const TensorView& t, int spatial_dims) {
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                  descr_for(t.desc.dtype), shape_text(shape_of(t.desc, spatial_dims)));
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return {StatusCode::io_error, fmt::format("{}: cannot open for writing", path)};
  f.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  const unsigned char le[2] = {static_cast<unsigned char>(len & 0xff),
                               static_cast<unsigned char>(len >> 8)};
  f.write(reinterpret_cast<const char*>(le), 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  const std::int64_t n = t.desc.elements();
  const DType dt = t.desc.dtype;
  if (dt == DType::f16) {
    std::vector<std::uint16_t> out(static_cast<std::size_t>(n));
    const auto* src = static_cast<const std::uint16_t*>(t.data);
    detail::for_each_element(t.desc, [&](std::int64_t lin, std::int64_t off) {
      out[static_cast<std::size_t>(lin)] = src[off];
    });
    f.write(reinterpret_cast<const char*>(out.data()),
            static_cast<std::streamsize>(out.size() * 2));
  } else {
    std::vector<float> out(static_cast<std::size_t>(n));
    detail::for_each_element(t.desc, [&](std::int64_t lin, std::int64_t off) {
      out[static_cast<std::size_t>(lin)] = load_as_float(t.data, off, dt);
    });
    f.write(reinterpret_cast<const char*>(out.data()),
            static_cast<std::streamsize>(out.size() * 4));
  }
  if (!f) return {StatusCode::io_error, fmt::format("{}: write failed", path)};
  return Status::ok();
}

Status load_npy(const std::string& path, const TensorView& t, int spatial_dims) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {StatusCode::io_error, fmt::format("{}: cannot open", path)};
  char magic[8];
  f.read(magic, 8);
  if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return invalid_argument(fmt::format("{}: not a .npy file", path));
  }
  // Versions 1.0 (2-byte header length), 2.0 and 3.0 (4-byte); the header is at most 64 KiB
  // (NumPy writes far less) and no longer than the file: a 20-byte file once made this allocate
  // and zero 4 GiB before reading.
  if ((magic[6] != 1 && magic[6] != 2 && magic[6] != 3) || magic[7] != 0)
    return invalid_argument(
        fmt::format("{}: unknown .npy version {}.{}", path, int(magic[6]), int(magic[7])));
  std::uint32_t hlen = 0;
  unsigned char b[4] = {};
  if (magic[6] == 1) {
    f.read(reinterpret_cast<char*>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else {
    f.read(reinterpret_cast<char*>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  }
  if (!f) return invalid_argument(fmt::format("{}: truncated header", path));
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);
  if (hlen > kMaxHeader || ec || hlen > file_size)
    return invalid_argument(
        fmt::format("{}: header length {} is not plausible (at most {} bytes, "
                    "and within the file)",
                    path, hlen, kMaxHeader));
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  if (!f) return invalid_argument(fmt::format("{}: truncated header", path));
  auto h = parse_header(header);
  if (!h) return invalid_argument(fmt::format("{}: header: {}", path, h.status().message()));
  const std::string want_descr = descr_for(t.desc.dtype);
  if (h->descr != want_descr) {
    return invalid_argument(fmt::format("{}: dtype must be {} for a {} tensor (got '{}')", path,
                                        want_descr, to_string(t.desc.dtype), h->descr));
  }
  if (h->fortran_order)
    return invalid_argument(fmt::format("{}: must be C order (fortran_order False)", path));
  const std::vector<std::int64_t> want_shape = shape_of(t.desc, spatial_dims);
  if (h->shape != want_shape) {
    return invalid_argument(
        fmt::format("{}: shape must be {} (header: {})", path, shape_text(want_shape), header));
  }
  const std::int64_t n = t.desc.elements();
  const DType dt = t.desc.dtype;
  if (dt == DType::f16) {
    std::vector<std::uint16_t> in(static_cast<std::size_t>(n));
    f.read(reinterpret_cast<char*>(in.data()), static_cast<std::streamsize>(in.size() * 2));
    if (!f) return invalid_argument(fmt::format("{}: fewer values than its shape says", path));
    auto* dst = static_cast<std::uint16_t*>(t.data);
    detail::for_each_element(t.desc, [&](std::int64_t lin, std::int64_t off) {
      dst[off] = in[static_cast<std::size_t>(lin)];
    });
  } else {
    std::vector<float> in(static_cast<std::size_t>(n));
    f.read(reinterpret_cast<char*>(in.data()), static_cast<std::streamsize>(in.size() * 4));
    if (!f) return invalid_argument(fmt::format("{}: fewer values than its shape says", path));
    detail::for_each_element(t.desc, [&](std::int64_t lin, std::int64_t off) {
      store_from_float(t.data, off, dt, in[static_cast<std::size_t>(lin)]);
    });
  }
  return Status::ok();
}

}  // namespace convguard::cli
