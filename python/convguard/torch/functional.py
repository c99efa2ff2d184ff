"""Convolutions through convguard: conv (1D, 2D, 3D) and conv_transpose, with autograd.

Arguments are torch.nn.functional's. Padding may also be "same", "valid", or per spatial
dimension a (start, end) pair, e.g. ((0, 1), (1, 2)): asymmetric padding without a copy.
A 1D convolution is a 1D problem to convguard (recorded and selected as one); its solvers run it
as the exact 2D lift with height 1.
"""

import torch
import torch.nn.functional as F

from . import _lib
from .options import get_options

_COMPUTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


class NoVerifiedSolverError(RuntimeError):
    """No solver or workaround is verified for a layer's problem on this device; the message
    names the layer, its problem string and the evidence."""


def _tuple(v, n, name):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    if len(v) != n or not all(isinstance(e, int) for e in v):
        raise ValueError("convguard: %s %r: expected an int or %d ints" % (name, v, n))
    return v


def padding_of(padding, kernel, dilation, stride, n):
    """(pad_begin, pad_end) lists for PyTorch's padding argument (see the module docstring)."""
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * n, [0] * n
        if padding != "same":
            raise ValueError("convguard: padding %r is not 'same', 'valid', an int or a tuple"
                             % padding)
        if any(s != 1 for s in stride):
            raise ValueError("convguard: padding='same' needs stride 1 (as in PyTorch)")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        # PyTorch puts the odd one at the end.
        return [t // 2 for t in total], [t - t // 2 for t in total]
    if isinstance(padding, int):
        return [padding] * n, [padding] * n
    padding = tuple(padding)
    if len(padding) == n and all(isinstance(p, int) for p in padding):
        return list(padding), list(padding)
    if len(padding) == n and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in padding):
        return [p[0] for p in padding], [p[1] for p in padding]
    raise ValueError("convguard: padding %r: expected an int, %d ints, %d (start, end) pairs, "
                     "'same' or 'valid'" % (padding, n, n))


def _spatial_dims(x, w, layer):
    """1, 2 or 3 from w (K, C/g, spatial...); x has that many + 2 dimensions, or + 1 unbatched."""
    n = w.dim() - 2
    if n not in (1, 2, 3) or x.dim() not in (n + 1, n + 2):
        raise ValueError("convguard: layer '%s': x has %d dimensions, w %d (w: 3 to 5; x: one "
                         "more, or as many unbatched)" % (layer, x.dim(), w.dim()))
    return n


def _reraise(e):
    if str(e).startswith("convguard: layer"):
        raise NoVerifiedSolverError(str(e)) from None
    raise e


def _torch_conv(x, w, bias, stride, pad_begin, pad_end, dilation, groups):
    n = x.dim() - 2
    if pad_begin != pad_end:
        pads = []
        for b, e in zip(reversed(pad_begin), reversed(pad_end)):
            pads += [b, e]
        x = F.pad(x, pads)
        pad_begin = [0] * n
    return (F.conv1d, F.conv2d, F.conv3d)[n - 1](x, w, bias, stride, pad_begin, dilation, groups)


def conv(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, layer="conv"):
    """torch.nn.functional.conv{1,2,3}d through a convguard solver verified on this device."""
    n = _spatial_dims(x, w, layer)
    if x.dim() == n + 1:  # unbatched (C, ...), as PyTorch takes it
        return conv(x.unsqueeze(0), w, bias, stride, padding, dilation, groups, layer).squeeze(0)
    stride = _tuple(stride, n, "stride")
    dilation = _tuple(dilation, n, "dilation")
    pad_begin, pad_end = padding_of(padding, w.shape[2:], dilation, stride, n)
    return conv_geometry(x, w, bias, list(stride), pad_begin, pad_end, list(dilation), groups,
                         layer)


def _left_to_pytorch(x, module):
    """Why this call runs PyTorch's own convolution (None: it runs convguard's); a module
    remembers it for the report."""
    if get_options().policy == "off":
        return None  # the user's choice, not a fallback
    why = None
    if x.dtype not in _COMPUTED_DTYPES:
        why = "dtype %s is not computed by convguard (float32, float16, bfloat16 are)" % x.dtype
    if why and module is not None:
        module.__dict__["_convguard_fallback"] = why
    return why


def conv_geometry(x, w, bias, stride, pad_begin, pad_end, dilation, groups, layer, module=None):
    """conv with the geometry already as lists (what the modules cache)."""
    if get_options().policy == "off" or _left_to_pytorch(x, module):
        return _torch_conv(x, w, bias, stride, pad_begin, pad_end, dilation, groups)
    try:
        return _lib.ops.conv(x, w, bias, stride, pad_begin, pad_end, dilation, groups, layer)
    except RuntimeError as e:
        _reraise(e)


def transposed_output_size(size, kernel, stride, padding, dilation, output_padding):
    """Spatial output sizes of a transposed convolution whose input has spatial sizes `size`."""
    return [(i - 1) * s - 2 * p + d * (k - 1) + o + 1
            for i, k, s, p, d, o in zip(size, kernel, stride, padding, dilation, output_padding)]


def transposed_output_padding(x, w, stride, padding, dilation, output_size):
    """output_padding that makes a transposed convolution's output `output_size` (PyTorch's
    ConvTranspose forward(input, output_size)): each value in [0, max(stride, dilation))."""
    n = x.dim() - 2
    size = list(output_size)[-n:]
    smallest = transposed_output_size(x.shape[2:], w.shape[2:], stride, padding, dilation, [0] * n)
    out = []
    for i, least in enumerate(smallest):
        op = size[i] - least
        if not 0 <= op < max(stride[i], dilation[i]):
            raise ValueError("convguard: output_size %r is not reachable (dimension %d: %d to %d)"
                             % (tuple(output_size), i, least,
                                least + max(stride[i], dilation[i]) - 1))
        out.append(op)
    return out


def conv_transpose(x, w, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
                   layer="conv_transpose", module=None):
    """torch.nn.functional.conv_transpose{1,2,3}d (same argument order) through convguard: its
    forward pass is the ordinary convolution's backward-data pass."""
    n = _spatial_dims(x, w, layer)
    if x.dim() == n + 1:  # unbatched (C, ...), as PyTorch takes it
        return conv_transpose(x.unsqueeze(0), w, bias, stride, padding, output_padding, groups,
                              dilation, layer, module).squeeze(0)
    stride = list(_tuple(stride, n, "stride"))
    padding = list(_tuple(padding, n, "padding"))
    output_padding = list(_tuple(output_padding, n, "output_padding"))
    dilation = list(_tuple(dilation, n, "dilation"))
    if get_options().policy == "off" or _left_to_pytorch(x, module):
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return fn(x, w, bias, stride, padding, output_padding, groups, dilation)
    try:
        return _lib.ops.conv_transpose(x, w, bias, stride, padding, output_padding, dilation,
                                       groups, layer)
    except RuntimeError as e:
        _reraise(e)
