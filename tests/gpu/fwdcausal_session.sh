#!/usr/bin/env bash
# fwdcausal_session.sh DEV OUT — one device call on sdpa_flash_wgmma's v8 (issue 10: a causal-like band on the
# persistent grid, its items drawn longest first from a counter; kernel header v8), sized for a 200-second call.
#  1. difftest_seq "sdpa" against the CPU reference (the regression of every sdpa engine and mask, and the
#     session-9 cases "sdpa/sdpa_flash_wgmma/...": more items than SMs on every one-sided band);
#  2. the lpt- cases again with XDNN_SDPA_WGMMA_CAUSAL=1 (the section order with one block per item) and with
#     XDNN_SDPA_WGMMA_QBUF=1 (one Q buffer);
#  3. compute-sanitizer memcheck on the --quick lpt- and plain wgmma forward cases (small shapes only);
#  4. the forward bench on sdpa_flash_wgmma (bench/sdpa_peer.py's shapes and the Llama block's b2h32k8), causal as
#     v8 (two Q buffers), QBUF=1, CAUSAL=1 and CAUSAL=0 (v7) (A/B in one call), non-causal with two and one Q buffer;
#  5. PyTorch's flash and cuDNN on the same shapes, forward only (DEV/py/sdpa_peer.py);
#  6. NCU=1: ncu on one launch of the causal b4h16s4096d128 forward (a few sections), if time is left.
# Logs in OUT/logs.tgz; a summary on stdout.  SKIP_SWEEP, SKIP_SAN, SKIP_PEER leave one out.
# Packing DEV (from the worktree, tree at the commit to test), then the call
# `bash build-fwdcausal-dev/fwdcausal_session.sh build-fwdcausal-dev $OUT` carrying build-fwdcausal-dev:
#   tests/gpu/pack_dev.sh build-fwdcausal /work/main/build-fwdcausal-dev
#   mkdir -p DEV/dt DEV/py && for f in difftest_seq diffharness; do gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra \
#     -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp bench/sdpa_peer.py DEV/py/; cp tests/gpu/fwdcausal_session.sh tests/gpu/dev_env.sh DEV/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
budget() { echo $(( ${BUDGET_S:-190} - (SECONDS - t0) )); }
sweep() { # LOG SECONDS FILTER
    timeout "$2" "$dt" "$3" > "$out/$1" 2>&1
    echo "$1: rc=$? (124: cut short)"
    grep -E "^FAIL" -A6 "$out/$1" | cut -c1-300 | head -24
    echo "$1: $(grep -E '^PASS' "$out/$1" | grep -c 'sdpa_flash_wgmma/') wgmma forward passed; $(grep -E 'passed,' "$out/$1")"
}
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "difftest_seq sdpa (full sweep)"
    sweep sdpa.log "${SWEEP_S:-60}" sdpa
    for e in XDNN_SDPA_WGMMA_CAUSAL=1 XDNN_SDPA_WGMMA_QBUF=1; do
        step "the wgmma lpt- cases with $e"
        env $e timeout 15 "$dt" sdpa/sdpa_flash_wgmma/lpt- > "$out/sdpa_$e.log" 2>&1
        echo "$e: rc=$?; $(grep -E 'passed,' "$out/sdpa_$e.log")"; grep -E "^FAIL" "$out/sdpa_$e.log" | cut -c1-200 | head -5
    done
fi
if [ -z "${SKIP_SAN:-}" ]; then
    for f in lpt- plain; do
        step "memcheck --quick sdpa/sdpa_flash_wgmma/$f"
        timeout "${SAN_S:-25}" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$dt" --quick \
            sdpa/sdpa_flash_wgmma/$f > "$out/memcheck_$f.log" 2>&1
        echo "memcheck rc=$? (124: cut short, the cases listed ran)"
        grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck_$f.log" | head -6
    done
fi
step "forward bench (xdnn): causal v8, v7's order, v7; non-causal"
: > "$out/bench.log"
shapes="b4h16k16s4096d128 b16h16k16s1024d64 b1h32k32s16384d128 b2h32k8s4096d128 b1h32k8s4096d128"
bench() { # TAG FILTER [ENV...]
    local tag=$1 f=$2; shift 2
    echo "== $tag $f" >> "$out/bench.log"
    env "$@" DIFFTEST_ITERS=${ITERS:-10} timeout 20 "$dt" --bench "$f" >> "$out/bench.log" 2>&1 || echo "bench $tag $f rc=$?"
}
for e in XDNN_SDPA_WGMMA_CAUSAL=2 XDNN_SDPA_WGMMA_QBUF=1 XDNN_SDPA_WGMMA_CAUSAL=1 XDNN_SDPA_WGMMA_CAUSAL=0; do
    for sh in $shapes; do bench "${e#XDNN_SDPA_WGMMA_}" "bench/wgmma/sdpa_fwd_bf16_causal/$sh" $e; done
done
for e in XDNN_SDPA_WGMMA_QBUF=2 XDNN_SDPA_WGMMA_QBUF=1; do
    for sh in b4h16k16s4096d128 b16h16k16s1024d64 b1h32k8s4096d128; do bench "nc-${e#XDNN_SDPA_WGMMA_}" "bench/wgmma/sdpa_fwd_bf16/$sh" $e; done
done
awk '/^==/ {h = $2 " " $3} /^FAIL/ {print "FAIL", h} /TIME/ {print h, $4, $5, $6, $7, $8, $9, $10}' "$out/bench.log" |
    sed 's|bench/wgmma/sdpa_fwd_bf16||' 
if [ -z "${SKIP_PEER:-}" ] && [ "$(budget)" -gt 35 ]; then
    step "PyTorch flash and cuDNN, forward"
    PYTHONUNBUFFERED=1 SDPA_PEER_FWD_ONLY=1 \
        SDPA_PEER_SHAPES=b4h16k16s4096d128,b16h16k16s1024d64,b1h32k32s16384d128,b2h32k8s4096d128,b1h32k8s4096d128 \
        timeout $(( $(budget) - 8 )) python3 "$dev/py/sdpa_peer.py" > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep -v Warning "$out/peer.log" | grep -E '"sdpa_fwd|torch' | sed 's/"peer": //' | cut -c1-140
fi
if [ -n "${NCU:-}" ] && [ "$(budget)" -gt 25 ]; then
    step "ncu, one launch of the causal forward (b4h16s4096d128)"
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    DIFFTEST_ITERS=1 timeout $(( $(budget) - 3 )) $ncu --section SpeedOfLight --section LaunchStats \
        --metrics sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed \
        -k regex:sdpa_fwd_wgmma -c 1 "$dt" --bench bench/wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d128 > "$out/ncu.log" 2>&1
    echo "ncu rc=$?"; grep -E "sm__|Duration|Throughput|Grid Size|Registers" "$out/ncu.log" | head -14
fi
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v '^logs.tgz$'))
