#!/usr/bin/env bash
# pingpong_session.sh DEV OUT — the device calls of conv_igemm_wgmma's ping-pong consumers (issue 11, session 12;
# kernels/conv_igemm_wgmma_sm90a.cu's kcw_consume_pingpong, XDNN_CONV_WGMMA_PINGPONG=0/1; mode 2 was removed after call 1).  Run from the root of
# the lead's tree as `bash DEV/pingpong_session.sh DEV OUT`.  DEV: tests/gpu/pack_dev.sh's folder plus dt/
# (difftest_conv.o, diffharness.o compiled in the branch's worktree), conv_peer.py (bench/), pingpong_tables.py
# and this script; the lead tree's tests/gpu/dev_env.sh is sourced by its relative path.
# PART=check (call 1, 240 s): the new wgpp cases, compute-sanitizer memcheck --quick wgpp; the step's rows
#   (difftest_conv --bench conv_step_{fwd,dgmask}_bf16_nhwc n256: the forwards, the 64-, 128- and 256-channel
#   masked dgrads) with PINGPONG=1, 0 and 2 in one call, the 64@56 forward twice each way (the spread), cuDNN
#   (bench/conv_peer.py step256); then the conv/ family (ping-pong by default: every 64-wide conv_igemm_wgmma
#   case runs it) in what is left.
# PART=final (call 2, 200 s; mode 2 removed after call 1): the wgpp cases; the A/B of the 64-channel rows (N = 256
#   step rows, the N = 32 f16 fwd / dgrad / fused-epilogue rows), cuDNN; ncu on one ping-pong launch of the 64@56
#   forward; the ResNet-50 N = 256 step with the switch on and off; the conv/ family in what is left.
# BUDGET_S: the seconds the script plans for (default 225 for check, 185 for final).  DRY=1: the script's own
# check without a GPU (--dry: CPU reference and plans only; no memcheck, peer or step).
#
# EXPECTED (written before the first call).  Session 11 put the 64@56 forward (BN 64, 9 slices a tile, 47.5 tiles
# an SM at N = 256) at ~0.43 us a slice + 2.5-5 us a tile, the tile's end being where both consumers drain and
# store while the filled ring waits.  If that holds, the ping-pong hides the end behind the other warpgroup's
# mainloop: 64@56 fwd 0.274-0.307 -> ~0.19-0.21 ms (1.1-1.2x cuDNN's 0.174-0.181), the masked 3x3 dgrad 64@56
# 0.31 -> ~0.23-0.25, the masked 1x1 64@56 dgrad (4 slices a tile: the end is a larger share) 0.25 -> ~0.17-0.20.
# If instead the producer's slice rate sets the time (two producer changes, resident weights and row tiles,
# left it unmoved), 1.00-1.05x.  Mode 2 (the 64-wide ping-pong tile on the 128- / 256-channel layers): A is
# loaded once per 64 columns (2-4x the x traffic of the 128-wide tile) for the same overlap: expected 0.9-1.05x
# on 128@28 and a loss on 256@14 / 512@7.
# OUTCOME, call 1 (4b8cac0, 110 s): wgpp 35/35, memcheck --quick wgpp 18 cases 0 errors, the conv/ family
# 1146/1146 (ping-pong by default).  64@56 fwd 0.2757 / 0.2790 -> 0.2341 / 0.2338 / 0.2345 ms (1.18x; cuDNN
# 0.1663: 1.66x -> 1.41x), masked 3x3 dgrad 64@56 0.3142 -> 0.2742 (1.15x; 0.99x cuDNN's dgrad + threshold), masked
# 1x1 64@56 0.2590 -> 0.2541 (1.02x): between the two predictions, nearer the first on the 3x3 layers.  Mode 2
# lost on every row it took (0.66-0.91x: 128@28 fwd 0.1524 -> 0.1677, 256@14 0.1217 -> 0.1701): removed.
# OUTCOME, call 2 (d064dd5, 120 s): wgpp 32/32, conv/ 1143/1143.  64@56 fwd 0.2745 -> 0.2324 / 0.2361 (1.18x;
# cuDNN 0.1734: 1.34x), masked dgrads 0.3166 -> 0.2738 (1.16x) and 0.2595 -> 0.2531 (1.03x); N = 32 f16 fwd and
# dgrad 1.00x, but N = 32 conv + bias + relu 0.0813 -> 0.0937 (0.87x), + residual 0.89x: after the call the engine
# keeps fused epilogues (but the dgrad's relu_bwd mask) on the cooperative store.  ResNet-50 N = 256 step 44.08 ->
# 43.78 ms (the ping-pong partitions -0.26 ms; the step's noise +-0.1 ms a partition).  ncu (one ping-pong launch,
# 284 us at its clocks; session 11's cooperative one 344): 1.39 GB L2 -> SM at 4.88 TB/s, L2 34%, SM 36%.
set -uo pipefail
. tests/gpu/dev_env.sh "$1" "$2"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
dry=${DRY:+--dry}
part=${PART:-check}
left() { echo $(( ${BUDGET_S:-$([ "$part" = check ] && echo 225 || echo 185)} - (SECONDS - t0) )); }
summary() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
F64="conv_step_fwd_bf16_nhwc n256c64h56"
FWD="conv_step_fwd_bf16_nhwc n256"
DGM64="conv_step_dgmask_bf16_nhwc n256c64h56" # the 3x3 and the 1x1 (dy 256) masked dgrads of dx C = 64
DGM28="conv_step_dgmask_bf16_nhwc n256c128h28"
DGM14="conv_step_dgmask_bf16_nhwc n256c256h14"
N32F="conv_fwd_f16_nhwc n32c64h56k64r3" # the N = 32 f16 rows of the 64-channel layer: fwd, dgrad, fused epilogues
N32D="conv_dgrad_f16_nhwc n32c64h56k64r3"
N32E="convepi_f16_nhwc n32c64h56k64r3"
P="XDNN_CONV_WGMMA_PINGPONG"

