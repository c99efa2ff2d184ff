#!/bin/bash
# Session 22, call 5 (H200): dbed5bf's build (the last read: narrow_pointwise's forced-setting checks
# moved to the plan's one `measuring`): gpu_tests, all.
mkdir -p dn && tar -C dn -xJf devbin/bin22d.tar.xz
export LD_LIBRARY_PATH=$PWD/dn/lib CONVGUARD_DATA_DIR=$PWD/data
mkdir -p /tmp/s22e ${OUT:-out}
timeout 200 dn/tests/gpu_tests > /tmp/s22e/tests_all.log 2>&1; echo "gpu_tests rc $?"; tail -3 /tmp/s22e/tests_all.log
tar -C /tmp -cJf ${OUT:-out}/s22e.tar.xz s22e
