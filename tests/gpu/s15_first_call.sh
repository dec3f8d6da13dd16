#!/usr/bin/env bash
# s15_first_call.sh DEV OUT — the next session's first device call, on branch wip/s15 (main + wip/fix14 +
# wip/q14, merged in session 14, which had no device time): the two branches' session scripts one after the
# other (~150 s + ~90 s), each in its own OUT folder.  Run from the root of the tree as
# `bash tests/gpu/s15_first_call.sh DEV OUT`, DEV packed from this tree's build:
#   make -j2 BUILD=build-s15 && tests/gpu/pack_dev.sh build-s15 build-s15-dev
#   mkdir -p build-s15-dev/dt && for f in difftest difftest_conv difftest_norm difftest_seq difftest_quant \
#     diffharness; do gcc -std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -Ibuild-s15/gen \
#     -I/usr/local/cuda/include -c tests/gpu/$f.c -o build-s15-dev/dt/$f.o; done
#   gcc ... tests/gpu/plan_api_check.c build-s15/libxdnn.a ... -o build-s15-dev/plan_api_check (as
#   device_session.sh builds it) and cp build-s15/tests/test_plan_exec build-s15-dev/
# then `run` with carry [build-s15-dev].  If both pass: merge wip/fix14 into main (the two man-page deviations
# go away), and wip/q14 with XDNN_QUANT_POW2 on by default if step 3 of q14_session.sh shows the gain.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
DEADLINE=${FIX14_S:-160} bash tests/gpu/fix14_session.sh "$dev" "$out/fix14" 2>&1 | tee "$out/fix14.txt"
DEADLINE=${Q14_S:-100} bash tests/gpu/q14_session.sh "$dev" "$out/q14" 2>&1 | tee "$out/q14.txt"
