"""convguard: convolutions that never hang.

The PyTorch integration is `convguard.torch` (docs/pytorch.md); importing this package alone
loads nothing.
"""

__version__ = "0.1.0"
