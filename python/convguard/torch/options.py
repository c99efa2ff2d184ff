"""Which convolution implementation a converted model runs (docs/pytorch.md, "Policies")."""

import dataclasses
import os

from . import _lib

POLICIES = ("known", "first-verified", "off")


@dataclasses.dataclass(frozen=True)
class Options:
    """Selection for every convguard convolution in the process.

    policy: "known" (only solvers and workarounds verified in the results database for this
        device; an unknown problem is probed in the sandbox first, once), "first-verified" (the
        same, probing an unknown problem in list order up to the first solver that verifies),
        or "off" (PyTorch's own convolution). Environment: CONVGUARD_TORCH_POLICY.
    db: the results database (empty: $CONVGUARD_DB, else ~/.cache/convguard/convguard.db).
    trial_timeout_s: each probe trial's deadline (0: derived from the problem's cost).
        Environment: CONVGUARD_TORCH_TRIAL_TIMEOUT.
    TF32 follows torch.backends.cudnn.allow_tf32, PyTorch's own switch for convolutions.
    """

    policy: str = "known"
    db: str = ""
    trial_timeout_s: float = 0.0

    def __post_init__(self):
        if self.policy not in POLICIES:
            raise ValueError("convguard.torch.Options: policy %r is not one of %s"
                             % (self.policy, ", ".join(POLICIES)))
        if not isinstance(self.trial_timeout_s, (int, float)) or not (
                0 <= self.trial_timeout_s < float("inf")):
            raise ValueError("convguard.torch.Options: trial_timeout_s %r must be a finite "
                             "number >= 0" % (self.trial_timeout_s,))
        if not isinstance(self.db, str):
            raise ValueError("convguard.torch.Options: db must be a path string")

    @staticmethod
    def from_env():
        """Options from CONVGUARD_TORCH_POLICY and CONVGUARD_TORCH_TRIAL_TIMEOUT (bad values are
        errors naming the variable)."""
        policy = os.environ.get("CONVGUARD_TORCH_POLICY", "known")
        timeout = os.environ.get("CONVGUARD_TORCH_TRIAL_TIMEOUT", "0")
        try:
            timeout_s = float(timeout)
        except ValueError:
            raise ValueError("CONVGUARD_TORCH_TRIAL_TIMEOUT=%r is not a number" % timeout) from None
        try:
            return Options(policy=policy, trial_timeout_s=timeout_s)
        except ValueError as e:
            raise ValueError("from the environment (CONVGUARD_TORCH_POLICY=%r, "
                             "CONVGUARD_TORCH_TRIAL_TIMEOUT=%r): %s" % (policy, timeout, e)) from None


_current = None


def set_options(options):
    """Sets the process's options; plans made under the previous ones are dropped."""
    global _current
    if not isinstance(options, Options):
        raise TypeError("convguard.torch.set_options: expected Options, got %r" % (options,))
    if options.policy != "off":
        _lib.ops.configure(options.policy, options.db, float(options.trial_timeout_s))
    _current = options


def get_options():
    if _current is None:
        set_options(Options.from_env())
    return _current
