#!/usr/bin/env bash
# stem2_session.sh DEV OUT — the device calls of conv_stem's second pass (session 11, issue 11 / issue 12's ResNet
# step): the forward's y staged in shared memory and written in 16-byte stores, the next tile's patch (and, in
# the weight gradient, dy) prefetched into L2 during this tile's MMAs, a 4-CTA-an-SM forward as an A/B
# (XDNN_CONV_STEM_FWD_CTAS=4), the partials' sum spread over 8x more threads (the weight gradient's prefetch
# was taken out after the call, see OUTCOME), and the weight gradient's pixels past OH / OW zeroed in its B
# fragments (an Inf of x that only they reach no longer becomes NaN in dw).
# DEV: tests/gpu/pack_dev.sh's folder plus dt/ (difftest_conv.o, diffharness.o), conv_peer.py, dev_env.sh,
# this script, and old/conv_stem.cu.o (main's kernel object: the new stem-inf- cases linked against it must
# fail).  DRY=1: the script's own check without a GPU.  BUDGET_S: the call's seconds.
# PART=check (call 1): stem- (3 CTAs an SM, then the forward cases with 4), the stem-inf- cases on main's
#   kernels (expected: the wgrad ones FAIL), memcheck --quick stem-, then the conv/ family in what is left.
# PART=bench (call 2): the stem rows (3 CTAs, then the N = 256 forward rows with 4) beside cuDNN (conv_peer.py stem),
#   then the ResNet-50 N = 256 step with conv_stem and with XDNN_CONV_STEM_OFF=1.
#
# EXPECTED (written before the first call).  Session 11's first pass: fwd N=256 bf16 0.402 ms, wgrad 0.419
# (cuDNN f16 0.64 / 0.65), ~40% of the 0.164 ms memory floor.  The forward's y (411 MB) left in 4-byte stores
# of 8 pixels x 16 bytes (each warp store 8 half-used sectors); 16-byte stores of whole 128-byte pixels halve the
# store requests; the L2 prefetch turns the next patch's DRAM latency into L2 latency; a fourth CTA an SM hides
# a further part of the wait.  Forward N=256: 0.40 -> ~0.25-0.30 ms (toward ~0.25), 4 CTAs a few % better
# again.  Weight gradient: the prefetch and the skipped rows (none at 112 x 112) give less, the partials' sum
# (~400 partials of 64 x 147 f32, summed by 37 blocks one load after another) ~20-40 us -> ~5-8 us: wgrad
# 0.42 -> ~0.33-0.38 ms (toward ~0.3).  The step: a further -0.1 to -0.2 ms.
#
# OUTCOME (9f194d5, H100; the 2 calls 31 + 61 s).  Call 1: stem- 71 of 71, the forward stem- cases with 4 CTAs an
# SM 22 of 22, the new stem-inf- wgrad cases on main's kernels 2 of 2 FAIL (NaN where the reference is finite, 768
# of 9408 dw values), memcheck --quick stem- 0 errors, conv/ 975 of 975.  Call 2: far less than expected: fwd
# N=256 f16 0.380 ms (session 11 0.404; cuDNN 0.607, 0.63x, the same ratio as before: cuDNN moved 5% too), wgrad
# 0.421 (0.419: no change; N=32 0.092 -> 0.080, which only the partials' sum can explain, so at N=256 the
# weight gradient's L2 prefetch cost about what the sum saved: that prefetch was taken out, the sum kept);
# the 4-CTA rows and the bf16 N=256 rows did not fit the bench's 28 s (cut; STEM4_S is now 25 s).  In the step
# (bf16) stem_c 0.418 -> 0.389 ms, stem_wn/dw 0.436 -> 0.437; the step 44.08 ms, 45.67 with XDNN_CONV_STEM_OFF=1.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dry=${DRY:+--dry}
left() { echo $(( ${BUDGET_S:-75} - (SECONDS - t0) )); }
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
part=${PART:-check}
[ -x "$dev/difftest_conv" ] || dev_build_testers difftest_conv || exit 1
dt=$dev/difftest_conv

