#!/bin/bash
# Session 8, call 2: the honest peer at HEAD (three bf16 directions + f32), then racecheck over the
# bulk-copy tests call 1 did not reach.
set -u
S=$(date +%s)
mkdir -p db && tar -C db -xJf devbin/bin.tar.xz
export LD_LIBRARY_PATH=$PWD/db/lib CONVGUARD_DATA_DIR=$PWD/data
O=${OUT:-out}/v2; mkdir -p $O
( time OUT=$O BUILD=db PARTS=peer bash scripts/gpu_check.sh ) > $O/peer_step.log 2>&1
tail -30 $O/peer_step.log
left=$(( 570 - ($(date +%s) - S) ))
echo "racecheck budget ${left}s"
F='Gpu.TensorCoreWgmmaBulkCopy*:Gpu.TensorCoreWgmmaWaveCounting:Gpu.TensorCoreWgmmaTwoPerSmIsDeterministic:Gpu.TensorCoreWgmmaBackwardDataWorkspace:Gpu.TensorCoreWgmmaBackwardDataFilterInPlaceWideTiles'
(time CONVGUARD_WGMMA_WS=4 timeout $left compute-sanitizer --tool racecheck --print-limit 5 db/tests/gpu_tests \
    --gtest_filter="$F") > $O/racecheck.log 2>&1
echo "racecheck rc $?"; grep -E 'OK \]|hazard|ERROR SUMMARY|RACECHECK SUMMARY' $O/racecheck.log | head -20
tar czf ${OUT:-out}/v2.tgz -C ${OUT:-out} v2
