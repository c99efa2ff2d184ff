#!/bin/bash
# interleaved driver runs of $OLD (default /tmp/convguard_before) and build/release/convguard; min ms each
OLD=${OLD:-/tmp/convguard_before}
probs=("$@")
for round in 1 2 3; do
  for pr in "${probs[@]}"; do
    P=${pr%%|*}; S=${pr##*|}
    for b in $OLD build/release/convguard; do
      m=$($b driver --problem "$P" -S $S -t 1 --threads 2 -i ${ITERS:-150} 2>&1 | grep -oE 'min [0-9.]+' | awk '{print $2}')
      echo "$round|$P|$S|$b|$m"
    done
  done
done
