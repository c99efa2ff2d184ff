#!/usr/bin/env bash
# Installs the Debian 12 packages convguard needs, by what needs them (docs/dependencies.md says
# why each one):
#   install-deps.sh probe   what the build and `make probe` need (the default)
#   install-deps.sh test    that, plus what `make test` needs: the benchmark's peer, the report
#                           test's browser, the HIP compile check
# Idempotent: it installs only what is missing. As root it runs apt-get; as anyone else it prints
# the exact command to run and fails. Packages are installed with --no-install-recommends, so every
# package a CMake config or test needs is listed here by name (a Recommends is never relied on:
# libdnnl-dev's CMake config needs ocl-icd-opencl-dev, which Debian only recommends).
set -euo pipefail

tier=${1:-probe}

probe_packages=(
  build-essential cmake ninja-build pkg-config make git
  libfmt-dev              # formatting
  nlohmann-json3-dev      # JSON output (driver --json, the worker protocol, db export/import)
  libopenblas0-pthread    # BLAS for cpu:im2col_gemm and cpu:winograd (loaded at run time)
  libsqlite3-dev          # the results database (convguard probe)
  libpq-dev               # libpq: the shared PostgreSQL store (--db postgresql://...)
  libgtest-dev googletest # the tests are configured with the build (CMakeLists.txt requires GTest)
  libdnnl-dev             # oneDNN: dnnl.h builds the oneDNN plugin that `make probe` loads; pulls in
                          # libdnnl2, the library the plugin opens at run time (and the bench's peer)
)
test_packages=(
  ocl-icd-opencl-dev      # libdnnl-dev's CMake config calls find_package(OpenCL REQUIRED)
  python3                 # CLI and probe tests read .npy headers and JSON lines back
  chromium                # renders the HTML report in its test (headless, no network)
  hipcc                   # compile-checks the GPU kernels as HIP for AMD gfx1010/gfx1030
  clang libclang-rt-14-dev # libFuzzer with ASan/UBSan: scripts/fuzz.sh
  libtorch-dev            # the PyTorch extension (python/) builds against PyTorch's CMake package
  python3-torch           # ... and its tests import torch (Debian's 1.13.1, CPU)
  python3-torchvision     # resnet18 and mobilenet_v2 converted in the extension's tests
  slurmctld slurmd slurm-client # a local Slurm (controller + node daemons on loopback) runs the
                          # cluster probe's job array in tests/slurm_test.sh
  postgresql              # a PostgreSQL server on loopback for tests/postgres_test.sh (and psql)
)

case "$tier" in
  probe) packages=("${probe_packages[@]}") ;;
  test) packages=("${probe_packages[@]}" "${test_packages[@]}") ;;
  list-probe) printf '%s\n' "${probe_packages[@]}"; exit 0 ;;
  list-test) printf '%s\n' "${probe_packages[@]}" "${test_packages[@]}"; exit 0 ;;
  *) echo "install-deps: unknown tier '$tier' (expected: probe, test, list-probe, list-test)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps ($tier): all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps ($tier): missing packages: ${missing[*]}" >&2
  echo "install-deps ($tier): run as root:  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps ($tier): installed ${missing[*]}"
