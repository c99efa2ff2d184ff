// Entry points of cpu:fwd_rows's and cpu:bwdd_rows's kernel files (rows_conv_avx512.cpp,
// rows_conv_avx2.cpp, rows_conv_bf16_avx512.cpp). Plain structs and pointers only: each kernel
// file is compiled with its ISA's flags, and a library template used there could be emitted as an
// ISA-specific weak copy (see bf16_kernels.hpp).
#pragma once

#include <cstdint>

namespace convguard::cpu::rows_conv {

// Words past a window that vector reads beyond its last row may touch: since every tile computes
// only vectors it stores, at most 15 (a flat or row tile's last vector); 8 vectors kept as margin.
constexpr std::int64_t kWindowSlack = 8 * 16;

// In backward-data's names (forward maps onto them: its y is "dx", its x "dy", the filter not
// flipped; rows_conv.cpp). Stride-1 backward-data as a forward pass over dy, zero-padded so that
// every input pixel's window lies inside it, with the filter flipped and its channel roles swapped:
//   dx[n][grp][c][r][iw] = sum over reduction rows j of w[grp][c block][j][c] *
//                          padded_dy[n][grp][row(r) + tap_at[j] + iw]
// where r runs over dx's (id, ih) rows and j = (k, flipped tap) over kg x taps. The padded dy is
// never built whole: a work item (image, group, dx depth slice, kRowsPerItem dx rows; on small
// images also a slice of the channel blocks, rows_conv_kernels.hpp: for_each_item) copies the
// part its rows read into a per-thread window (kg x kd planes x window_rows x padded width, in
// L2), so dy is read from memory about once and no padded copy goes through memory.
// Strided backward-data (rows_conv.cpp: plan_phases): dx split by its pixels' stride residues (qd,
// qh, qw) into phases. Along an axis of stride s, padding p and dilation dl, the pixels q, q + s,
// q + 2 s, ... of residue q are reached only by the taps kt with (q + p - kt dl) % s == 0, and
// phase pixel i of that residue reads dy at i + (q + p - kt dl) / s: a stride-1 correlation of dy
// with those taps of the flipped filter, run by the stride-1 tiles. Every phase of a work item
// reads the same window (dy's rows and planes from the lowest offset any tap has, Args::top), so
// it is filled once; each phase's tiles write the thread's phase outputs, which are then
// interleaved into the item's dx rows.
// Phases are in residue order (qd, qh, qw), so a phase's residue is its index's digits.
struct Phase {
  std::int64_t od, oh, ow;     // its dx pixels along d, h, w (0 when the residue passes dx)
  std::int64_t depth;          // its reduction rows; 0: no tap reaches it, its dx pixels are 0
  const std::int64_t* tap_at;  // per reduction row: its offset in the window (Args::tap_at)
  const void* w;               // its filter words, laid out as Args::w with its depth
};

struct Args {
  std::int64_t n, g, cg, kg, depth;  // images, groups, channels per group (dx, dy), kg x taps
  std::int64_t id, ih, iw;           // dx sizes
  std::int64_t od, oh, ow;           // dy sizes
  std::int64_t kd, dd;               // filter depth and its dilation: the window's planes
  std::int64_t top[3];               // dy pixel (od, oh, ow) is padded dy's (od + top[0], ...)
  // A window plane: window_rows rows of padded_w words. Stride 1: kRowsPerItem + dilated filter
  // height - 1 rows, each a padded dy row. Forward with strides (sd, sh, sw): dx row r of an item
  // reads window rows from r * sh, and a window row holds sw column phases of phase_w words each,
  // word t of phase p being padded column t * sw + p, so that the pixels a tap reads for
  // consecutive dx columns are consecutive words (tap kw: phase kw * dw % sw, from word kw * dw /
  // sw) and the tiles run as at stride 1. Backward-data: strides 1, its strides being phases
  // (below).
  std::int64_t window_rows, padded_w;
  std::int64_t sd, sh, sw;
  const std::int64_t* tap_at;  // per reduction row j: its offset in the window from dx's row
  // fp32 (run_avx512, run_avx2), or bf16 bits (run_bf16_avx512), for dy and dx alike.
  const void* dy;  // [n][g * kg][od][oh][ow]
  // The flipped filter as [g][ceil(cg / 6)][depth][6] 32-bit words, zero past cg: fp32 values,
  // or bf16 pairs of dy channels (k, k + 1), k's in the low half (depth counts the pairs).
  const void* w;
  void* dx;  // [n][g][cg][id][ih][iw], every element written
  // Per thread (omp_get_max_threads()): thread_words() 32-bit words, a window word being an fp32
  // dy value or a bf16 pair of dy channels.
  float* windows;
  std::int64_t window_floats() const { return window_planes * kd * window_rows * padded_w; }
  std::int64_t phase_w() const { return padded_w / sw; }  // padded_w is sw phases
  // Window words between an item's consecutive dx rows.
  std::int64_t row_step() const { return sh * padded_w; }
  // A thread's part of `windows`: its window, the slack, and with column phases a padded row in
  // input order that fill_window splits into them.
  std::int64_t thread_words() const {
    return window_floats() + kWindowSlack + (sw > 1 ? padded_w : 0) + phase_words();
  }
  std::int64_t window_planes;  // kg (fp32) or ceil(kg / 2) (bf16 pairs)
  // Whole aligned vectors are stored non-temporally (staged_solver.hpp: streams_output; not
  // the AVX2 copy's short forward reductions, rows_conv.cpp: kAvx2StreamFromDepth).
  bool stream_out;
  // Strided backward-data: phase_count phases (Phase above), the first of residue 0 (the most
  // pixels along every axis), and dx's strides. The window then steps as at stride 1 (sd, sh, sw
  // are 1, kd counts window planes one dy plane apart, dd is 1, top is where the lowest offset
  // any tap has lands), and a thread's words end with the phase outputs: per phase, kBlockChannels
  // channels x kRowsPerItem rows x the first phase's width (phases[0].ow) elements.
  const Phase* phases = nullptr;
  int phase_count = 0;
  std::int64_t dx_stride[3] = {1, 1, 1};
  std::int64_t phase_words() const;
};
// Channels a filter block holds (the most rows a register tile has).
constexpr int kBlockChannels = 6;
// dx rows a work item computes (a multiple of no tile's row count but 1, 2, 4, 8: others end an
// item with a short tile whose missing rows are not stored).
constexpr int kRowsPerItem = 8;
inline std::int64_t Args::phase_words() const {
  return phase_count == 0 ? 0 : phase_count * kBlockChannels * kRowsPerItem * phases[0].ow;
}
void run_avx512(const Args& a);
void run_avx2(const Args& a);
void run_bf16_avx512(const Args& a);

}  // namespace convguard::cpu::rows_conv