bench_ab() { # the A/B rows (dev_bench_runs: "ENV|FILTER|TAG|SECONDS" runs); $1: the runs
    step "bench A/B"
    [ -n "$dry" ] && return 0
    ITERS=10 dev_bench_runs "$dt" "$1"
}
peer() {
    step "peer: bench/conv_peer.py step256"
    [ -n "$dry" ] && return 0
    PYTHONUNBUFFERED=1 timeout "$1" python3 "$dev/conv_peer.py" step256 > "$out/peer.log" 2>&1
    echo "rc=$? $(grep -c '^PEER' "$out/peer.log") rows"
}

if [ "$part" = check ]; then
    step "correctness: wgpp (the new cases)"
    timeout 30 "$dt" $dry wgpp > "$out/sweep_wgpp.log" 2>&1; echo "rc=$?"; summary "$out/sweep_wgpp.log"
    if [ -z "$dry" ]; then
        step "memcheck --quick wgpp"
        timeout 30 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" --quick wgpp \
            > "$out/memcheck_wgpp.log" 2>&1
        echo "rc=$?"; grep -E "ERROR SUMMARY|^FAIL|Invalid" "$out/memcheck_wgpp.log" | head -6
    fi
    r="$P=1|$FWD|pp1|30;$P=0|$F64|pp0|12;$P=1|$DGM64|pp1|15;$P=0|$DGM64|pp0|15;$P=2|$FWD|pp2|30"
    r+=";$P=1|$DGM28|pp1|15;$P=2|$DGM28|pp2|15;$P=1|$DGM14|pp1|15;$P=2|$DGM14|pp2|15"
    bench_ab "$r;$P=0|$F64|pp0|12;$P=1|$F64|pp1|12"
    peer 45
    step "the conv/ family (ping-pong by default) in what is left"
    timeout "$(( $(left) > 12 ? $(left) - 4 : 8 ))" "$dt" $dry conv/ > "$out/sweep_conv.log" 2>&1
    echo "rc=$? (124: cut short)"; summary "$out/sweep_conv.log"
else
    step "correctness: wgpp (the new cases)"
    timeout 30 "$dt" $dry wgpp > "$out/sweep_wgpp.log" 2>&1; echo "rc=$?"; summary "$out/sweep_wgpp.log"
    r="$P=1|$FWD|pp1|30;$P=0|$F64|pp0|12;$P=1|$DGM64|pp1|15;$P=0|$DGM64|pp0|15"
    r+=";$P=1|$N32F|pp1|10;$P=0|$N32F|pp0|10;$P=1|$N32D|pp1|10;$P=0|$N32D|pp0|10;$P=1|$N32E|pp1|12"
    r+=";$P=0|$N32E|pp0|12;$P=0|$F64|pp0|12;$P=1|$F64|pp1|12"
    bench_ab "$r"
    peer 45
    if [ -z "$dry" ]; then
        step "ncu: one ping-pong launch of $F64"
        timeout 30 ncu --launch-skip 3 --launch-count 1 -k regex:kcw_fwd --section SpeedOfLight \
            --section WarpStateStats --metrics lts__t_bytes.sum.per_second,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_xbar2l1tex_read_bytes.sum.per_second,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
            "$dt" --bench "$F64" > "$out/ncu.log" 2>&1
        echo "rc=$?"; grep -E "Duration|Throughput|Issued|Cycles Per|xbar2l1tex|lts__|gmma" "$out/ncu.log" | head -14
        dev_link_cli || true
        dev_step pp1 40 "$P=1" -- --iters 5 --warmup 2
        dev_step pp0 40 "$P=0" -- --iters 5 --warmup 2
    fi
    step "the conv/ family (ping-pong by default) in what is left"
    timeout "$(( $(left) > 12 ? $(left) - 4 : 8 ))" "$dt" $dry conv/ > "$out/sweep_conv.log" 2>&1
    echo "rc=$? (124: cut short)"; summary "$out/sweep_conv.log"
fi
dev_tables "$dev/pingpong_tables.py"
