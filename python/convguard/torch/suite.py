"""extract_suite: a model's distinct convolution problems as a suite file
(data/suites/models format), so `convguard probe --model PATH` answers "does my model work
here?" for any model."""

import collections

import torch

from . import _lib
from . import functional as cgF
from .convert import run_once
from .modules import conv_geometry_of

_DIRECTION_FLAG = {"fwd": "", "bwd_data": "--dir=BWD_D ", "bwd_weights": "--dir=BWD_W "}


def _channels_last(t):
    return t.dim() >= 4 and not t.is_contiguous() and (
        t.is_contiguous(memory_format=torch.channels_last) if t.dim() == 4
        else t.is_contiguous(memory_format=torch.channels_last_3d))


def _problems(m, x):
    """(direction, problem string) of one call of conv module m on input x."""
    transposed = isinstance(m, torch.nn.modules.conv._ConvTransposeNd)
    w = m.weight
    n = x.dim() - 2
    stride, dilation = list(m.stride), list(m.dilation)
    if transposed:
        padding = list(m.padding)
        ordinary_x = [x.shape[0], w.shape[1] * m.groups] + cgF.transposed_output_size(
            x.shape[-n:], m.kernel_size, stride, padding, dilation, m.output_padding)
        begin, end = padding, [p - o for p, o in zip(padding, m.output_padding)]
    else:
        _, begin, end, _ = conv_geometry_of(m)
        ordinary_x = list(x.shape)
        if m.padding_mode != "zeros":  # padded first, then convolved with no padding
            for i in range(n):
                ordinary_x[-n + i] += 2 * m.padding[i]
    # A transposed convolution runs the ordinary one's passes: fwd <-> bwd_data.
    wanted = []
    fwd, bwd = ("bwd_data", "fwd") if transposed else ("fwd", "bwd_data")
    wanted.append(fwd)
    if torch.is_grad_enabled():
        if w.requires_grad:
            wanted.append("bwd_weights")
        if x.requires_grad:
            wanted.append(bwd)
    return [(d, _lib.ops.problem_string(ordinary_x, list(w.shape), stride, begin, end, dilation,
                                        m.groups, x.dtype, _channels_last(x),
                                        _channels_last(w), d)) for d in wanted]


def extract_suite(model, example_inputs, path, training=False):
    """Runs `model` once on `example_inputs` and writes its distinct convolution problems to
    `path`, one line each, named after the first layer that has it with the count of layers
    ("layer1.0.conv1 (x3)"). training=True adds the backward passes each layer needs
    (backward-weights where the weight requires a gradient, backward-data where the layer's input
    does: never for a first layer). The model's parameters and buffers are left as they were."""
    seen = collections.OrderedDict()  # problem -> [first layer, count]
    calls = [0]

    def hook(module, inputs, _output, name):
        calls[0] += 1
        for _direction, problem in _problems(module, inputs[0]):
            entry = seen.setdefault(problem, [name, 0])
            entry[1] += 1

    handles = []
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.modules.conv._ConvNd):
            handles.append(m.register_forward_hook(
                lambda mod, i, o, name=name or type(m).__name__: hook(mod, i, o, name)))
    try:
        run_once(model, example_inputs, training)
    finally:
        for h in handles:
            h.remove()
    with open(path, "w") as f:
        f.write("# %s: convolution problems extracted by convguard.torch.extract_suite "
                "(training: %s).\n" % (type(model).__name__, "yes" if training else "no"))
        f.write("# %d distinct problems from %d layer calls; probe with: convguard probe "
                "--model %s\n" % (len(seen), calls[0], path))
        for problem, (layer, count) in seen.items():
            # A module name is any string (ModuleDict keys): nothing in it may end the quoted
            # name or the line, or it would be read back as another problem.
            name = "".join(c if c.isprintable() and c != '"' else "'" if c == '"' else "?"
                           for c in "%s (x%d)" % (layer, count))
            f.write('%s_n"%s"\n' % (problem, name))
    return list(seen)
