#!/usr/bin/env bash
# stem11_session.sh DEV OUT — the device calls of conv_stem (issue 11 and the ResNet-50 step of issue 12, session
# 11): the C <= 8 2-D conv and its weight gradient as mma.sync implicit GEMMs whose im2col fragments come from
# the CTA's input patch in shared memory (kernels/conv_stem.cu), against conv_im2col_gemm (explicit im2col +
# cuBLASLt) and cuDNN.  DEV: tests/gpu/pack_dev.sh's folder plus dt/ (difftest_conv.o, diffharness.o compiled
# where the library was built) and conv_peer.py (bench/).  DRY=1: the script's own check without a GPU.
# PART=layers (the first call):
#  1. correctness: difftest_conv stem- (the forced conv_stem cases and refusals, fwd and wgrad, f16 / bf16);
#  2. compute-sanitizer memcheck on --quick stem-;
#  3. the stem rows (difftest_conv --bench: "_stem" forced on conv_stem, which the planner now picks for the
#     rows without a suffix too, and "_im2col" forced on the old engine), fwd and wgrad, N = 32 and 256, f16 and
#     bf16 NHWC, then cuDNN on the same shapes (bench/conv_peer.py stem).
# PART=final (the last call): 1, 2, the stem rows again (BENCH_F) beside the peer, then the ResNet-50 N = 256
#  training step with conv_stem and without it (XDNN_CONV_STEM_OFF=1: the stem on conv_im2col_gemm as before;
#  STEP_S), partitions by engine, then the whole conv/ family in the seconds left.
# A table last (summary.txt); logs in OUT/logs.tgz.  BUDGET_S: the whole call's seconds.
#
# EXPECTED (written before the first call).  Floors at 2976 GB/s: fwd N=256 x 77 MB + y 411 MB = 0.164 ms; the
# MMAs at Kc 160 (147 useful) 65.8 GFLOP, at ~250-300 TFLOP/s for mma.sync fed by 32-bit shared loads ~0.22-0.26
# ms.  Forward N=256: conv_im2col_gemm 1.13 ms -> ~0.27-0.30 ms (cuDNN: ~0.2-0.3 ms, so ~1.0-1.3x cuDNN);
# N=32 ~0.04 ms (1.57x cuDNN -> ~1.0-1.2x).  Weight gradient N=256: 1.23 ms -> ~0.30-0.40 ms (dy 411 MB read
# once + x ~1.5x, Kc 147 -> 152 per MMA n tile); N=32 proportionally, plus ~5 us for the partials' sum.  The
# step: -1.5 ms (stem_c 1.13 -> 0.3, stem_wn/dw 1.23 -> 0.4).
#
# OUTCOME of the first call (ed000b2, H100): correct (stem- 54 of 54, memcheck clean) but latency-bound: fwd N=256
# 0.87 ms (im2col 1.10), wgrad 1.22 (1.20), N=32 fwd 0.150 (0.157): ~13 us per 128-pixel tile per CTA, the patch
# staged one 16-bit load at a time (each waited for before the next) and the weights likewise (~40 us per CTA).
# EXPECTED of the second version (loads batched: 24 per thread in flight per patch, 8 for the weights; dy by
# cp.async during the patch): one or two memory latencies per tile, fwd N=256 ~0.3-0.4 ms, wgrad ~0.4-0.5 ms.
# OUTCOME of the final call (4073934): stem- 54 of 54, memcheck clean, conv/ 811 of 811; fwd N=256 0.40 ms
# (im2col 1.10, cuDNN f16 0.64), wgrad 0.42 (1.18, cuDNN f16 0.65); the step 46.35 -> 44.96 ms (-1.40).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dry=${DRY:+--dry}
[ -x "$dev/difftest_conv" ] || dev_build_testers difftest_conv || exit 1
dt=$dev/difftest_conv
left() { echo $(( ${BUDGET_S:-140} - (SECONDS - t0) )); }
part=${PART:-layers}
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }

