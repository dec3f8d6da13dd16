#!/usr/bin/env bash
# s16_check2.sh DEV OUT — session 16's second merged check (tree s16x: main's softmax +inf fix, wip/tpose, wip/maxbwd
# merged, wip/avgpool on top): avgpool16_session.sh (its own steps, ~120 s), then the softmax / cross_entropy +inf
# cases of 767d9bc and their families (~60 s).  EXPECTED: every case passes (the plus-inf cases fail on the old
# kernels: NaN against 0 off the +inf), memcheck 0 errors.
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
DEADLINE=${AVG_S:-125} bash tests/gpu/avgpool16_session.sh "$dev" "$out0/avg" 2>&1 | tee "$out0/avg.txt" | tail -40
. tests/gpu/dev_env.sh "$dev" "$out0/inf" > /dev/null
out=$out0/inf; DEADLINE=${INF_S:-70}
step "softmax / xent +inf"; dev_build_testers difftest_index || exit 1
timeout "$(tl 20)" "$dev/difftest_norm" plus-inf > "$out/t_plusinf.log" 2>&1; echo "plus-inf rc=$?"; counts "$out/t_plusinf.log"
timeout "$(tl 20)" "$dev/difftest_index" xent/ > "$out/t_xent.log" 2>&1; echo "xent/ rc=$?"; counts "$out/t_xent.log"
timeout "$(tl 30)" "$dev/difftest_norm" warp-rows/softmax > "$out/t_wrsm.log" 2>&1; echo "warp-rows/softmax rc=$?"; counts "$out/t_wrsm.log"
(cd "$out0" && tar czf logs.tgz --remove-files avg inf)
