// Problems for cpu:bf16_planar:amx_bf16's pointwise path (1x1, no padding, channels-first x read
// in place), run by the AMX emulation test and, on a CPU with AMX, by Property: chunks within an
// image and across images (7 x 7), odd C and C past one 16-pair block, K not a multiple of 32,
// strides 2 and 3 (per-row runs; 3 one element at a time), odd widths, 1D and 3D, y
// channels-last, one chunk only (channel blocks split between threads), a C whose pairs fill a
// thread's buffer with one chunk, many groups a thread (at two sizes of group), output planes
// smaller than x's (end padding below zero, 2D and 3D), x with gaps between rows (explicit
// strides); and problems it must not take (end padding read, begin padding, channels-last x),
// which the grid path computes.
#pragma once

namespace convguard::testing {

struct PointwiseShape {
  const char* text;
  bool pointwise;  // the path cpu:bf16_planar:amx_bf16 must take (false: the grid)
};

inline constexpr PointwiseShape kBf16PointwiseShapes[] = {
    {"--dt=bf16 mb2ic40ih14iw14oc48oh14ow14kh1kw1", true},
    {"--dt=bf16 mb3ic33ih7iw7oc20oh7ow7kh1kw1", true},
    {"--dt=bf16 mb2ic70ih9iw11oc72oh9ow11kh1kw1", true},
    {"--dt=bf16 mb2ic64ih14iw14oc64oh7ow7kh1kw1sh2sw2", true},
    {"--dt=bf16 mb2ic34ih13iw13oc40oh7ow7kh1kw1sh2sw2", true},
    {"--dt=bf16 mb1ic32ih10iw20oc16oh4ow7kh1kw1sh3sw3", true},
    {"--dt=bf16 mb2ic32iw45oc33ow45kw1", true},
    {"--dt=bf16 mb2ic36id4ih5iw6oc40od4oh5ow6kd1kh1kw1", true},
    {"--dt=bf16 mb1ic32id5ih6iw7oc24od3oh3ow4kd1kh1kw1sd2sh2sw2", true},
    {"--dt=bf16 --dtag=axb mb2ic48ih9iw9oc40oh9ow9kh1kw1", true},
    {"--dt=bf16 mb1ic32ih3iw3oc200oh3ow3kh1kw1", true},
    {"--dt=bf16 mb1ic4100ih2iw3oc40oh2ow3kh1kw1", true},
    {"--dt=bf16 mb2ic40ih64iw64oc48oh64ow64kh1kw1", true},
    {"--dt=bf16 mb1ic600ih40iw40oc40oh40ow40kh1kw1", true},
    {"--dt=bf16 mb2ic32ih7iw7oc32oh4ow4kh1kw1sh2sw2ph0pw0", true},
    {"--dt=bf16 mb1ic32ih4iw4oc32oh3ow3kh1kw1", true},
    {"--dt=bf16 mb1ic32id3ih4iw4oc32od3oh3ow4kd1kh1kw1", true},
    {"--dt=bf16 --strides=1280x40x8x1:: mb2ic32ih5iw6oc40oh5ow6kh1kw1", true},
    {"--dt=bf16 mb2ic32ih8iw8oc32oh5ow5kh1kw1sh2sw2", false},
    {"--dt=bf16 mb2ic32ih8iw8oc32oh9ow9kh1kw1ph1pw1", false},
    {"--dt=bf16 --stag=axb mb2ic40ih9iw9oc48oh9ow9kh1kw1", false},
};

}  // namespace convguard::testing
