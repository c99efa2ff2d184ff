"""Drop-in modules: the same arguments, parameters and state_dict as torch.nn's, computed by
convguard. They are subclasses of torch.nn's (isinstance and loading checkpoints work), and
convert() turns a model's torch.nn convolutions into these in place by switching their class."""

import torch

from . import functional as cgF


def _layer(module):
    return getattr(module, "_convguard_layer", None) or type(module).__name__


def conv_geometry_of(m):
    """(stride, pad_begin, pad_end, dilation) lists of a Conv1d/2d/3d module's convolution: with
    a padding mode other than zeros the input is padded first, and the convolution has none."""
    n = len(m.kernel_size)
    stride, dilation = list(m.stride), list(m.dilation)
    if m.padding_mode != "zeros":
        return stride, [0] * n, [0] * n, dilation
    begin, end = cgF.padding_of(m.padding, m.kernel_size, dilation, stride, n)
    return stride, begin, end, dilation


class _ConvMixin:
    """forward for Conv1d/2d/3d: non-zero padding modes pad first (as PyTorch does), then the
    convolution runs with the module's geometry, computed once."""

    def _convguard_geometry(self):
        geometry = self.__dict__.get("_convguard_geom")
        if geometry is None:
            geometry = self.__dict__["_convguard_geom"] = conv_geometry_of(self)
        return geometry

    def _conv_forward(self, input, weight, bias):
        if input.dim() == len(self.kernel_size) + 1:  # unbatched (C, ...), as PyTorch takes it
            return self._conv_forward(input.unsqueeze(0), weight, bias).squeeze(0)
        if self.padding_mode != "zeros":
            padded = input
            # PyTorch's CPU reflect/replicate pads have no f16/bf16 kernels (1.13): padding only
            # copies values, so padding in float32 and rounding back is exact.
            if input.device.type == "cpu" and input.dtype in (torch.float16, torch.bfloat16):
                padded = input.float()
            input = torch.nn.functional.pad(padded, self._reversed_padding_repeated_twice,
                                            mode=self.padding_mode).to(input.dtype)
        stride, begin, end, dilation = self._convguard_geometry()
        return cgF.conv_geometry(input, weight, bias, stride, begin, end, dilation, self.groups,
                                 _layer(self), self)


class Conv1d(_ConvMixin, torch.nn.Conv1d):
    pass


class Conv2d(_ConvMixin, torch.nn.Conv2d):
    pass


class Conv3d(_ConvMixin, torch.nn.Conv3d):
    pass


class _ConvTransposeMixin:
    def forward(self, input, output_size=None):
        if input.dim() == len(self.kernel_size) + 1:  # unbatched (C, ...), as PyTorch takes it
            if output_size is not None:
                output_size = [1] + list(output_size)[-len(self.kernel_size) - 1:]
            return self.forward(input.unsqueeze(0), output_size).squeeze(0)
        if self.padding_mode != "zeros":
            raise ValueError("convguard: only 'zeros' padding mode is supported for "
                             "ConvTranspose (as in PyTorch)")
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = cgF.transposed_output_padding(input, self.weight, self.stride,
                                                           self.padding, self.dilation,
                                                           output_size)
        return cgF.conv_transpose(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation, _layer(self), self)


class ConvTranspose1d(_ConvTransposeMixin, torch.nn.ConvTranspose1d):
    pass


class ConvTranspose2d(_ConvTransposeMixin, torch.nn.ConvTranspose2d):
    pass


class ConvTranspose3d(_ConvTransposeMixin, torch.nn.ConvTranspose3d):
    pass


# torch.nn's class -> convguard's
REPLACEMENTS = {
    torch.nn.Conv1d: Conv1d,
    torch.nn.Conv2d: Conv2d,
    torch.nn.Conv3d: Conv3d,
    torch.nn.ConvTranspose1d: ConvTranspose1d,
    torch.nn.ConvTranspose2d: ConvTranspose2d,
    torch.nn.ConvTranspose3d: ConvTranspose3d,
}
