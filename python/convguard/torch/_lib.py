"""Loads the C++ extension (libconvguard_torch.so) into PyTorch's operator registry."""

import os

import torch

_NAME = "libconvguard_torch.so"


def _candidates():
    env = os.environ.get("CONVGUARD_TORCH_LIBRARY")
    if env:
        yield env
        return
    # Installed (pip install ./python) or a build tree (build/<preset>/python): beside the package.
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    yield os.path.join(package, _NAME)


def _use_packaged_worker():
    """An installed package carries the convguard binary that runs probe trials (bin/convguard);
    a build tree's library finds its own build's binary."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    worker = os.path.join(package, "bin", "convguard")
    if os.access(worker, os.X_OK):
        os.environ.setdefault("CONVGUARD_WORKER", worker)


def _same_cudnn_as_torch():
    """The cuDNN plugin (when loaded through CONVGUARD_PLUGINS) and its probe workers use the
    cuDNN this PyTorch loaded: one cuDNN in the process, and evidence whose device fingerprint
    (which names the cuDNN) is the one the process looks up."""
    if "CONVGUARD_CUDNN_PATH" in os.environ or not torch.cuda.is_available():
        return
    try:
        if not torch.backends.cudnn.version():
            return
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if line.count("/") else ""
                if os.path.basename(path).startswith("libcudnn.so"):
                    os.environ["CONVGUARD_CUDNN_PATH"] = path
                    return
    except (OSError, RuntimeError):
        return


def load():
    _use_packaged_worker()
    _same_cudnn_as_torch()
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            torch.ops.load_library(path)
            return path
        tried.append(path)
    raise ImportError(
        "convguard.torch: the C++ extension is not built (looked for %s); build it with "
        "`make python` or set CONVGUARD_TORCH_LIBRARY (docs/pytorch.md)" % ", ".join(tried))


LIBRARY = load()
ops = torch.ops.convguard
