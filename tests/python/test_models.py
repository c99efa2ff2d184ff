"""Whole models through convguard.torch.convert: torchvision's resnet18 and mobilenet_v2
(random init, no downloads) against the unconverted model (output and every parameter's
gradient), training steps of a small CNN, the report, state_dict compatibility, options."""

import copy
import os
import unittest

import torch
import torchvision

import convguard.torch as cgt
from cg_testing import DEVICE, FreshDatabase


def rel_err(a, b):
    return float((a.double() - b.double()).norm() / (b.double().norm() + 1e-30))


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.c3 = torch.nn.Conv2d(16, 16, 3, padding="same", groups=4, bias=False)
        self.up = torch.nn.ConvTranspose2d(16, 4, 2, stride=2)
        self.head = torch.nn.Conv1d(4, 2, 3, padding=1)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        x = torch.relu(self.c2(x))
        x = torch.relu(self.c3(x))
        x = self.up(x)  # N, 4, 16, 16
        return self.head(x.flatten(2)).mean()


class Models(FreshDatabase):
    def compare(self, make, shape, tol, channels_last=False):
        torch.manual_seed(0)
        # Batch-norm in eval mode: with batch statistics over a few small images it divides by
        # near-zero variances late in the network and magnifies fp32 rounding differences
        # (resnet18 at 64x64 in train mode: 1e-2 on conv1's gradient between two correct
        # implementations). Every convolution still runs all three directions.
        ref = make().eval().to(DEVICE)
        model = copy.deepcopy(ref)
        report = cgt.convert(model)
        self.assertGreater(len(report.unplanned), 0)
        x = torch.randn(shape, device=DEVICE)
        if channels_last:
            ref, model = ref.to(memory_format=torch.channels_last), model.to(
                memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
        y_ref, y = ref(x), model(x)
        self.assertLess(rel_err(y, y_ref), tol)
        g = torch.randn_like(y_ref)
        y_ref.backward(g)
        y.backward(g)
        params = dict(model.named_parameters())
        errors = {}
        for name, p in ref.named_parameters():
            self.assertIsNotNone(params[name].grad, name)
            errors[name] = rel_err(params[name].grad, p.grad)
        bad = sorted(((e, n) for n, e in errors.items() if not e < tol), reverse=True)
        self.assertEqual(bad, [], "gradients outside %g (worst first); the model ran:\n%s"
                         % (tol, cgt.report(model)))
        checked = len(errors)
        report = cgt.report(model)
        self.assertEqual(report.unplanned, [])
        self.assertEqual(report.failures, [])
        return report, checked

    def test_resnet18_output_and_every_gradient(self):
        report, checked = self.compare(lambda: torchvision.models.resnet18(num_classes=10),
                                       (2, 3, 64, 64), 1e-4)
        self.assertEqual(checked, 62)
        # The first layer's input needs no gradient: it never runs backward-data.
        dirs = {r.direction for r in report.for_layer("conv1")}
        self.assertEqual(dirs, {"fwd", "bwd_weights"})
        dirs = {r.direction for r in report.for_layer("layer1.0.conv1")}
        self.assertEqual(dirs, {"fwd", "bwd_data", "bwd_weights"})

    def test_mobilenet_v2_channels_last(self):
        report, _ = self.compare(lambda: torchvision.models.mobilenet_v2(num_classes=10),
                                 (2, 3, 48, 48), 1e-4, channels_last=True)
        self.assertTrue(any(r.solver == "cpu:depthwise" for r in report.rows), str(report))
        self.assertTrue(all("axb" in r.problem for r in report.rows if r.direction == "fwd"),
                        str(report))

    def test_five_sgd_steps_match(self):
        torch.manual_seed(1)
        ref = SmallCnn().to(DEVICE)
        model = copy.deepcopy(ref)
        cgt.convert(model)
        self.assertIsInstance(model.c1, cgt.Conv2d)
        self.assertIsInstance(model.up, cgt.ConvTranspose2d)
        self.assertIsInstance(model.head, cgt.Conv1d)
        opts = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (ref, model)]
        data = [torch.randn(4, 3, 16, 16, device=DEVICE) for _ in range(5)]
        for step, x in enumerate(data):
            losses = []
            for m, opt in zip((ref, model), opts):
                opt.zero_grad()
                loss = (m(x) - 1.0) ** 2
                loss.backward()
                opt.step()
                losses.append(float(loss))
            self.assertAlmostEqual(losses[0], losses[1], delta=1e-4 * abs(losses[0]) + 1e-6,
                                   msg="step %d" % step)

    def test_convert_shares_weights_and_state_dict(self):
        ref = SmallCnn()
        sd = copy.deepcopy(ref.state_dict())
        w = ref.c1.weight
        report = cgt.convert(ref, example_inputs=torch.randn(1, 3, 16, 16), training=True)
        self.assertIs(ref.c1.weight, w)
        self.assertEqual(sorted(ref.state_dict().keys()), sorted(sd.keys()))
        fresh = SmallCnn()
        cgt.convert(fresh)
        fresh.load_state_dict(sd)  # a torch.nn checkpoint loads into a converted model
        self.assertEqual(report.unplanned, [])
        self.assertIn("c3", str(report))
        self.assertIsNone(ref.c1.weight.grad)  # planning with example inputs leaves no gradients

    def test_root_module_and_subclass(self):
        class Mine(torch.nn.Conv2d):
            pass

        conv = torch.nn.Conv2d(2, 2, 1)
        cgt.convert(conv)
        self.assertIsInstance(conv, cgt.Conv2d)
        seq = torch.nn.Sequential(Mine(2, 2, 1))
        report = cgt.convert(seq)
        self.assertEqual([layer for layer, _ in report.skipped], ["0"])


    def test_jit_trace_records_the_operators(self):
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
        cgt.convert(m)
        x = torch.randn(1, 3, 8, 8)
        traced = torch.jit.trace(m, x)
        self.assertIn("convguard::conv", str(traced.inlined_graph))
        self.assertTrue(torch.equal(traced(x), m(x)))


