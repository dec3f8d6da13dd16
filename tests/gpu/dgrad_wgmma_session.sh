#!/usr/bin/env bash
# dgrad_wgmma_session.sh DEV OUT — the device call of conv_dgrad on
# conv_igemm_wgmma (issue 11; conv_dgrad.h).  DEV is what tests/gpu/pack_dev.sh
# packs plus dt/difftest_conv.o and dt/diffharness.o compiled where the
# library was built, and conv_peer.py (bench/conv_peer.py of that tree):
#   tests/gpu/pack_dev.sh build-X DEV && mkdir -p DEV/dt && for f in difftest_conv diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done; cp bench/conv_peer.py DEV/
#  1. sweep: every conv_dgrad case (the new wgd- ones on conv_igemm_wgmma, conv_igemm's phase dgrad through
#     the shared lowering, conv_direct, conv_dw), the forward wgmma cases and its fused epilogues (the store
#     changed);
#  2. compute-sanitizer memcheck on the --quick wgd- cases;
#  3. the ResNet-50 dgrad bench (N = 32, f16) and the f16 forward, beside cuDNN (conv_peer.py dgrad).
# Logs under OUT, a summary and the bench table on stdout.  SWEEP_S, SAN_S, BENCH_S, PEER_S: time limits;
# SWEEP_FILTERS (space-separated) and SAN_FILTER narrow the sweep and the memcheck.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
step "sweep"
: > "$out/sweep.log"
for f in ${SWEEP_FILTERS:-conv/dgrad/ conv/fwd/wg- fwd+epi/wg}; do
    timeout "${SWEEP_S:-50}" "$dt" "$f" >> "$out/sweep.log" 2>&1
    echo "$f rc=$?"
done
grep -E "^FAIL" -A6 "$out/sweep.log" | cut -c1-400 | head -40
grep -E "passed," "$out/sweep.log"
step "memcheck"
timeout "${SAN_S:-45}" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$dt" --quick \
    "${SAN_FILTER:-conv/dgrad/wgd}" > "$out/memcheck.log" 2>&1
echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
step "bench"
: > "$out/bench.log"
for f in conv_dgrad_f16 "conv_fwd_f16_nhwc n32"; do
    timeout "${BENCH_S:-40}" "$dt" --bench "$f" >> "$out/bench.log" 2>&1
    echo "bench $f rc=$?"
done
step "peer"
timeout "${PEER_S:-45}" python3 "$dev/conv_peer.py" dgrad > "$out/peer.log" 2>&1
echo "peer rc=$?"
head -1 "$out/peer.log"
step "table"
awk '/^PEER/ {peer[$2" "$3] = $4} /^BENCH/ {b[++n] = $2" "$3; e[n] = $4; ms[n] = $5}
    END {for (i = 1; i <= n; i++) { k = b[i]; sub(/_(igemm|wgmma) /, " ", k); p = peer[k];
         printf "%-46s %-18s %8.4f %8.4f %6.2f\n", b[i], e[i], ms[i], p, (p > 0 ? ms[i] / p : 0) } }' \
    "$out/peer.log" "$out/bench.log" | tee "$out/table.txt"
grep -E "^BENCH conv_dgrad" "$out/bench.log" | grep -oE "dgrad as [^,]*\\([^)]*\\)|split-K [0-9]+" | sort | uniq -c
step done
