#!/usr/bin/env bash
# lnrms_session.sh DEV OUT — the device call for the v2 warp rows (issue 12, session 9: kernels/norm_warp.cu's
# k_warp_norm2, kernels/norm_warp_bwd.cu; bench/RESULTS-norm.md 2026-11-24 session 9).  DEV is what
# tests/gpu/pack_dev.sh packs plus dt/difftest_norm.o and dt/diffharness.o compiled where the library was
# built, and dev_env.sh, profile8_session.sh, this script and bench/norm_torch.py copied into DEV.
#  1. difftest_norm warp-rows/ (v1 and v2 forward, the warp-row backward, odd widths) against the CPU reference;
#  2. compute-sanitizer memcheck on difftest_norm --quick warp-rows/;
#  3. ncu, one launch each (profile8_session.sh; NCU_CASES replaces the list): forward and backward of rmsnorm
#     bf16 8192x4096 (v2 and, XDNN_NORM_WARP_V=1, the kernels before) and layernorm f16 8192x768 (v2);
#  4. difftest_norm --bench on the rows (v2), then with each A/B switch of BENCH_AB, then norm_torch.py;
#  5. the full difftest_norm sweep in the time left (regressions).
# Every log goes to OUT/logs.tgz (a call brings back 8 files); a summary on stdout.  LIMIT_S: the call's
# budget in seconds (the sweep gets what is left of it); SKIP_NCU leaves step 3 out.  Also used for the v3
# backward (session 9 "normbwd"): NEW_AB=VAR=VALUE runs warp-rows/bwd/ once more under it (the A/B path stays
# correct), SAN_FILTER replaces memcheck's warp-rows/, BENCH_FILES step 4's list.  Session 10 ("normtrim"):
# NEW_FILTER replaces step 1's warp-rows/ (odd-rows/), AB_FILES the A/B runs' bench list, NCU_EXTRA adds ncu options (--clock-control none: the
# durations compare with the event-timed medians), TORCH_ARGS="session10 eager" the peer's rows.
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. "$(dirname "$0")/dev_env.sh" "$dev" "$out0/logs"
dev_link_tester difftest_norm || exit 1
t=$dev/difftest_norm
finish() { tar -C "$out0" -czf "$out0/logs.tgz" logs && rm -rf "$out0/logs"; }
trap finish EXIT

step "difftest_norm ${NEW_FILTER:-warp-rows/}"
timeout "${NEW_S:-40}" "$t" "${NEW_FILTER:-warp-rows/}" > "$out/new.log" 2>&1
echo "rc=$?"
grep -E "^FAIL" -A8 "$out/new.log" | cut -c1-300 | head -40
grep -E "passed," "$out/new.log"
if [ -n "${NEW_AB:-}" ]; then
    step "difftest_norm warp-rows/bwd/ with $NEW_AB"
    env "$NEW_AB" timeout "${AB_S:-15}" "$t" warp-rows/bwd/ > "$out/new_ab.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL" "$out/new_ab.log" | cut -c1-200 | head -5; grep -E "passed," "$out/new_ab.log"
fi

step "compute-sanitizer memcheck --quick ${SAN_FILTER:-warp-rows/}"
timeout "${SAN_S:-40}" /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 10 "$t" --quick "${SAN_FILTER:-warp-rows/}" \
    > "$out/san.log" 2>&1
echo "rc=$?"
grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/san.log" | head -8

if [ -n "${EARLY_SWEEP_S:-}" ]; then
    step "difftest_norm full sweep first (${EARLY_SWEEP_S} s)"
    dev_sweep "$t" "$EARLY_SWEEP_S"
fi

if [ -z "${SKIP_NCU:-}" ]; then
    step "ncu: one launch each"
    TESTERS=difftest_norm NCU_S=${NCU_S:-18} CASES=${NCU_CASES:-"rms_fwd_v2|difftest_norm|bench/rmsnorm/bf16|k_warp_norm2
rms_fwd_v1|difftest_norm|bench/rmsnorm/bf16|k_warp_norm|XDNN_NORM_WARP_V=1
rms_bwd_v2|difftest_norm|bench/rmsnorm_bwd+residual/bf16|k_warp_norm_bwd
rms_bwd_v1|difftest_norm|bench/rmsnorm_bwd+residual/bf16|k_row_bwd_pg|XDNN_NORM_WARP_V=1
ln768_fwd_v2|difftest_norm|bench/layernorm/f16/8192x768|k_warp_norm2
ln768_bwd_v2|difftest_norm|bench/layernorm_bwd/f16/8192x768|k_warp_norm_bwd"} \
        bash "$dev/profile8_session.sh" "$dev" "$out" | grep -vE "^==|^NVIDIA|^[0-9a-f]{7}"
fi

step "bench: v2, then each A/B switch"
for cfg in default ${BENCH_AB:-XDNN_NORM_WARP_V=1 XDNN_NORM_WPR=8}; do
    echo "-- $cfg" | tee -a "$out/bench.log"
    files=${BENCH_FILES:-bench/layernorm/ bench/layernorm_bwd/f16/8192x768 bench/rmsnorm}
    [ "$cfg" != default ] && files=${AB_FILES:-$files}
    for f in $files; do
        env ${cfg/default/} timeout "${BENCH_S:-30}" "$t" --bench "$f" > "$out/bench_one.log" 2>&1
        echo "rc=$?" >> "$out/bench_one.log"
        cat "$out/bench_one.log" >> "$out/bench.log"
        grep -E "BENCH|^FAIL|rc=[1-9]" "$out/bench_one.log" | sed 's/^ *BENCH //' | cut -c1-190
    done
done

if [ -z "${SKIP_TORCH:-}" ]; then
    step "PyTorch (norm_torch.py ${TORCH_ARGS:-})"
    PYTHONUNBUFFERED=1 timeout "${TORCH_S:-50}" python3 "$dev/norm_torch.py" ${TORCH_ARGS:-} > "$out/torch.log" 2>&1
    echo "rc=$?"; grep -E "layernorm|rmsnorm|copy|softmax_float16" "$out/torch.log" | cut -c1-150 | head -24
fi

left=$(( ${LIMIT_S:-190} - (SECONDS - t0) - 8 ))
if [ "$left" -gt 10 ]; then
    step "difftest_norm full sweep (${left} s)"
    dev_sweep "$t" "$left"
fi
step done
