#!/usr/bin/env bash
# f32conv_session.sh DEV OUT — the device calls of conv_f32_gemm (issue 11, session 11: f32 conv, conv_dgrad and
# conv_wgrad as an explicit im2col feeding cuBLASLt's f32 GEMM, CUBLAS_COMPUTE_32F without tf32 and
# CUBLAS_COMPUTE_32F_FAST_TF32 with it; dgrad by W^T dy then a col2im gather).  DEV: tests/gpu/pack_dev.sh's folder
# plus dt/ (difftest_conv.o, diffharness.o compiled where the library was built), conv_peer.py (bench/).
# PART=first (the first call):
#  1. correctness: the f32g- cases (forced on conv_f32_gemm: fwd / dgrad / wgrad, NCHW / NHWC, tf32 on and off,
#     1x1 / 3x3 s1 s2 / 7x7 s2 C = 3 / dilation 2 / asymmetric pads, C and K of 1 .. 130, 1-D, 3-D, N = 1,
#     chunks of images forced) and the refusals;
#  2. compute-sanitizer memcheck on the --quick f32g- cases;
#  3. bench: difftest_conv --bench f32_nchw (r50's f32 NCHW forward, dgrad and wgrad as planned; the forward
#     with tf32 as planned, forced on conv_igemm and on conv_f32_gemm), and the forward with XDNN_F32GEMM_OFF=1
#     (conv_direct, the old path) in the same call, then cuDNN on the same shapes (bench/conv_peer.py f32).
# PART=sweep (a later call): the whole conv/ family (every engine's cases: the planner now has one more engine).
# PART=final (the last call, after the first call's table): the f32g cases (now with the one-GEMM "flat" form for
# P*Q <= 1024 and the per-image form forced, "/batched"), their memcheck, the whole conv/ family (SWEEP_S), the
# bench rows as planned, with XDNN_F32GEMM_FLAT=0 and =1 (the A/B of the flat form), conv_direct's forwards, one
# row's kernels timed by ncu (NCU_F), then cuDNN.
#
# After the first call (fd777bc): true f32 fwd 0.55-2.16x cuDNN (geomean 1.04), dgrad 0.45-3.55x, wgrad
# 0.60-1.99x; conv_direct 11-46x slower than this engine.  The worst: the 3x3 dgrads (col2im's 64-bit divisions:
# 13 per dx element) and the small-image layers (per-image GEMMs of M = 49 .. 784 rows).  EXPECTED of the final
# call: the 32-bit col2im takes the 3x3 dgrads from 3.55 / 2.67x to ~1.5-2x; the flat form the 7x7 and 14x14
# layers from 0.86-1.33x (fwd) to ~0.7-1.0x, their tf32 forward 2.1x -> ~1x.
# OUTCOME (703aa9c): 160/160 f32g, conv/ 932/932, memcheck clean; the 3x3 dgrads 2.09x / 1.92x (col2im 196 us of
# 434 at 64@56, ncu), the flat form better at 7x7 only for the forward (0.66x; tf32 0.98x) and up to 14x14 for the
# dgrad, worse above (the y buffer): the rule is now fwd P*Q <= 64, dgrad <= 256.  bench/RESULTS-conv.md.
# A table last (summary.txt); logs in OUT/logs.tgz.  BUDGET_S: the whole call's seconds (default 140).
#
# EXPECTED (written before the first call).  cuDNN's true-f32 rows ran 7-29 TFLOP/s in session 10 and
# conv_direct 0.7-1.4 (13.7-48.5x slower, geomean 28.8x).  cuBLASLt's f32 GEMM peaks at ~51 TFLOP/s (8192^3): on
# these shapes (GEMM M = P*Q per image 49 .. 12544, N = K 64 .. 512, reduction C*R*S 64 .. 4608) ~30-45.  The
# 1x1 stride-1 forwards read x in place (no im2col): ~0.9-1.2x cuDNN.  The 3x3 forwards pay the im2col (9x x's
# bytes written and read back: 231 MB at 64@56, ~90 us at 2.6 TB/s, against ~190 us of GEMM at 40 TFLOP/s):
# ~1.1-1.5x cuDNN.  The stem (C*R*S = 147, K = 64) is GEMM-shape-poor: ~1.5-2x.  dgrad: the GEMM plus the
# col2im gather of 9x dx: ~1.2-1.6x; wgrad (one long-reduction GEMM per chunk, cuBLASLt's split-K): ~1.0-1.5x.
# With tf32 the im2col's traffic dominates the 3x3 layers (GEMM ~5x faster): conv_igemm (implicit GEMM on packed
# channels-last copies) should keep them; conv_f32_gemm should win the 1x1 layers (no copies).  Overall: f32
# geomean from 28.8x to ~1.3x cuDNN.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
dry=${DRY:+--dry} # DRY=1: the script's own check on a machine without a GPU (CPU reference and plans only)
left() { echo $(( ${BUDGET_S:-140} - (SECONDS - t0) )); }
part=${PART:-first}
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed (all runs)"; }

check_f32g() { # the f32g cases, then memcheck on their --quick subset
    step "correctness: f32g"
    timeout "${CASES_S:-30}" "$dt" $dry f32g > "$out/cases.log" 2>&1; echo "rc=$?"; summary "$out/cases.log"
    step "memcheck --quick f32g"
    timeout "${SAN_S:-30}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" $dry --quick f32g \
        > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
}

