#!/usr/bin/env bash
# conv3d_session.sh DEV OUT — the device call of 3-D convs on conv_igemm_wgmma (issue 11: the kernel's D3
# instances, forward and the stride-phase dgrad), sized for one 200-second call.  DEV is what
# tests/gpu/pack_dev.sh packs plus dt/difftest_conv.o and dt/diffharness.o compiled where the library was built,
# and conv_peer.py (bench/conv_peer.py): the tester is linked here from objects only.
#  1. the new 3-D cases ("wg3": forward, dgrad with its stride phases, split-K, padded copies, the fused
#     epilogue and relu_bwd mask), then the existing wgmma regression (--quick "wg" and "dge-": every 1-/2-D
#     conv_igemm_wgmma case of the quick sweep, which shares the kernel file);
#  2. compute-sanitizer memcheck on three --quick 3-D cases (two runs) (odd shapes: the depth bounds test, the folded
#     zero phases of a 3-D dgrad, the 128-wide tile);
#  3. the zoo's 3-D rows (difftest_conv --bench u3d: the planner's engines on the H100) beside
#     bench/conv_peer.py zoo (PyTorch 2.11 + cuDNN 9.19), joined as final9_session.sh does.
# Logs under OUT; a summary on stdout.  SWEEP_S, REG_S, SAN_S, BENCH_S, PEER_S are the time limits.
# Packing DEV (on the build machine, tree at the commit to test):
#   tests/gpu/pack_dev.sh build-conv3d /work/main/build-conv3d-dev
#   mkdir -p DEV/dt && for f in difftest_conv diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/dev_env.sh tests/gpu/conv3d_session.sh bench/conv_peer.py DEV/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
step "3-D cases (wg3)"
timeout "${SWEEP_S:-30}" "$dt" wg3 > "$out/wg3.log" 2>&1
echo "wg3 rc=$?"; grep -E "^FAIL" -A8 "$out/wg3.log" | cut -c1-300 | head -40; grep -E "passed," "$out/wg3.log"
step "wgmma regression (--quick wg, dge-)"
timeout "${REG_S:-25}" "$dt" --quick wg > "$out/reg.log" 2>&1; echo "wg rc=$?"
timeout "${REG_S:-25}" "$dt" --quick dge- >> "$out/reg.log" 2>&1; echo "dge- rc=$?"
grep -E "^FAIL" -A8 "$out/reg.log" | cut -c1-300 | head -30; grep -E "passed," "$out/reg.log"
step "compute-sanitizer memcheck (quick 3-D cases)"
san=/usr/local/cuda/bin/compute-sanitizer
for f in wg3-c24-k wg3d-c8-k24-1x1x1-s2; do # --quick: one dtype each; the first matches two configs
    timeout "${SAN_S:-20}" "$san" --tool memcheck --error-exitcode 9 "$dt" --quick "$f" >> "$out/san.log" 2>&1
    echo "memcheck $f rc=$?"
done
grep -E "ERROR SUMMARY|passed," "$out/san.log"
step "zoo 3-D rows beside cuDNN"
timeout "${BENCH_S:-35}" "$dt" --bench convzoo > "$out/bench.log" 2>&1; echo "bench rc=$?"
PYTHONUNBUFFERED=1 timeout "${PEER_S:-35}" python3 "$dev/conv_peer.py" zoo > "$out/peer.log" 2>&1; echo "peer rc=$?"
awk '/^PEER/ {peer[$2" "$3] = $4} /^BENCH/ {b[++n] = $2" "$3; e[n] = $4; ms[n] = $5; tf[n] = $14}
    END {for (i = 1; i <= n; i++) { p = peer[b[i]]; printf "%-44s %-18s %8.4f %8.4f %6.2f %s TF\n", b[i], e[i], ms[i],
         p, (p > 0 ? ms[i] / p : 0), tf[i] } }' "$out/peer.log" "$out/bench.log" | tee "$out/table.txt"
grep -E "^BENCH.*u3d" "$out/bench.log" | cut -c1-400 > "$out/detail.txt"
(cd "$out" && tar czf logs.tgz --remove-files wg3.log reg.log san.log bench.log peer.log link.log 2>/dev/null)
step done
