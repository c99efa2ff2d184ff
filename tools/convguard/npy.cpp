#include "npy.hpp"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "core/tensor_iter.hpp"

namespace convguard::cli {
namespace {

const char* descr_for(DType t) {
  return t == DType::f16 ? "<f2" : "<f4";
}

std::string shape_text(const TensorDesc& d) {
  std::string s = "(";
  for (int i = 0; i < d.rank; ++i) s += fmt::format("{}, ", d.dims[i]);
  if (d.rank > 1) s.resize(s.size() - 2);
  return s + (d.rank == 1 ? ",)" : ")");
}

}  // namespace

Status save_npy(const std::string& path, const TensorView& t) {
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   descr_for(t.desc.dtype), shape_text(t.desc));
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

Status load_npy(const std::string& path, const TensorView& t) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {StatusCode::io_error, fmt::format("{}: cannot open", path)};
  char magic[8];
  f.read(magic, 8);
  if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return invalid_argument(fmt::format("{}: not a .npy file", path));
  }
  std::uint32_t hlen = 0;
  unsigned char b[4] = {};
  if (magic[6] == 1) {
    f.read(reinterpret_cast<char*>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else {
    f.read(reinterpret_cast<char*>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  }
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  if (!f) return invalid_argument(fmt::format("{}: truncated header", path));
  const std::string want_descr = descr_for(t.desc.dtype);
  if (header.find("'descr': '" + want_descr + "'") == std::string::npos) {
    return invalid_argument(fmt::format("{}: dtype must be {} for a {} tensor (header: {})", path,
                                        want_descr, to_string(t.desc.dtype), header));
  }
  if (header.find("'fortran_order': False") == std::string::npos) {
    return invalid_argument(fmt::format("{}: must be C order (fortran_order False)", path));
  }
  const std::string want_shape = "'shape': " + shape_text(t.desc);
  if (header.find(want_shape) == std::string::npos) {
    return invalid_argument(
        fmt::format("{}: shape must be {} (header: {})", path, shape_text(t.desc), header));
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