bench_rows() { # BENCH_F's filters ('|'-separated) into OUT/bench.log, leaving PEER_S seconds for the peer
    : > "$out/bench.log"
    IFS='|' read -r -a bf <<< "$1"
    for f in "${bf[@]}"; do
        [ "$(left)" -gt "${PEER_S:-35}" ] || { echo "out of time before $f"; break; }
        timeout "$(( $(left) - ${PEER_S:-35} ))" "$dt" $dry --bench "$f" >> "$out/bench.log" 2>&1; echo "$f rc=$?"
    done
    step "peer: bench/conv_peer.py stem"
    [ -n "$dry" ] || PYTHONUNBUFFERED=1 timeout "$(( $(left) - 5 ))" python3 "$dev/conv_peer.py" stem > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log" 2>/dev/null
}
steps() { # the ResNet-50 step with conv_stem (on) and without (off), STEP_S seconds in all
    local end=$(( SECONDS + ${STEP_S:-100} )) lim ab off
    dev_link_cli || return 1
    for ab in on off; do # the first run compiles the generated kernels into XDNN_CACHE_DIR; the second reuses them
        lim=$(( end - SECONDS )); [ "$ab" = off ] || lim=$(( lim * 55 / 100 ))
        [ "$lim" -gt 15 ] || { echo "out of time before $ab"; break; }
        off=0; [ "$ab" = on ] || off=1
        dev_step "$ab" "$lim" XDNN_CONV_STEM_OFF=$off -- --iters "${ITERS:-5}" --warmup 2
        python3 tests/gpu/step_by_engine.py "$out/step_$ab.json" stem_c stem_wn/dw 2>&1 | head -3
    done
}

step "correctness: difftest_conv stem-"
timeout "${SWEEP_S:-40}" "$dt" $dry stem- > "$out/sweep_stem.log" 2>&1; echo "rc=$?"
summary "$out/sweep_stem.log"
step "memcheck --quick stem-"
timeout "${SAN_S:-30}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" $dry --quick stem- \
    > "$out/memcheck.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
if [ "$part" = layers ]; then
    step "bench: the stem rows (conv_stem forced, conv_im2col_gemm forced)"
    bench_rows "${BENCH_F:-_stem n|_im2col n32c3h224|_im2col n256c3h224}"
else # final: the stem rows, the step on / off, then the conv/ family in what is left
    step "bench: the stem rows"
    bench_rows "${BENCH_F:-_stem n|bf16_nhwc_im2col n256c3h224}"
    [ -n "$dry" ] || steps
    step "the conv/ family"
    timeout "$(( $(left) - 4 ))" "$dt" $dry conv/ > "$out/sweep_conv.log" 2>&1; echo "rc=$? (124: cut short, the cases listed ran)"
    summary "$out/sweep_conv.log"; echo "of $("$dt" --list | grep -c '^conv/') conv/ cases"
fi

step "tables"
{
    echo "== correctness"
    for l in sweep_stem sweep_conv; do [ -f "$out/$l.log" ] && echo "$l: $(summary "$out/$l.log" | tail -1)"; done
    [ -f "$out/memcheck.log" ] && grep -E "ERROR SUMMARY" "$out/memcheck.log" | tail -1
    if [ -f "$out/bench.log" ]; then
        echo "== the stem rows (ms; cuDNN: conv_peer.py stem, same call; TF/s of the row's 147-useful-column FLOPs)"
        awk 'FNR == 1 {f++} f == 1 && /^PEER/ {p[$2" "$3] = $4; next}
             /^BENCH/ && $6 == "ok" {n++; nm[n] = $2; sh[n] = $3; eng[n] = $4; ms[n] = $5; tf[n] = $14}
             END {printf "%-34s %-20s %-18s %8s %8s %7s %6s\n", "row", "shape", "engine", "ms", "cuDNN", "x/cuDNN", "TF/s";
                  for (i = 1; i <= n; i++) {b = nm[i]; sub(/_(stem|im2col|igemm|mma)$/, "", b); q = p[b" "sh[i]];
                      printf "%-34s %-20s %-18s %8.4f %8.4f %7.2f %6s\n", nm[i], sh[i], eng[i], ms[i], q,
                             (q > 0 ? ms[i] / q : 0), tf[i]}}' "$out/peer.log" "$out/bench.log" 2>/dev/null
        grep -hE "^BENCH" "$out/bench.log" | head -1 | cut -c1-400
    fi
    for ab in on off; do
        [ -f "$out/step_$ab.json" ] && echo "step $ab: $(python3 tests/gpu/step_by_engine.py "$out/step_$ab.json" stem_c stem_wn/dw 2>&1 | tr '\n' ' ' | cut -c1-600)"
    done
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^device.txt$'))
step done
