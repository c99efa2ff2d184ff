#!/usr/bin/env python3
"""Writes data/suites/models/*.txt: the distinct convolution layers of each model as canonical
problem strings (benchdnn grammar) at batch 1, forward; each name lists the layers of that shape
and ends with "(xN)", how many times the shape occurs. `convguard probe --model NAME --batch B`
reads them. A developer tool: the files are committed; rerun after editing a model here."""
import os
from collections import OrderedDict

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "suites", "models")


class Model:
    def __init__(self, name, about):
        self.name, self.about, self.layers = name, about, OrderedDict()

    def conv(self, name, cin, cout, size, k, s=1, p=None, g=1, transposed=False):
        """A 1D (size a 1-list: [w]), 2D (size an int: size^2) or 3D (size a 3-tuple) conv;
        returns the output size in the same form. transposed: a transposed conv (upsampling),
        stored as the backward-data pass of the ordinary conv it is the transpose of."""
        if p is None:
            p = (k - 1) // 2
        if isinstance(size, list):
            return [self.conv(name, cin, cout, ("w", size[0]), k, s, p, g, transposed)[1]]
        if isinstance(size, tuple) and size[0] == "w":  # 1D, marked in the key
            out = (size[1] + 2 * p - k) // s + 1
            self.layers.setdefault(("fwd", cin, cout, size, k, s, p, g), []).append(name)
            return ("w", out)
        dims = size if isinstance(size, tuple) else (size,)
        if transposed:
            out = tuple((i - 1) * s - 2 * p + k for i in dims)
            key = ("bwd_d", cout, cin, out, k, s, p, g)  # the ordinary conv: out -> dims
        else:
            out = tuple((i + 2 * p - k) // s + 1 for i in dims)
            key = ("fwd", cin, cout, dims, k, s, p, g)
        self.layers.setdefault(key, []).append(name)
        return out if isinstance(size, tuple) else out[0]

    def text(self):
        lines = ["# " + l for l in self.about.strip().splitlines()]
        lines.append(f"# {len(self.layers)} distinct conv layers, "
                     f"{sum(len(v) for v in self.layers.values())} in all; batch 1 here "
                     "(probe --model --batch sets it).")
        for (direction, cin, cout, dims, k, s, p, g), names in self.layers.items():
            shown = " ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
            label = f'_n"{shown} (x{len(names)})"'
            pre = "--dir=BWD_D " if direction == "bwd_d" else ""
            gs = f"g{g}" if g > 1 else ""
            if dims[0] == "w":
                lines.append(f"{pre}{gs}mb1ic{cin}iw{dims[1]}oc{cout}kw{k}sw{s}pw{p}{label}")
            elif len(dims) == 3:
                d, h, w = dims
                lines.append(f"{pre}{gs}mb1ic{cin}id{d}ih{h}iw{w}oc{cout}kd{k}kh{k}kw{k}"
                             f"sd{s}sh{s}sw{s}pd{p}ph{p}pw{p}{label}")
            else:
                lines.append(f"{pre}{gs}mb1ic{cin}ih{dims[0]}oc{cout}kh{k}sh{s}ph{p}{label}")
        return "\n".join(lines) + "\n"


def seed003_cnn():
    m = Model("seed003_cnn", "Seed 003's test CNN (TestCNN): three 3x3 convs with 2x2 max pools, "
              "64x64 RGB input.")
    h = m.conv("conv1", 3, 32, 64, 3)
    h = m.conv("conv2", 32, 64, h // 2, 3)
    m.conv("conv3", 64, 128, h // 2, 3)
    return m


def cifar_cnn():
    m = Model("cifar_cnn", "A VGG-style CIFAR-10 CNN: three stages of two 3x3 convs "
              "(32, 64, 128 channels) with 2x2 max pools, 32x32 RGB input.")
    h, c = 32, 3
    for stage, k in enumerate((32, 64, 128), 1):
        h = m.conv(f"conv{stage}_1", c, k, h, 3)
        h = m.conv(f"conv{stage}_2", k, k, h, 3)
        c, h = k, h // 2
    return m


def mobilenet_v2():
    m = Model("mobilenet_v2", "MobileNetV2 (torchvision, width 1.0), 224x224 input: inverted "
              "residual blocks of 1x1 expand, 3x3 depthwise, 1x1 project.")
    h = m.conv("features.0", 3, 32, 224, 3, 2)
    c, i = 32, 1
    for t, cout, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                          (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for r in range(n):
            hidden = c * t
            if t != 1:
                m.conv(f"features.{i}.expand", c, hidden, h, 1)
            h = m.conv(f"features.{i}.dw", hidden, hidden, h, 3, s if r == 0 else 1, g=hidden)
            m.conv(f"features.{i}.project", hidden, cout, h, 1)
            c, i = cout, i + 1
    m.conv("features.18", 320, 1280, h, 1)
    return m


def efficientnet_b0():
    m = Model("efficientnet_b0", "EfficientNet-B0 (torchvision), 224x224 input: MBConv blocks "
              "(1x1 expand, kxk depthwise, squeeze-excitation as two 1x1 convs on 1x1, 1x1 "
              "project); symmetric padding (k-1)/2.")
    h = m.conv("stem", 3, 32, 224, 3, 2)
    c, b = 32, 0
    for t, k, s, cout, n in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2),
                             (6, 3, 2, 80, 3), (6, 5, 1, 112, 3), (6, 5, 2, 192, 4),
                             (6, 3, 1, 320, 1)]:
        for r in range(n):
            hidden, squeeze = c * t, max(1, c // 4)
            if t != 1:
                m.conv(f"blocks.{b}.expand", c, hidden, h, 1)
            h = m.conv(f"blocks.{b}.dw", hidden, hidden, h, k, s if r == 0 else 1, g=hidden)
            m.conv(f"blocks.{b}.se_reduce", hidden, squeeze, 1, 1)
            m.conv(f"blocks.{b}.se_expand", squeeze, hidden, 1, 1)
            m.conv(f"blocks.{b}.project", hidden, cout, h, 1)
            c, b = cout, b + 1
    m.conv("head", 320, 1280, h, 1)
    return m


def resnet(depth):
    bottleneck = depth == 50
    about = ("bottleneck blocks, v1.5: the stride is in the 3x3 conv" if bottleneck else
             "basic blocks of two 3x3 convs")
    m = Model(f"resnet{depth}", f"ResNet-{depth} (torchvision; {about}), 224x224 input.")
    h = m.conv("conv1", 3, 64, 224, 7, 2, 3) // 2  # then a 3x3 stride-2 max pool
    c = 64
    blocks = [3, 4, 6, 3] if bottleneck else [2, 2, 2, 2]
    for li, (n, width) in enumerate(zip(blocks, (64, 128, 256, 512)), 1):
        for b in range(n):
            s = 2 if b == 0 and li > 1 else 1
            name = f"layer{li}.{b}"
            out = width * 4 if bottleneck else width
            if bottleneck:
                m.conv(f"{name}.conv1", c, width, h, 1)
                h2 = m.conv(f"{name}.conv2", width, width, h, 3, s)
                m.conv(f"{name}.conv3", width, out, h2, 1)
            else:
                h2 = m.conv(f"{name}.conv1", c, width, h, 3, s)
                m.conv(f"{name}.conv2", width, width, h2, 3)
            if b == 0 and (s != 1 or c != out):
                m.conv(f"{name}.downsample", c, out, h, 1, s, 0)
            c, h = out, h2
    return m


def darknet53():
    m = Model("yolo_darknet53", "The YOLOv3 detector's backbone, Darknet-53, at 416x416: 3x3 "
              "stride-2 downsampling convs and residual pairs of 1x1 (halving) and 3x3 convs; "
              "the detection heads are not included.")
    h = m.conv("conv0", 3, 32, 416, 3)
    c = 32
    for stage, n in enumerate((1, 2, 8, 8, 4), 1):
        h = m.conv(f"down{stage}", c, 2 * c, h, 3, 2)
        c *= 2
        for r in range(n):
            m.conv(f"res{stage}.{r}.conv1", c, c // 2, h, 1)
            m.conv(f"res{stage}.{r}.conv2", c // 2, c, h, 3)
    return m


def unet3d():
    m = Model("unet3d", "A 3D U-Net (Cicek et al. 2016 channel plan: 32/64, 64/128, 128/256, "
              "256/512) with padded 3x3x3 convs, 64^3 single-channel input, 2x2x2 transposed-"
              "conv upsampling (stored as the backward-data pass of its ordinary conv) and a "
              "1x1x1 head for 3 classes.")
    s, c, skips = (64, 64, 64), 1, []
    plan = [(32, 64), (64, 128), (128, 256), (256, 512)]
    for lvl, (a, b) in enumerate(plan, 1):
        s = m.conv(f"enc{lvl}.conv1", c, a, s, 3)
        s = m.conv(f"enc{lvl}.conv2", a, b, s, 3)
        c = b
        if lvl < len(plan):
            skips.append((b, s))
            s = tuple(x // 2 for x in s)
    for lvl in range(len(plan) - 1, 0, -1):
        skip_c, skip_s = skips[lvl - 1]
        s = m.conv(f"up{lvl}", c, c, s, 2, 2, 0, transposed=True)
        s = m.conv(f"dec{lvl}.conv1", c + skip_c, skip_c, s, 3)
        c = skip_c
        s = m.conv(f"dec{lvl}.conv2", c, c, s, 3)
    m.conv("head", c, 3, s, 1)
    return m


def wav2vec2_features():
    m = Model("wav2vec2_features", "wav2vec 2.0's feature encoder (1D; Baevski et al. 2020): "
              "seven convolutions over 1 s of 16 kHz mono audio, 512 channels, kernels "
              "10,3,3,3,3,2,2, strides 5,2,2,2,2,2,2, no padding.")
    w, c = [16000], 1
    for i, (k, s) in enumerate([(10, 5), (3, 2), (3, 2), (3, 2), (3, 2), (2, 2), (2, 2)]):
        w, c = m.conv(f"conv{i}", c, 512, w, k, s, 0), 512
    return m


MODELS = [seed003_cnn(), cifar_cnn(), mobilenet_v2(), efficientnet_b0(), resnet(18),
          resnet(50), darknet53(), unet3d(), wav2vec2_features()]

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for m in MODELS:
        with open(os.path.join(OUT, m.name + ".txt"), "w") as f:
            f.write(m.text())
        print(f"{m.name}: {len(m.layers)} distinct layers")