class Policies(unittest.TestCase):
    def test_bad_options_name_the_field(self):
        with self.assertRaisesRegex(ValueError, "policy 'fast'"):
            cgt.Options(policy="fast")
        with self.assertRaisesRegex(ValueError, "trial_timeout_s"):
            cgt.Options(trial_timeout_s=float("nan"))
        os.environ["CONVGUARD_TORCH_POLICY"] = "sometimes"
        try:
            with self.assertRaisesRegex(ValueError, "CONVGUARD_TORCH_POLICY='sometimes'"):
                cgt.Options.from_env()
        finally:
            del os.environ["CONVGUARD_TORCH_POLICY"]

    def test_off_is_pytorch(self):
        cgt.set_options(cgt.Options(policy="off"))
        try:
            x, w = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)
            self.assertTrue(torch.equal(cgt.conv(x, w), torch.nn.functional.conv2d(x, w)))
        finally:
            cgt.set_options(cgt.Options())

    def test_bad_arguments(self):
        x, w = torch.randn(1, 4, 5, 5), torch.randn(3, 3, 3, 3)
        with self.assertRaisesRegex(RuntimeError, "w: 3 input channels per group"):
            cgt.conv(x, w, layer="bad")
        with self.assertRaisesRegex(ValueError, "padding"):
            cgt.conv(x, torch.randn(3, 4, 3, 3), padding="full")
        with self.assertRaisesRegex(RuntimeError, "dtype"):
            cgt.ops.conv_forward(x.to(torch.int32), w.to(torch.int32), [1, 1], [0, 0], [0, 0],
                                 [1, 1], 1, "int")


if __name__ == "__main__":
    unittest.main()