if [ "$part" = check ]; then
    step "correctness: difftest_conv stem-"
    timeout "${SWEEP_S:-25}" "$dt" $dry stem- > "$out/sweep_stem.log" 2>&1; echo "rc=$?"; summary "$out/sweep_stem.log"
    step "the forward stem- cases with XDNN_CONV_STEM_FWD_CTAS=4"
    XDNN_CONV_STEM_FWD_CTAS=4 timeout 15 "$dt" $dry conv/fwd/stem- > "$out/sweep_stem4.log" 2>&1; echo "rc=$?"
    summary "$out/sweep_stem4.log"
    step "stem-inf- on main's conv_stem kernels (the wgrad cases must FAIL)"
    if [ -f "$dev/old/conv_stem.cu.o" ]; then
        cp "$dev/libxdnn.a" "$out/old.a" && (cd "$dev/old" && ar r "$out/old.a" conv_stem.cu.o) &&
            gcc -o "$out/dt_old" "$dev/dt/difftest_conv.o" "$dev/dt/diffharness.o" "$out/old.a" -L"$dev/lib" -lcjson \
                -lm -fopenmp -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -ldl -lpthread -lrt >> "$out/link.log" 2>&1 &&
            timeout 15 "$out/dt_old" $dry conv/wgrad/stem-inf > "$out/sweep_old.log" 2>&1
        echo "rc=$?"; grep -E "^(PASS|FAIL)" "$out/sweep_old.log" | cut -c1-240; rm -f "$out/old.a" "$out/dt_old"
    fi
    step "memcheck --quick stem-"
    timeout "${SAN_S:-25}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" $dry --quick stem- \
        > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    step "the conv/ family"
    timeout "$(( $(left) - 3 ))" "$dt" $dry conv/ > "$out/sweep_conv.log" 2>&1; echo "rc=$? (124: cut short, the cases listed ran)"
    summary "$out/sweep_conv.log"; echo "of $("$dt" --list | grep -c '^conv/') conv/ cases"
else
    step "bench: the stem rows (3 CTAs an SM)"
    timeout "${BENCH_S:-25}" "$dt" $dry --bench "_stem n" > "$out/bench.log" 2>&1; echo "rc=$?"
    step "bench: the forward rows with XDNN_CONV_STEM_FWD_CTAS=4"
    for f in "${STEM4_F:-_stem n256c3h224k64r7s2p3}"; do
        XDNN_CONV_STEM_FWD_CTAS=4 timeout "${STEM4_S:-25}" "$dt" $dry --bench "$f" 2>&1 | sed 's/^BENCH conv_fwd_\([a-z0-9]*\)_nhwc_stem/BENCH conv_fwd_\1_nhwc_stem4/' >> "$out/bench.log"
    done
    step "peer: bench/conv_peer.py stem"
    [ -n "$dry" ] || PYTHONUNBUFFERED=1 timeout "${PEER_S:-20}" python3 "$dev/conv_peer.py" stem > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log" 2>/dev/null
    if [ -z "$dry" ] && dev_link_cli; then
        for ab in on off; do
            lim=$(( $(left) - 2 )); [ "$ab" = off ] || lim=$(( lim * 55 / 100 ))
            [ "$lim" -gt 8 ] || { echo "out of time before $ab"; break; }
            off=0; [ "$ab" = on ] || off=1
            dev_step "$ab" "$lim" XDNN_CONV_STEM_OFF=$off -- --iters "${ITERS:-5}" --warmup 2
        done
    fi
fi

step "tables"
{
    echo "== correctness"
    for l in sweep_stem sweep_stem4 sweep_old sweep_conv; do [ -f "$out/$l.log" ] && echo "$l: $(summary "$out/$l.log" | tail -1)"; done
    [ -f "$out/sweep_old.log" ] && grep -E "^(PASS|FAIL)" "$out/sweep_old.log" | cut -c1-200
    [ -f "$out/memcheck.log" ] && grep -E "ERROR SUMMARY" "$out/memcheck.log" | tail -1
    if [ -f "$out/bench.log" ]; then
        echo "== the stem rows (ms; cuDNN: conv_peer.py stem, same call; stem4: XDNN_CONV_STEM_FWD_CTAS=4)"
        awk 'FNR == 1 {f++} f == 1 && /^PEER/ {p[$2" "$3] = $4; next}
             /^BENCH/ && $6 == "ok" {n++; nm[n] = $2; sh[n] = $3; ms[n] = $5; tf[n] = $14}
             END {printf "%-34s %-20s %8s %8s %7s %6s\n", "row", "shape", "ms", "cuDNN", "x/cuDNN", "TF/s";
                  for (i = 1; i <= n; i++) {b = nm[i]; sub(/_(stem4|stem)$/, "", b); q = p[b" "sh[i]];
                      printf "%-34s %-20s %8.4f %8.4f %7.2f %6s\n", nm[i], sh[i], ms[i], q,
                             (q > 0 ? ms[i] / q : 0), tf[i]}}' "$out/peer.log" "$out/bench.log" 2>/dev/null
        grep -hE "^BENCH" "$out/bench.log" | head -2 | cut -c1-400
    fi
    for ab in on off; do
        [ -f "$out/step_$ab.json" ] && echo "step $ab: $(python3 tests/gpu/step_by_engine.py "$out/step_$ab.json" stem_c stem_wn/dw 2>&1 | tr '\n' ' ' | cut -c1-600)"
    done
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^device.txt$'))
step done
