#!/usr/bin/env bash
# warp_rows_session.sh DEV OUT — the device call for the warp-row kernels
# (kernels/norm_warp.cu: layernorm / rmsnorm forward, softmax / log_softmax
# rows; bench/RESULTS-norm.md 2026-11-24 session 7).  DEV is what
# tests/gpu/pack_dev.sh packs plus dt/difftest_norm.o and dt/diffharness.o
# compiled where the library was built (commands below), and bench/norm_torch.py
# copied to DEV/norm_torch.py; the tester is linked here from objects only.
#  1. difftest_norm "warp-rows": the new boundary cases against the CPU reference;
#  2. compute-sanitizer memcheck on difftest_norm --quick warp-rows;
#  3. difftest_norm --bench (layernorm, softmax / log_softmax, rmsnorm) with the
#     warp rows (default), then with each A/B switch of BENCH_AB (default:
#     XDNN_NORM_WPR=4 four warps per row, XDNN_NORM_NO_WARP=1 the paths before:
#     norm.cu's block per row, reduce_nvrtc's softmax), then norm_torch.py
#     (PyTorch) in the same call;
#  4. the full difftest_norm sweep (every other case: regressions).
# Logs under OUT; a summary on stdout.  NEW_S, SAN_S, BENCH_S, TORCH_S, SWEEP_S are
# the steps' limits (they fit one 240-second call); SKIP_SWEEP leaves step 4 out.
# Packing DEV (on the build machine, tree at the commit to test):
#   tests/gpu/pack_dev.sh build-rowk /work/main/build-rowk-dev
#   mkdir -p DEV/dt && for f in difftest_norm diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/warp_rows_session.sh tests/gpu/dev_env.sh bench/norm_torch.py DEV/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_norm || exit 1
t=$dev/difftest_norm

step "difftest_norm warp-rows"
timeout "${NEW_S:-40}" "$t" warp-rows > "$out/new.log" 2>&1
echo "rc=$?"
grep -E "^FAIL" -A12 "$out/new.log" | cut -c1-400 | head -60
grep -E "passed," "$out/new.log"

step "compute-sanitizer memcheck --quick warp-rows"
timeout "${SAN_S:-45}" /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 10 "$t" --quick warp-rows > "$out/san.log" 2>&1
echo "rc=$?"
grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/san.log" | head -12

step "bench: warp rows, then each A/B switch"
for cfg in "default" ${BENCH_AB:-XDNN_NORM_WPR=4 XDNN_NORM_NO_WARP=1}; do
    echo "-- $cfg" | tee -a "$out/bench.log"
    for f in bench/layernorm/ softmax/ bench/rmsnorm/; do
        env ${cfg/default/} timeout "${BENCH_S:-25}" "$t" --bench "$f" > /tmp/bench_one.log 2>&1
        echo "rc=$?" >> /tmp/bench_one.log
        cat /tmp/bench_one.log >> "$out/bench.log"
        grep -E "BENCH|^FAIL|rc=[1-9]" /tmp/bench_one.log | sed 's/^ *BENCH //' | cut -c1-200
    done
done

step "PyTorch (norm_torch.py)"
PYTHONUNBUFFERED=1 timeout "${TORCH_S:-60}" python3 "$dev/norm_torch.py" > "$out/torch.log" 2>&1
echo "rc=$?"; grep -v Warning "$out/torch.log" | head -20

if [ -z "${SKIP_SWEEP:-}" ]; then
    step "difftest_norm full sweep"
    timeout "${SWEEP_S:-80}" "$t" > "$out/sweep.log" 2>&1
    echo "rc=$? (124: cut short; the cases listed ran)"
    grep -E "^FAIL" "$out/sweep.log" | cut -c1-300 | head -20
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/sweep.log") of $("$t" --list | wc -l) cases"
    grep -E "passed," "$out/sweep.log"
fi
step done
