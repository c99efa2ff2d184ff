"""What the sandbox gives a training script: a layer whose only solver hangs trains on a
verified workaround (the hang costs a probe trial's deadline, once, in a worker process); a
layer nothing verifies for raises NoVerifiedSolverError naming the layer, its problem and the
evidence, at once on later calls; a model's problems extracted to a suite that `convguard probe
--model` takes. Run as its own process: the chaos plugin is loaded here."""

import copy
import json
import os
import subprocess
import tempfile
import unittest

import torch

BUILD = os.environ.get("CONVGUARD_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..",
                                                             "build", "release"))
CLI = os.path.join(BUILD, "convguard")
os.environ["CONVGUARD_PLUGINS"] = os.path.join(BUILD, "convguard_chaos.so")

import convguard.torch as cgt  # noqa: E402  (after CONVGUARD_PLUGINS: plugins load once)
from cg_testing import FreshDatabase  # noqa: E402


def cli(*args, env=None):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, env=env,
                          timeout=600)


class HangingLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 4, 3, padding=1)  # frozen; its only solver hangs above 42
        self.body = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.head = torch.nn.Linear(4, 1)
        for p in self.stem.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = torch.relu(self.body(x))
        return self.head(x.mean((2, 3))).sum()


class OddlyNamed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.d = torch.nn.ModuleDict({'x"\n--dir=BWD_W mb1ic1ih1oc1': torch.nn.Conv2d(3, 2, 1)})

    def forward(self, x):
        return next(iter(self.d.values()))(x)


