#!/usr/bin/env bash
# Installs the Debian 12 packages convguard builds and tests with (docs/dependencies.md says
# why each one). Idempotent: it installs only what is missing. As root it runs apt-get; as
# anyone else it prints the exact command to run and fails.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev              # formatting
  nlohmann-json3-dev      # JSON output (driver --json, bench)
  libopenblas0-pthread    # BLAS for cpu:im2col_gemm and cpu:winograd (loaded at run time)
  libgtest-dev googletest # unit, property and CLI tests
  libdnnl-dev             # oneDNN: the peer the CPU benchmark compares against
  python3                 # CLI and probe tests read .npy headers and JSON lines back
  libsqlite3-dev          # the results database (convguard probe)
  chromium                # renders the HTML report in its test (headless, no network)
  hipcc                   # compile-checks the GPU kernels as HIP for AMD gfx1010/gfx1030
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
