#!/usr/bin/env bash
# normbwd_session.sh DEV OUT — the device call for the v3 warp-row backward (issue 12, session 9 "normbwd":
# kernels/norm_warp_bwd.cu, the dscale / dbias partials in shared memory summed per block, the residual out
# of the ring, 3 blocks an SM; bench/RESULTS-norm.md 2026-11-24 session 9 normbwd).  DEV is what
# tests/gpu/pack_dev.sh packs plus dt/difftest_norm.o and dt/diffharness.o compiled where the library was
# built, and dev_env.sh, this script and bench/norm_torch.py copied into DEV.
#  1. difftest_norm warp-rows/ (v3 backward, v2 forward, odd widths 1 7 13 769 8191; f32 / f16 / bf16), then
#     its backward cases once more with XDNN_NORM_BWD_V=2 (the A/B path stays correct);
#  2. compute-sanitizer memcheck on difftest_norm --quick warp-rows/bwd/;
#  3. difftest_norm --bench on the backward rows: v3, then XDNN_NORM_BWD_V=2 (v2), then XDNN_NORM_WARP_V=1;
#  4. bench/norm_torch.py session9 (the copy ceiling and PyTorch's rows);
#  5. the full difftest_norm sweep in the time left (LIMIT_S: the call's budget in seconds).
# Every log goes to OUT/logs.tgz; a summary on stdout.
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. "$(dirname "$0")/dev_env.sh" "$dev" "$out0/logs"
dev_link_tester difftest_norm || exit 1
t=$dev/difftest_norm
finish() { tar -C "$out0" -czf "$out0/logs.tgz" logs && rm -rf "$out0/logs"; }
trap finish EXIT

step "difftest_norm warp-rows/ (v3)"
timeout "${NEW_S:-45}" "$t" warp-rows/ > "$out/new.log" 2>&1
echo "rc=$?"
grep -E "^FAIL" -A8 "$out/new.log" | cut -c1-300 | head -30
grep -E "passed," "$out/new.log"
step "difftest_norm warp-rows/bwd/ with XDNN_NORM_BWD_V=2"
XDNN_NORM_BWD_V=2 timeout "${OLD_S:-15}" "$t" warp-rows/bwd/ > "$out/v2.log" 2>&1
echo "rc=$?"; grep -E "^FAIL" "$out/v2.log" | cut -c1-200 | head -5; grep -E "passed," "$out/v2.log"

step "compute-sanitizer memcheck --quick warp-rows/bwd/"
timeout "${SAN_S:-30}" /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 10 "$t" --quick warp-rows/bwd/ \
    > "$out/san.log" 2>&1
echo "rc=$?"
grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/san.log" | head -8

step "bench: v3, then each A/B switch"
for cfg in default XDNN_NORM_BWD_V=2 XDNN_NORM_WARP_V=1; do
    echo "-- $cfg" | tee -a "$out/bench.log"
    for f in bench/layernorm_bwd/f16/8192x768 bench/rmsnorm_bwd; do
        env ${cfg/default/} timeout "${BENCH_S:-20}" "$t" --bench "$f" > "$out/bench_one.log" 2>&1
        echo "rc=$?" >> "$out/bench_one.log"
        cat "$out/bench_one.log" >> "$out/bench.log"
        grep -E "BENCH|^FAIL|rc=[1-9]" "$out/bench_one.log" | sed 's/^ *BENCH //' | cut -c1-190
    done
done

step "PyTorch (norm_torch.py session9)"
PYTHONUNBUFFERED=1 timeout "${TORCH_S:-40}" python3 "$dev/norm_torch.py" session9 > "$out/torch.log" 2>&1
echo "rc=$?"; grep -E "layernorm|rmsnorm|copy" "$out/torch.log" | head -12

left=$(( ${LIMIT_S:-190} - (SECONDS - t0) - 8 ))
if [ "$left" -gt 10 ]; then
    step "difftest_norm full sweep (${left} s)"
    dev_sweep "$t" "$left"
fi
step done