class Sandbox(FreshDatabase):
    policy = "known"
    trial_timeout_s = 1.0

    def declined_by_every_cpu_solver(self, problem):
        """Evidence that every built-in CPU solver declines `problem` on this device (from a real
        probe of it, relabelled): chaos:hang_above_42 is then its only candidate."""
        scratch = os.path.join(self.tmp, "scratch.db")
        env = dict(os.environ, OMP_NUM_THREADS=str(torch.get_num_threads()))
        env.pop("CONVGUARD_PLUGINS")
        r = cli("probe", "--problem", problem, "--solvers", "cpu:*", "--workarounds", "off",
                "--db", scratch, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = []
        for line in cli("db", "export", "--db", scratch).stdout.splitlines():
            rec = json.loads(line)
            rec["status"], rec["reason"] = "unsupported", "declined for the test"
            lines.append(json.dumps(rec))
        path = os.path.join(self.tmp, "declined.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = cli("db", "import", path, "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_hanging_solver_trains_on_a_workaround(self):
        torch.manual_seed(3)
        model = HangingLayer()
        ref = copy.deepcopy(model)
        x = torch.randn(2, 3, 64, 64)
        problem = cgt.ops.problem_string([2, 3, 64, 64], [4, 3, 3, 3], [1, 1], [1, 1], [1, 1],
                                         [1, 1], 1, torch.float32, False, False, "fwd")
        self.declined_by_every_cpu_solver(problem)
        # Of the chaos plugin's solvers, only hang_above_42 (the others compute, crash or hang
        # everywhere).
        os.environ["CONVGUARD_SKIP_SOLVERS"] = "chaos:[!h]*,chaos:hang_[!a]*"
        try:
            report = cgt.convert(model, example_inputs=x, training=True)
        finally:
            del os.environ["CONVGUARD_SKIP_SOLVERS"]
        stem = report.for_layer("stem")
        self.assertEqual([r.direction for r in stem], ["fwd"], str(report))  # frozen: no backward
        self.assertTrue(stem[0].workaround, str(report))
        self.assertTrue(stem[0].solver.startswith("xform:tile("), stem[0].solver)
        self.assertTrue(stem[0].solver.endswith(":chaos:hang_above_42"), stem[0].solver)
        self.assertIn("(workaround)", str(report))
        # The hang is evidence now: recorded against the solver, in the database.
        statuses = {json.loads(l)["solver"]: json.loads(l)["status"]
                    for l in cli("db", "export", "--db", self.db).stdout.splitlines()
                    if json.loads(l)["problem"] == problem}
        self.assertEqual(statuses.get("chaos:hang_above_42"), "hang", statuses)
        self.assertEqual(statuses.get(stem[0].solver), "ok", statuses)
        # Training proceeds, equal to PyTorch's.
        opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (ref, model)]
        for step in range(3):
            losses = []
            for m, opt in zip((ref, model), opts):
                opt.zero_grad()
                loss = m(x)
                loss.backward()
                opt.step()
                losses.append(float(loss))
            self.assertAlmostEqual(losses[0], losses[1], delta=1e-4 * abs(losses[0]) + 1e-6)

    def test_nothing_verified_raises_with_the_evidence(self):
        # Only misbehaving chaos solvers are left for this problem (and transforms of them).
        os.environ["CONVGUARD_SKIP_SOLVERS"] = (
            "cpu:*,chaos:good,chaos:hang*,chaos:deadlock,chaos:slow*,chaos:oom,chaos:fault*")
        try:
            conv = cgt.Conv2d(2, 3, 3)
            cgt.convert(torch.nn.Sequential(conv))
            x = torch.randn(1, 2, 9, 9)
            with self.assertRaises(cgt.NoVerifiedSolverError) as caught:
                conv(x)
            text = str(caught.exception)
            self.assertIn("layer '0' (fwd)", text)
            self.assertIn("g1mb1ic2ih9iw9oc3oh7ow7kh3kw3", text)
            self.assertIn("recorded bad here: ", text)
            self.assertIn("chaos:wrong (wrong)", text)
            before = cli("db", "export", "--db", self.db).stdout.count("\n")
            with self.assertRaises(cgt.NoVerifiedSolverError):  # remembered: no second probe
                conv(x)
            self.assertEqual(cli("db", "export", "--db", self.db).stdout.count("\n"), before)
        finally:
            del os.environ["CONVGUARD_SKIP_SOLVERS"]


class Suites(FreshDatabase):
    def test_extract_suite_then_probe_the_model(self):
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                    torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU(),
                                    torch.nn.Conv2d(8, 8, 3, padding=1),
                                    torch.nn.ConvTranspose2d(8, 2, 2, stride=2))
        path = os.path.join(self.tmp, "mine.txt")
        problems = cgt.extract_suite(model, torch.randn(2, 3, 12, 12), path, training=True)
        with open(path) as f:
            text = f.read()
        # conv 0: fwd + bwd_weights (its input needs no gradient); 2 and 4 share a problem.
        self.assertEqual(len(problems), 2 + 3 + 3, text)
        self.assertIn('_n"2 (x2)"', text)
        self.assertIn('--dir=BWD_W g1mb2ic3ih12', text)
        self.assertNotIn('--dir=BWD_D g1mb2ic3ih12', text)
        # A module name is any string: one with a newline and a quote stays one problem line.
        odd = OddlyNamed()
        odd_path = os.path.join(self.tmp, "odd.txt")
        cgt.extract_suite(odd, torch.randn(1, 3, 4, 4), odd_path)
        with open(odd_path) as f:
            lines = [line for line in f if not line.startswith("#")]
        self.assertEqual(len(lines), 1, lines)
        # 1D layers are 1D problems (iw/kw/ow only), not their 2D lift; a transposed one is the
        # ordinary convolution's backward-data pass.
        one_d = torch.nn.Sequential(torch.nn.Conv1d(2, 4, 5, stride=2, padding=1),
                                    torch.nn.ConvTranspose1d(4, 3, 4, stride=2, padding=1))
        one_d_path = os.path.join(self.tmp, "one_d.txt")
        cgt.extract_suite(one_d, torch.randn(2, 2, 40), one_d_path)
        with open(one_d_path) as f:
            one_d_text = f.read()
        self.assertIn('g1mb2ic2iw40oc4ow19kw5sw2pw1_n"0 (x1)"', one_d_text)
        self.assertIn('--dir=BWD_D g1mb2ic3iw38oc4ow19kw4sw2pw1_n"1 (x1)"', one_d_text)
        # Only the problem lines: the header quotes the file's path, a random temp name.
        one_d_problems = [l for l in one_d_text.splitlines() if l and not l.startswith("#")]
        self.assertEqual(len(one_d_problems), 2, one_d_text)
        for line in one_d_problems:
            self.assertNotRegex(line, r"(ih|oh|kh|sh|ph)\d", line)
        r = cli("probe", "--model", one_d_path, "--db", os.path.join(self.tmp, "one_d.db"),
                "--skip-solvers", "chaos:*", "--timing", "0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("model one_d WORKS", r.stdout)
        r = cli("probe", "--model", path, "--db", os.path.join(self.tmp, "probe.db"),
                "--skip-solvers", "chaos:*")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("model mine WORKS", r.stdout)
        probed = cli("db", "export", "--db", os.path.join(self.tmp, "probe.db")).stdout
        self.assertIn("mb2ic3ih12", probed)  # the file's batch, not --batch's default


if __name__ == "__main__":
    unittest.main()
