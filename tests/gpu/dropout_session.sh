#!/usr/bin/env bash
# dropout_session.sh DEV OUT — the device call of the attention dropout mask of
# one Philox call per row and 8 keys (session 10, issue 10; src/ops/sdpa.h),
# sized for one 200-second call.  DEV is what tests/gpu/pack_dev.sh packs plus
# dt/difftest_seq.o and dt/diffharness.o compiled where the library was built,
# dev_env.sh, this script and py/ (bench/sdpa_mask_peer.py with bench/peer.py).
#  1. difftest_seq: the new drop16 cases (Skv 77 and 13, Sq 1, GQA, p 0.5 and
#     0.01, D 40..256, every dropout engine), then every older dropout case
#     ("/dropout/", "/all/", "+dropout") against the new CPU reference;
#  2. compute-sanitizer memcheck on the --quick p 0.5 drop16 cases;
#  3. bench: b4h16s4096d128 bf16 dropout 0.1 forward on sdpa_flash_wgmma and
#     sdpa_flash, the backward on sdpa_bwd_flash, the plain forward beside
#     them; then the PyTorch peer (cuDNN, flash, efficient) in the same call;
#  4. what time is left: the --quick regression of sdpa_bwd_flash and
#     sdpa_flash (their no-dropout loops were restructured too).
# Logs under OUT (tarred but summary.txt); a summary on stdout.  SWEEP_S, SAN_S,
# BENCH_S, PEER_S, REG_S are the time limits.
# Packing DEV (on the build machine, tree at the commit to test):
#   tests/gpu/pack_dev.sh build-dropout /work/main/build-dropout-dev
#   mkdir -p DEV/dt DEV/py && for f in difftest_seq diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/dev_env.sh tests/gpu/dropout_session.sh DEV/; cp bench/sdpa_mask_peer.py bench/peer.py DEV/py/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
step "sweep: drop16, then the older dropout cases"
for f in drop16 /dropout/ /all/ +dropout; do
    timeout "${SWEEP_S:-40}" "$dt" "$f" >> "$out/sweep.log" 2>&1
    echo "$f rc=$? $(grep -E 'passed,' "$out/sweep.log" | tail -1)"
done
grep -E "^FAIL" -A8 "$out/sweep.log" | cut -c1-400 | head -40
echo "sweep: $(grep -cE '^PASS' "$out/sweep.log") passed, $(grep -cE '^FAIL' "$out/sweep.log") failed"
step "compute-sanitizer memcheck (--quick drop16-p0.5/)"
timeout "${SAN_S:-30}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick drop16-p0.5/ \
    > "$out/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
step "bench"
for f in sdpa_flash_wgmma/sdpa_fwd_bf16_dropout/ sdpa_flash/sdpa_fwd_bf16_dropout/ \
    sdpa_bwd_flash/sdpa_bwd_bf16_dropout/ sdpa_flash_wgmma/sdpa_fwd_bf16_plain/; do
    DIFFTEST_ITERS=${ITERS:-10} timeout "${BENCH_S:-15}" "$dt" --bench "bench/masks/$f" >> "$out/bench.log" 2>&1
    echo "$f rc=$?"
done
grep -E "^(PASS|FAIL)|TIME|ms" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-220 | head -20
step "PyTorch peer (dropout, plain)"
(cd "$dev/py" && MASK_PEER_CASES=dropout,plain timeout "${PEER_S:-50}" python3 sdpa_mask_peer.py) > "$out/peer.log" 2>&1
echo "peer rc=$?"; cut -c1-200 "$out/peer.log" | tail -12
step "regression (--quick sdpa_bwd_flash, sdpa_flash/)"
for f in sdpa_bwd_flash sdpa_flash/; do
    timeout "${REG_S:-20}" "$dt" --quick "$f" >> "$out/reg.log" 2>&1
    echo "$f rc=$? $(grep -E 'passed,' "$out/reg.log" | tail -1)"
done
grep -E "^FAIL" "$out/reg.log" | cut -c1-300 | head -10
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^bench.log$' -e '^peer.log$'))