if [ "$part" = first ]; then
    check_f32g
    step "bench: --bench f32_nchw (as planned), then conv_fwd_f32_nchw with XDNN_F32GEMM_OFF=1"
    timeout "${BENCH_S:-40}" "$dt" $dry --bench f32_nchw > "$out/bench.log" 2>&1; echo "rc=$?"
    XDNN_F32GEMM_OFF=1 timeout "${OFF_S:-15}" "$dt" $dry --bench "conv_fwd_f32_nchw " > "$out/bench_off.log" 2>&1
    echo "rc=$?"
    step "peer: bench/conv_peer.py f32"
    [ -n "$dry" ] || PYTHONUNBUFFERED=1 timeout "$(( $(left) - 5 ))" python3 "$dev/conv_peer.py" f32 > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log" 2>/dev/null
elif [ "$part" = final ]; then
    check_f32g
    step "the conv/ family"
    timeout "${SWEEP_S:-100}" "$dt" $dry conv/ > "$out/sweep.log" 2>&1; echo "rc=$? (124: cut short)"
    summary "$out/sweep.log"; echo "ran $(grep -cE '^(PASS|FAIL)' "$out/sweep.log") of $("$dt" --list conv/ | wc -l)"
    step "bench: --bench f32_nchw as planned, FLAT=0, FLAT=1; conv_direct's forwards"
    timeout "${BENCH_S:-30}" "$dt" $dry --bench f32_nchw > "$out/bench.log" 2>&1; echo "rc=$?"
    for v in 0 1; do # the A/B on the rows the flat form can take (x not read in place): fwd, dgrad, tf32 fwd
        for f in "conv_fwd_f32_nchw " conv_dgrad_f32_nchw conv_fwd_f32tf32_nchw_f32gemm; do
            XDNN_F32GEMM_FLAT=$v timeout 15 "$dt" $dry --bench "$f" >> "$out/bench_flat$v.log" 2>&1
        done
        echo "flat=$v: $(grep -c "^BENCH.* ok " "$out/bench_flat$v.log") rows"
    done
    XDNN_F32GEMM_OFF=1 timeout "${OFF_S:-15}" "$dt" $dry --bench "conv_fwd_f32_nchw " > "$out/bench_off.log" 2>&1
    echo "rc=$?"
    if [ -z "$dry" ]; then
        for f in ${NCU_F:-conv_fwd_f32_nchw_n32c64h56k64r3s1p1 conv_dgrad_f32_nchw_n32c64h56k64r3}; do
            step "ncu: the kernels of one iteration of $f"
            timeout 15 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 0 --launch-count 30 "$dt" --bench "${f//_n32/ n32}" \
                > "$out/ncu_$f.log" 2>&1; echo "rc=$?"
            grep -E "^  [a-zA-Z_].*\(|gpu__time_duration" "$out/ncu_$f.log" | tail -8 | cut -c1-110
        done
    fi
    step "peer: bench/conv_peer.py f32"
    [ -n "$dry" ] || PYTHONUNBUFFERED=1 timeout "$(( $(left) - 5 ))" python3 "$dev/conv_peer.py" f32 > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log" 2>/dev/null
else
    step "the conv/ family"
    timeout "$(( $(left) - 8 ))" "$dt" $dry conv/ > "$out/sweep.log" 2>&1; echo "rc=$? (124: cut short)"
    summary "$out/sweep.log"
fi

step "tables"
{
    echo "== correctness"
    for l in cases memcheck sweep; do [ -f "$out/$l.log" ] && echo "$l: $(summary "$out/$l.log" | tail -1)"; done
    [ -f "$out/memcheck.log" ] && grep -E "ERROR SUMMARY" "$out/memcheck.log" | tail -1
    if [ -f "$out/bench.log" ]; then
        echo "== bench (ms; xdnn as planned, flat=0/1: XDNN_F32GEMM_FLAT, direct = XDNN_F32GEMM_OFF=1, cuDNN = conv_peer.py f32; TF/s of xdnn)"
        touch "$out/peer.log"
        touch "$out/bench_flat0.log" "$out/bench_flat1.log"
        awk 'FILENAME ~ /peer.log$/ && /^PEER/ {p[$2" "$3] = $4; next}
             FILENAME ~ /bench_off.log$/ && /^BENCH/ && $6 == "ok" {off[$2" "$3] = $5; next}
             FILENAME ~ /bench_flat0.log$/ && /^BENCH/ && $6 == "ok" {f0[$2" "$3] = $5; next}
             FILENAME ~ /bench_flat1.log$/ && /^BENCH/ && $6 == "ok" {f1[$2" "$3] = $5; next}
             FILENAME ~ /bench.log$/ && /^BENCH/ {k = $2" "$3; ms[k] = $5; eng[k] = $4; ord[++n] = k
                                 for (i = 6; i <= NF; i++) if ($i == "TFLOP/s") tf[k] = $(i - 1)}
             END {printf "%-50s %-14s %8s %8s %8s %8s %8s %7s %7s %6s\n", "row", "engine", "xdnn", "flat=0",
                         "flat=1", "cuDNN", "direct", "x/cuDNN", "dir/x", "TF/s";
                  for (i = 1; i <= n; i++) {k = ord[i]; q = p[k]; pk = k; sub(/_(igemm|f32gemm) /, " ", pk)
                      if (q == "") q = p[pk]
                      printf "%-50s %-14s %8.4f %8.4f %8.4f %8.4f %8.4f %7.2f %7.2f %6s\n", k, eng[k], ms[k],
                             f0[k], f1[k], q, off[k], (q > 0 ? ms[k] / q : 0),
                             (ms[k] > 0 && off[k] > 0 ? off[k] / ms[k] : 0), tf[k]}}' \
            "$out/peer.log" "$out/bench_off.log" "$out/bench_flat0.log" "$out/bench_flat1.log" "$out/bench.log"
        grep -hE "^BENCH.*FAILED" "$out/bench.log" | cut -c1-200 | head -5
        grep -hE "^BENCH" "$out/bench.log" | head -3 | cut -c1-400
    fi
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$' -e '^device.txt$'))
step done
