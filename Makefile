# The README's two commands. Everything else is CMake presets (CMakePresets.json).
.PHONY: test probe deps build build-sanitize bench clean

JOBS ?= $(shell nproc)

deps:
	bash scripts/install-deps.sh

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

build-sanitize: deps
	cmake --preset sanitize >/dev/null
	cmake --build --preset sanitize -j $(JOBS)

# Every test: the release build's full suite, then the unit tests under ASan+UBSan.
test: build build-sanitize
	ctest --preset release -j $(JOBS)
	ctest --preset sanitize -j $(JOBS)

# The main job. Until the sandboxed probe lands this runs the standard suite through the
# driver: every applicable CPU solver, every problem, verified against the fp64 reference.
probe: build
	./build/release/convguard driver --suite data/suites/standard.txt -S all -V 1 -t 1 -i 3

bench: build
	./build/release/bench/convguard_bench --suite data/suites/resnet50.txt

clean:
	rm -rf build
