// oneDNN as the CPU benchmark's peer (linked directly, C++ API), for one problem in any direction
// and dtype oneDNN takes (f32, bf16): the convolution on the layouts oneDNN prefers
// (format_tag::any), with the caller's tensors in the problem's own layout.
//
//   exec():          the convolution alone; its inputs were reordered once, before timing, and
//                    its output stays in oneDNN's layout (what a framework that keeps blocked
//                    tensors between layers pays);
//   with_reorders(): the inputs reordered from the caller's layout, the convolution, the output
//                    reordered back: what a caller with plain (NCHW) tensors pays per call, as
//                    convguard's own solvers do.
// Every call says whether oneDNN succeeded; a failed call is not a time.
#pragma once

#include <memory>
#include <string>

#include "convguard/problem.hpp"
#include "convguard/status.hpp"
#include "convguard/tensor.hpp"

namespace convguard::bench {

class OnednnPeer {
 public:
  ~OnednnPeer();
  OnednnPeer(const OnednnPeer&) = delete;
  OnednnPeer& operator=(const OnednnPeer&) = delete;

  // The primitive, reorders and buffers for p over the caller's tensors t (which stay the
  // caller's: the peer reads the inputs and writes the output there).
  [[nodiscard]] static Result<std::unique_ptr<OnednnPeer>> create(const Problem& p,
                                                                  const ConvTensors& t);
  [[nodiscard]] Status exec();
  [[nodiscard]] Status with_reorders();
  std::string implementation() const;  // oneDNN's impl_info_str ("brgconv:avx512_core")

 private:
  struct State;
  explicit OnednnPeer(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// "oneDNN 2.6.3 (hash)"
std::string onednn_version();

}  // namespace convguard::bench
