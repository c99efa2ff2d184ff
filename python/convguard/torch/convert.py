"""convert(model): every torch.nn convolution of a model computed by convguard, in place, with a
report of what each layer runs."""

import torch

from . import _lib
from .modules import REPLACEMENTS
from .options import set_options

_CONVGUARD_CLASSES = frozenset(REPLACEMENTS.values())


class Row:
    """One layer's problem in one direction and what computes it."""

    __slots__ = ("layer", "module", "direction", "problem", "solver", "why")

    def __init__(self, layer, module, direction, problem, solver, why):
        self.layer, self.module, self.direction = layer, module, direction
        self.problem, self.solver, self.why = problem, solver, why

    @property
    def workaround(self):
        return self.solver.startswith("xform:")

    @property
    def verified(self):
        return bool(self.solver)

    def __repr__(self):
        return "Row(%r, %r, %r, %r)" % (self.layer, self.direction, self.problem, self.solver)


class Report:
    """What each converted layer runs, from the plans made so far (run the model, or pass
    example inputs to convert(), to plan every layer)."""

    def __init__(self, rows, unplanned, skipped):
        self.rows = rows            # Row per (layer, direction, problem) planned
        self.unplanned = unplanned  # converted layers that have not run yet
        self.skipped = skipped      # (layer, reason) for convolutions left to PyTorch

    def for_layer(self, layer):
        return [r for r in self.rows if r.layer == layer]

    @property
    def failures(self):
        return [r for r in self.rows if not r.verified]

    @property
    def workarounds(self):
        return [r for r in self.rows if r.workaround]

    def __str__(self):
        lines = ["%-28s %-11s %-44s %s" % ("layer", "direction", "solver", "problem")]
        for r in self.rows:
            what = r.solver or "NONE VERIFIED: " + r.why
            if r.workaround:
                what += " (workaround)"
            lines.append("%-28s %-11s %-44s %s" % (r.layer, r.direction, what, r.problem))
        for layer in self.unplanned:
            lines.append("%-28s not run yet (planned at its first call)" % layer)
        for layer, why in self.skipped:
            lines.append("%-28s left to PyTorch: %s" % (layer, why))
        return "\n".join(lines)


def _converted(model):
    return [(m._convguard_layer, m) for m in model.modules()
            if getattr(m, "_convguard_layer", None) is not None]


def report(model, skipped=()):
    """The Report for a model converted earlier."""
    rows, unplanned, skipped = [], [], list(skipped)
    for layer, m in _converted(model):
        lines = _lib.ops.report(layer)
        fallback = m.__dict__.get("_convguard_fallback")
        if fallback:
            skipped.append((layer, "at run time: " + fallback))
        if not lines and not fallback:
            unplanned.append(layer)
        for line in lines:
            direction, problem, solver, why = line.split("\t", 3)
            rows.append(Row(layer, type(m).__name__, direction, problem, solver, why))
    return Report(rows, unplanned, skipped)


def run_once(model, example_inputs, training):
    """Runs the model once on example inputs with gradients enabled when `training`, leaving its
    buffers (batch-norm statistics) as they were; returns (inputs as a tuple, the output)."""
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    buffers = {name: b.detach().clone() for name, b in model.named_buffers()}
    try:
        with torch.set_grad_enabled(training):
            return example_inputs, model(*example_inputs)
    finally:
        with torch.no_grad():
            for name, b in model.named_buffers():
                b.copy_(buffers[name])


def _plan_with(model, example_inputs, training):
    """Runs the model once on example inputs (and its backward when training), leaving its
    parameters' gradients and its buffers as they were."""
    example_inputs, out = run_once(model, example_inputs, training)
    if training:
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if isinstance(o, torch.Tensor) and o.requires_grad]
        wrt = [p for p in model.parameters() if p.requires_grad]
        wrt += [x for x in example_inputs if isinstance(x, torch.Tensor) and x.requires_grad]
        if outs and wrt:
            # autograd.grad, not backward(): the parameters' .grad stay untouched.
            torch.autograd.grad(sum(o.float().sum() for o in outs), wrt, allow_unused=True)


def convert(model, example_inputs=None, training=None, options=None):
    """Replaces every torch.nn Conv1d/2d/3d and ConvTranspose1d/2d/3d of `model` (the model
    itself included) by convguard's, in place: same parameters (shared, not copied), hooks and
    state_dict. Subclasses of those defined elsewhere are left alone and listed in the report.

    example_inputs: when given, the model runs once on them (forward, and backward when
    `training`, default model.training) so that every layer is planned now, probing unknown
    problems in the sandbox, and the report says what each layer runs.
    options: convguard.torch.Options to set for the process first."""
    if options is not None:
        set_options(options)
    skipped = []
    for name, m in model.named_modules():
        layer = name or type(m).__name__
        cls = REPLACEMENTS.get(type(m))
        if cls is not None or type(m) in _CONVGUARD_CLASSES:
            m.__class__ = cls or type(m)
            m._convguard_layer = layer
        elif isinstance(m, torch.nn.modules.conv._ConvNd) and \
                getattr(m, "_convguard_layer", None) is None:
            skipped.append((layer, "a subclass (%s) of a torch.nn convolution; convert it by "
                                   "calling convguard.torch.functional.conv in its forward"
                            % type(m).__name__))
    if example_inputs is not None:
        _plan_with(model, example_inputs, model.training if training is None else training)
    return report(model, skipped)
