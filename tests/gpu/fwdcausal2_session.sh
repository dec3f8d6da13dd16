#!/usr/bin/env bash
# fwdcausal2_session.sh DEV OUT — one device call on sdpa_flash_wgmma's v9 (issue 10, session 10: the next work
# item's first Q K^T issued beside the last P V of the one before, XDNN_SDPA_WGMMA_CHAIN; kernel header v9),
# sized for a 200-second call.
#  1. difftest_seq "sdpa" against the CPU reference (every sdpa engine and mask, with the chain- cases last);
#  2. the wgmma forward cases again with XDNN_SDPA_WGMMA_CHAIN=0 (v8's path);
#  3. compute-sanitizer memcheck on the --quick chain- and plain wgmma forward cases (small shapes only);
#  4. the forward bench, v9 and CHAIN=0 taking turns per shape, causal and not: b4h16s4096d128, b16h16s1024d64,
#     b1h32s16384d128, the Llama block's b2h32k8s4096d128;
#  5. PyTorch's flash and cuDNN on the same shapes, forward only (DEV/py/sdpa_peer.py);
#  6. ncu on one launch of the non-causal and the causal b4h16s4096d128 forward, v9 and CHAIN=0 (NCU=0: none).
# Logs in OUT/logs.tgz; a summary on stdout.  SKIP_SWEEP, SKIP_SAN, SKIP_PEER, SKIP_CHAIN0 leave one out;
# SWEEP_FILTER narrows step 1 (a second call: sdpa/sdpa_flash_wgmma/).
# Packing DEV (from the worktree, tree at the commit to test), then the call
# `bash build-fwdcausal2-dev/fwdcausal2_session.sh build-fwdcausal2-dev $OUT` carrying build-fwdcausal2-dev:
#   tests/gpu/pack_dev.sh build-fwdcausal2 /work/main/build-fwdcausal2-dev
#   mkdir -p DEV/dt DEV/py && for f in difftest_seq diffharness; do gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra \
#     -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp bench/sdpa_peer.py DEV/py/; cp tests/gpu/fwdcausal2_session.sh tests/gpu/dev_env.sh DEV/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
budget() { echo $(( ${BUDGET_S:-190} - (SECONDS - t0) )); }
sweep() { # LOG SECONDS FILTER [ENV...]
    local log=$1 lim=$2 f=$3; shift 3
    env "$@" timeout "$lim" "$dt" "$f" > "$out/$log" 2>&1
    echo "$log: rc=$? (124: cut short)"
    grep -E "^FAIL" -A6 "$out/$log" | cut -c1-300 | head -24
    echo "$log: $(grep -E '^PASS' "$out/$log" | grep -c 'sdpa_flash_wgmma/') wgmma forward passed; $(grep -E 'passed,' "$out/$log")"
}
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "difftest_seq ${SWEEP_FILTER:-sdpa}"
    sweep sdpa.log "${SWEEP_S:-70}" "${SWEEP_FILTER:-sdpa}"
    if [ -z "${SKIP_CHAIN0:-}" ]; then
        step "the wgmma forward cases with XDNN_SDPA_WGMMA_CHAIN=0"
        sweep sdpa_chain0.log 25 sdpa/sdpa_flash_wgmma/ XDNN_SDPA_WGMMA_CHAIN=0
    fi
fi
if [ -z "${SKIP_SAN:-}" ]; then
    for f in chain- plain; do dev_memcheck "$dt" sdpa/sdpa_flash_wgmma/$f "${SAN_S:-20}"; done
fi
step "forward bench (xdnn): v9 and CHAIN=0 in turn"
: > "$out/bench.log"
bench() { # TAG FILTER [ENV...]
    local tag=$1 f=$2; shift 2
    echo "== $tag $f" >> "$out/bench.log"
    env "$@" DIFFTEST_ITERS=${ITERS:-10} timeout 20 "$dt" --bench "$f" >> "$out/bench.log" 2>&1 || echo "bench $tag $f rc=$?"
}
for sh in b4h16k16s4096d128 b16h16k16s1024d64 b1h32k32s16384d128 b2h32k8s4096d128; do
    for m in _causal ""; do
        for e in XDNN_SDPA_WGMMA_CHAIN=1 XDNN_SDPA_WGMMA_CHAIN=0; do
            bench "${e#XDNN_SDPA_WGMMA_}" "bench/wgmma/sdpa_fwd_bf16$m/$sh" $e
        done
    done
done
awk '/^==/ {h = $2 " " $3} /^FAIL/ {print "FAIL", h} /TIME/ {print h, $4, $5, $6, $7, $8, $9, $10}' "$out/bench.log" |
    sed 's|bench/wgmma/sdpa_fwd_bf16||'
if [ -z "${SKIP_PEER:-}" ] && [ "$(budget)" -gt 30 ]; then
    step "PyTorch flash and cuDNN, forward"
    PYTHONUNBUFFERED=1 SDPA_PEER_FWD_ONLY=1 \
        SDPA_PEER_SHAPES=b4h16k16s4096d128,b16h16k16s1024d64,b1h32k32s16384d128,b2h32k8s4096d128 \
        timeout $(( $(budget) - 8 )) python3 "$dev/py/sdpa_peer.py" > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep -v Warning "$out/peer.log" | grep -E '"sdpa_fwd|torch' | sed 's/"peer": //' | cut -c1-140
fi
if [ "${NCU:-1}" != 0 ]; then
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for m in "" _causal; do
        for e in XDNN_SDPA_WGMMA_CHAIN=1 XDNN_SDPA_WGMMA_CHAIN=0; do
            [ "$(budget)" -gt 12 ] || break
            step "ncu, one launch of the forward$m b4h16s4096d128, $e"
            log="ncu${m}_${e#XDNN_SDPA_WGMMA_}.log"
            env $e DIFFTEST_ITERS=1 timeout $(( $(budget) - 3 )) $ncu --section SpeedOfLight --section LaunchStats \
                --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
                --metrics sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed \
                -k regex:sdpa_fwd_wgmma -c 1 "$dt" --bench "bench/wgmma/sdpa_fwd_bf16$m/b4h16k16s4096d128" > "$out/$log" 2>&1
            echo "ncu rc=$?"; grep -E "sm__|Duration|Registers Per|Stall|Issued Warp|No Eligible" "$out/$log" | head -12
        done
    done
fi
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v '^logs.tgz$'))
