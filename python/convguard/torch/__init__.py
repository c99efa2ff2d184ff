"""convguard for PyTorch: every convolution of a model on a solver verified on this device,
with exact workarounds when none is, probed in a sandbox that a hanging or crashing solver
cannot take down (docs/pytorch.md).

    import convguard.torch as cgt
    report = cgt.convert(model, example_inputs=(x,))   # in place; weights shared
    print(report)                                      # what each layer runs, and why
"""

from . import _lib
from .convert import Report, Row, convert, report
from .functional import NoVerifiedSolverError, conv, conv_transpose
from .modules import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                      ConvTranspose3d)
from .options import POLICIES, Options, get_options, set_options
from .suite import extract_suite

ops = _lib.ops

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "NoVerifiedSolverError", "Options", "POLICIES", "Report", "Row", "conv", "conv_transpose",
    "convert", "extract_suite", "get_options", "ops", "report", "set_options",
]
