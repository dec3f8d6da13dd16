#!/usr/bin/env bash
# conv1x1_session.sh DEV OUT — device calls of conv_im2col_gemm's 1x1 forward conv and conv_dgrad (issues 11
# and 12): y [M, K] = X [M, C] . W^T and dx [M, C] = dy [M, K] . W as one cuBLASLt GEMM each (x read in place
# at stride 1, subsampled at stride 2; src/gpu/eng_conv_im2col.c), sized for a 240-second call that builds
# nothing.  DEV as tests/gpu/wgrad1x1_session.sh packs it (pack_dev.sh + dt/difftest_conv.o, dt/diffharness.o),
# plus conv_peer.py and conv1x1_table.py (bench/).
# PART=layers (the first call):
#  1. correctness: difftest_conv fd1x1 (the new forced cases and refusals), w1x1 and im2c (the engine's other
#     paths, which share the analysis);
#  2. the ResNet-50 1x1 fwd / dgrad shapes at N = 256, bf16 NHWC (difftest_conv --bench conv1x1_): as planned,
#     forced on conv_im2col_gemm, and the 56x56 stride-1 ones forced on conv_igemm and conv_igemm_wgmma;
#  3. the peer: cuDNN and torch.mm on the same shapes (bench/conv_peer.py fd1x1);
#  4. compute-sanitizer memcheck on the --quick fd1x1 cases (small shapes only).
# PART=step (the second call): the sweep again (fd1x1 w1x1 im2c), three bench rows as planned (the stride-2
# forwards, unmeasured on the GEMM in the first call), then the ResNet-50 training step at N = 256 (xdnn run --format json --iters 10) with the 1x1
# fwd/dgrad path and without it (XDNN_IM2COL_NO_1X1_FD=1: the cost models' 1x1 floor stays, so "off" is
# those layers on conv_igemm / conv_igemm_wgmma as main plans them).
# A table last (summary.txt); logs in OUT/logs.tgz.  BUDGET_S: the whole call's seconds (default 225).
#
# EXPECTED (written before the first run).  Floors at 2976 GB/s; model max(bytes / 2.6 TB/s, FLOPs / 400) + 6 us.
#   fwd 64->64 at 56x56 (206 MB): conv_igemm 0.157 ms -> ~0.08 ms; 64->256 (514 MB): 0.48 -> ~0.19-0.20 ms;
#   dgrad 256<-64 (514 MB): 0.50 -> ~0.20 ms; dgrad 64<-64 (dpool/d0): 0.164 -> ~0.08 ms.
#   The 8 partitions: 3.25 ms -> ~1.4 ms (-1.8 ms on the step).  cuDNN on these: unknown (the brief measured
#   none); torch.mm is the GEMM's own floor, the _im2col rows should be within ~5% of it at stride 1.
#   The wgmma rows (174.8 us modelled) are expected no better than conv_igemm's (one 64-deep slice per tile).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
dt=$dev/difftest_conv
left() { echo $(( ${BUDGET_S:-225} - (SECONDS - t0) )); }
part=${PART:-layers}

step "difftest_conv fd1x1, w1x1, im2c"
: > "$out/sweep.log"
for f in fd1x1 w1x1 im2c; do
    timeout "${SWEEP_S:-40}" "$dt" "$f" >> "$out/sweep.log" 2>&1; echo "$f rc=$?"
done
grep -E "^FAIL" "$out/sweep.log" | cut -c1-300 | head -12; grep -E "passed," "$out/sweep.log"

if [ "$part" = layers ]; then
    dev_bench_peer "$dt" conv1x1_ fd1x1 "$(( $(left) - 110 ))" 65 # the peer: what the bench leaves, less 45 s
    if [ "$(left)" -gt 25 ]; then
        step "memcheck --quick fd1x1"
        timeout "$(( $(left) - 8 ))" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" \
            --quick fd1x1 > "$out/memcheck.log" 2>&1
        echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    fi
else
    step "bench: the stride-2 forwards, as planned"
    : > "$out/bench.log"
    for f in fwd_bf16_nhwc\ n256c256h56k512s2 fwd_bf16_nhwc\ n256c512h28k1024s2 fwd_bf16_nhwc\ n256c1024h14k2048s2; do
        timeout 25 "$dt" --bench "conv1x1_$f" >> "$out/bench.log" 2>&1
    done
    grep "^BENCH" "$out/bench.log" | cut -c1-260
    gcc -o "$dev/xdnn" "$dev"/cli/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L/usr/local/cuda/lib64 \
        -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link_cli.log" 2>&1 || echo "CLI link failed"
    for ab in on off; do
        # the first run compiles the generated kernels into XDNN_CACHE_DIR; the second finds them there
        lim=$(( $(left) - 10 )); [ "$ab" = off ] || lim=$(( lim - 50 ))
        [ "$lim" -gt 20 ] || { echo "out of time"; break; }
        off=0; [ "$ab" = on ] || off=1
        dev_step "$ab" "$lim" XDNN_IM2COL_NO_1X1_FD=$off
    done
fi
dev_tables "$dev/conv1x1_table.py"
