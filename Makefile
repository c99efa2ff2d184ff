# The README's two commands. Everything else is CMake presets (CMakePresets.json).
.PHONY: test probe deps build build-sanitize bench clean fresh-root-check python

JOBS ?= $(shell nproc)

# Which packages scripts/install-deps.sh installs: `make probe` needs the build's and oneDNN (probe
# tier); `make test` also needs Chromium, hipcc and clang (test tier). A target-specific
# variable is seen by the target's prerequisites too, so `build` under `test` installs the test tier.
DEPS_TIER ?= probe
test: DEPS_TIER = test
bench: DEPS_TIER = test

deps:
	bash scripts/install-deps.sh $(DEPS_TIER)

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

build-sanitize: deps
	cmake --preset sanitize >/dev/null
	cmake --build --preset sanitize -j $(JOBS)

# Every test: the release build's full suite, the unit tests under ASan+UBSan, the GPU kernels
# compiled as HIP for the seeds' AMD GPUs (nothing here can run them), and 30 s of libFuzzer on
# each reader of outside input (scripts/fuzz.sh). The test presets set OMP_WAIT_POLICY=passive:
# ctest -j runs two OpenMP-threaded tests at once, and threads spinning for work the other test's
# threads need the cores for cost time: the sanitize stage took 353 s, 317 s passive, in one pair
# of runs on 2 cores (2026-11-30).
test: build build-sanitize
	ctest --preset release -j $(JOBS)
	ctest --preset sanitize -j $(JOBS)
	bash scripts/hip_check.sh
	bash scripts/fuzz.sh 30

# The main job: the standard suite, every CPU solver, each trial in a sandboxed worker under a
# deadline, verified against the fp64 reference, recorded in the results database
# ($$CONVGUARD_DB or ~/.cache/convguard/convguard.db); a rerun reuses what is known. oneDNN's
# implementations are solvers too when its plugin was built (dnnl.h present; docs/onednn.md),
# except the builds for narrower ISAs than the CPU's widest, which oneDNN itself never picks and
# which would double the sweep's time (a full `convguard probe --plugin` tries them too): on an
# AVX-512 CPU its AVX2 and SSE4.1 builds, on an AVX2 one (2026-11-30's AMD EPYC had no AVX-512)
# only SSE4.1's, its AVX2 builds being the ones it runs there.
ONEDNN_PLUGIN = build/release/convguard_onednn.so
AVX512 := $(shell grep -qw avx512f /proc/cpuinfo 2>/dev/null && echo yes)
ONEDNN_NARROW = $(if $(AVX512),onednn:*_avx2*$(comma))onednn:*_sse41*
comma := ,
ONEDNN_FLAGS = --plugin $(ONEDNN_PLUGIN) --skip-solvers '$(ONEDNN_NARROW)'
probe: build
	./build/release/convguard probe --suite standard $(if $(wildcard $(ONEDNN_PLUGIN)),$(ONEDNN_FLAGS))

# The PyTorch extension in the build tree (docs/pytorch.md; `pip install --no-build-isolation
# ./python` installs it instead).
python: DEPS_TIER = test
python: build
	@echo "convguard.torch is built: export PYTHONPATH=$(CURDIR)/build/release/python (then: import convguard.torch)"

bench: build
	./build/release/bench/convguard_bench --suite data/suites/resnet50.txt

# Builds HEAD from nothing in a brand-new minimal Debian 12 root and runs the README's two commands
# there (CI runs it; needs root). scripts/fresh-root-check.sh --cmd/--drop for other checks.
fresh-root-check:
	bash scripts/fresh-root-check.sh

clean:
	rm -rf build
