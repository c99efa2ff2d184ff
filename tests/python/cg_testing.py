"""Shared by the PyTorch extension's tests: a fresh results database per test class, and the
per-element tolerance every comparison with PyTorch uses."""

import os
import shutil
import tempfile
import unittest

import torch

import convguard.torch as cgt

# Where the tensors under test live ("cpu"; "cuda" on a GPU machine, docs/pytorch.md).
DEVICE = os.environ.get("CONVGUARD_TORCH_TEST_DEVICE", "cpu")
if DEVICE != "cpu":
    # fp32 accuracy on both sides (PyTorch's default lets cuDNN use TF32 for convolutions).
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

# Unit roundoff of each storage type (the result is rounded to it once).
UNIT_ROUNDOFF = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def tolerance(dtype, magnitude, reduction_length):
    """Per-element bound for a result whose exact value's sum of |products| is `magnitude`:
    rounding to the storage type, plus fp32 accumulation over the reduction (and Winograd/FFT
    solvers' larger constant), with a floor for outputs that sum to zero."""
    accumulate = 2.0 ** -24 * 8 * (reduction_length ** 0.5 + 16)
    return (UNIT_ROUNDOFF[dtype] * 2 + accumulate) * magnitude + 1e-30


def assert_close(test, got, exact, magnitude, length, what):
    """`got` (any dtype) against the fp64 `exact`, element by element."""
    test.assertEqual(tuple(got.shape), tuple(exact.shape), what)
    err = (got.double() - exact).abs()
    bound = tolerance(got.dtype, magnitude, length)
    bad = err > bound
    if bool(bad.any()):
        i = int(bad.flatten().nonzero()[0])
        test.fail("%s: %d of %d elements outside the bound; first at flat index %d: got %r, "
                  "exact %r, bound %r" % (what, int(bad.sum()), err.numel(), i,
                                           float(got.flatten()[i]), float(exact.flatten()[i]),
                                           float(bound.flatten()[i])))


class FreshDatabase(unittest.TestCase):
    """Each test class gets its own results database and policy (first-verified: probing stops
    at the first solver that verifies, which keeps hundreds of problems cheap)."""

    policy = "first-verified"
    trial_timeout_s = 0.0

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="convguard-torch-test-")
        cls.db = os.path.join(cls.tmp, "results.db")
        cgt.set_options(cgt.Options(policy=cls.policy, db=cls.db,
                                    trial_timeout_s=cls.trial_timeout_s))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
