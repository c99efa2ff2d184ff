"""PyTorch's own convolution module test configurations as the judge: every Conv1d/2d/3d and
ConvTranspose1d/2d/3d entry of torch.testing._internal.common_nn (module_tests and
new_module_tests: strides, padding, dilation, groups, depthwise, padding modes, 'same'/'valid',
unbatched inputs, no bias, ...) run through the drop-in module, output and input/weight/bias
gradients against the same module in float64: in float32, and in bfloat16 against float64 on
the bf16-rounded inputs and parameters (never against PyTorch's own bf16, which is wrong on some
transposed convolutions in Debian's 1.13.1). Plus the empty batch."""

import copy
import sys
import types
import unittest

import torch

import convguard.torch as cgt
from cg_testing import DEVICE, FreshDatabase

# common_utils imports expecttest (PyTorch's own test helper, not packaged by Debian) for its
# TestCase base; nothing used here needs more than this stand-in.
if "expecttest" not in sys.modules:
    stand_in = types.ModuleType("expecttest")
    stand_in.TestCase, stand_in.ACCEPT = unittest.TestCase, False
    sys.modules["expecttest"] = stand_in
from torch.testing._internal import common_nn  # noqa: E402

CONV_MODULES = {"Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                "ConvTranspose3d"}


def configurations():
    # 1.13 has both lists; later releases build the second with get_new_module_tests().
    new = getattr(common_nn, "new_module_tests", None)
    if new is None and hasattr(common_nn, "get_new_module_tests"):
        new = common_nn.get_new_module_tests()
    out = []
    for t in getattr(common_nn, "module_tests", []) + list(new or []):
        name = t.get("module_name", "")
        if name not in CONV_MODULES:
            continue
        full = t.get("fullname") or name + ("_" + t["desc"] if t.get("desc") else "")
        out.append((full, t))
    return out


def build(t):
    if "constructor" in t:
        return t["constructor"](*t.get("constructor_args", ()))
    return getattr(torch.nn, t["module_name"])(*t.get("constructor_args", ()))


def make_input(t):
    if "input_fn" in t:
        return t["input_fn"]()
    return torch.randn(t["input_size"])


def rel(a, b):
    return float((a.double().cpu() - b.double().cpu()).norm() / (b.double().norm() + 1e-30))


class TorchModuleTests(FreshDatabase):
    def run_config(self, name, t, dtype, tol):
        torch.manual_seed(0)
        ref = build(t).to(dtype)
        exact = copy.deepcopy(ref).double()
        mine = copy.deepcopy(ref).to(DEVICE)
        cgt.convert(mine)
        x = make_input(t).to(dtype)
        xe = x.double().requires_grad_(True)
        xm = x.to(DEVICE).requires_grad_(True)
        ye, ym = exact(xe), mine(xm)
        g = torch.randn(ye.shape, dtype=torch.float64).to(dtype)
        ge = torch.autograd.grad(ye, [xe] + list(exact.parameters()), g.double())
        gm = torch.autograd.grad(ym, [xm] + list(mine.parameters()), g.to(DEVICE))
        names = ["input"] + [n for n, _ in exact.named_parameters()]
        errors = {"output": rel(ym, ye)}
        errors.update({"d " + n: rel(a, b) for n, a, b in zip(names, gm, ge)})
        bad = {k: v for k, v in errors.items() if not v < tol}
        self.assertEqual(bad, {}, "%s (%s): errors above %g vs float64; report:\n%s"
                         % (name, dtype, tol, cgt.report(mine)))
        report = cgt.report(mine)
        self.assertEqual(report.failures, [], name)
        return report

    def test_every_conv_configuration_float32(self):
        configs = configurations()
        self.assertGreaterEqual(len(configs), 30 if torch.__version__.startswith("1.") else 1)
        ran = set()
        for name, t in configs:
            with self.subTest(config=name):
                report = self.run_config(name, t, torch.float32, 1e-5)
                self.assertEqual(report.skipped, [], name)  # nothing left to PyTorch
                ran.add(t["module_name"])
        self.assertEqual(ran, CONV_MODULES)
        print("\n%d configurations of common_nn run in float32" % len(configs))

    def test_every_conv_configuration_bfloat16(self):
        for name, t in configurations():
            with self.subTest(config=name):
                self.run_config(name, t, torch.bfloat16, 3e-2)

    def test_empty_batch(self):
        for mod, shape in ((torch.nn.Conv2d(3, 4, 3), (0, 3, 8, 8)),
                           (torch.nn.ConvTranspose3d(3, 4, 2, stride=2), (0, 3, 4, 4, 4))):
            cgt.convert(mod)
            mod = mod.to(DEVICE)
            x = torch.randn(shape, device=DEVICE, requires_grad=True)
            y = mod(x)
            self.assertEqual(y.shape[0], 0)
            y.sum().backward()
            self.assertEqual(float(mod.weight.grad.abs().sum()), 0.0)
            self.assertEqual(tuple(x.grad.shape), shape)


if __name__ == "__main__":
    unittest.main()
