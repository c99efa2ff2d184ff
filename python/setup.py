"""pip install --no-build-isolation ./python  (docs/pytorch.md)

Builds the extension with the project's CMake preset (the same build `make test` uses) against
the PyTorch that this Python imports, then installs the package with the extension and the
convguard binary whose `worker` command runs probe trials in the sandbox. Offline: only Debian's
setuptools and the project's own build are used.
"""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class BuildWithCMake(build_py):
    def run(self):
        build = os.environ.get("CONVGUARD_BUILD_DIR", os.path.join(ROOT, "build", "release"))
        if "CONVGUARD_BUILD_DIR" not in os.environ:
            subprocess.check_call(["cmake", "--preset", "release", "-DCONVGUARD_TORCH=ON"],
                                  cwd=ROOT)
            subprocess.check_call(["cmake", "--build", "--preset", "release", "--target",
                                   "convguard_torch", "convguard_cli"], cwd=ROOT)
        super().run()
        package = os.path.join(self.build_lib, "convguard")
        shutil.copy2(os.path.join(build, "python", "convguard", "libconvguard_torch.so"), package)
        os.makedirs(os.path.join(package, "bin"), exist_ok=True)
        shutil.copy2(os.path.join(build, "convguard"), os.path.join(package, "bin", "convguard"))


setup(
    name="convguard",
    version="0.1.0",
    description="Convolutions that never hang: verified solver selection for PyTorch",
    packages=["convguard", "convguard.torch"],
    cmdclass={"build_py": BuildWithCMake},
    zip_safe=False,
)
