#!/usr/bin/env bash
# ragged_session.sh DEV OUT — the device call of ragged (THD-packed)
# attention on the Hopper engines (issue 14: sdpa_flash_wgmma forward,
# sdpa_bwd_wgmma backward with seq_offsets_q/kv), sized for one 240-second
# call.  DEV is what tests/gpu/pack_dev.sh packs plus dt/difftest_seq.o and
# dt/diffharness.o compiled where the library was built, and py/ the peer
# (bench/sdpa_ragged_peer.py with bench/peer.py): the tester is linked here
# from objects only, so the call builds nothing and does not depend on the
# headers of the tree it runs in.
#  1. difftest_seq "sdpa": every sdpa case, the new wgmma ragged ones among
#     them (odd lengths 0, 1, primes, 127/129/383, GQA/MQA, both causal
#     alignments, windows, D 64/128, q or k/v alone packed), against the CPU
#     reference: the regression of everything that shares the kernels;
#  2. the wgmma ragged cases again with XDNN_SDPA_BWD_DETERMINISTIC=1 (dQ
#     tiles added in key-block order: the semaphores count a sequence's own
#     key blocks) and with XDNN_SDPA_WGMMA_PERSISTENT=0 (one block per item);
#  3. the ragged training-step bench (difftest_seq --bench bench/ragged):
#     packed vs padded on both engine pairs, then the PyTorch peer
#     (FlashAttention-2 varlen, jagged SDPA, dense cuDNN) in the same call;
#  4. compute-sanitizer memcheck on the --quick wgmma ragged cases (TMA rows
#     of the next sequence, stores bounded by each sequence's end);
#  5. (DENSE=1) the dense kernels' speed: bench/wgmma b4h16s4096 D 128 and 64,
#     plain and causal, forward and backward, with bench/sdpa_peer.py's flash
#     and cuDNN on those shapes in the same call.
# Logs under OUT; a summary on stdout.  SKIP_SWEEP, SKIP_DET, SKIP_BENCH,
# SKIP_PEER, SKIP_SAN leave one out; SWEEP_S, DET_S, BENCH_S, PEER_S, SAN_S,
# DENSE_S are their time limits.
# Packing DEV (on the build machine, tree at the commit to test):
#   tests/gpu/pack_dev.sh build-ragwg /work/main/build-ragwg-dev
#   mkdir -p DEV/dt DEV/py && for f in difftest_seq diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/dt/$f.o; done
#   cp tests/gpu/dev_env.sh tests/gpu/ragged_session.sh DEV/
#   cp bench/sdpa_ragged_peer.py bench/peer.py bench/sdpa_peer.py DEV/py/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "sdpa sweep (the ragged cases among them)"
    timeout "${SWEEP_S:-75}" "$dt" sdpa > "$out/sdpa.log" 2>&1
    echo "difftest sdpa rc=$? (124: cut short by SWEEP_S; the cases listed ran)"
    grep -E "^FAIL" -A12 "$out/sdpa.log" | cut -c1-400 | head -50
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/sdpa.log") of $("$dt" --list sdpa | wc -l) sdpa cases;" \
        "ragged: $(grep -E '^PASS' "$out/sdpa.log" | grep -c /ragged/) passed," \
        "$(grep -E '^FAIL' "$out/sdpa.log" | grep -c /ragged/) failed"
    grep -E "passed," "$out/sdpa.log"
fi
if [ -z "${SKIP_DET:-}" ]; then
    step "wgmma ragged: deterministic dQ, then one block per forward item"
    XDNN_SDPA_BWD_DETERMINISTIC=1 timeout "${DET_S:-20}" "$dt" wgmma+sdpa_bwd_wgmma/ragged > "$out/det.log" 2>&1
    echo "deterministic rc=$?"; grep -E "^FAIL|passed," "$out/det.log" | cut -c1-300
    XDNN_SDPA_WGMMA_PERSISTENT=0 timeout "${DET_S:-20}" "$dt" wgmma/ragged > "$out/det2.log" 2>&1
    echo "non-persistent rc=$?"; grep -E "^FAIL|passed," "$out/det2.log" | cut -c1-300
    cat "$out/det2.log" >> "$out/det.log" && rm -f "$out/det2.log"
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    step "ragged training-step bench"
    DIFFTEST_ITERS=${ITERS:-20} timeout "${BENCH_S:-35}" "$dt" --bench bench/ragged > "$out/bench.log" 2>&1
    echo "bench rc=$?"
    grep -E "^(PASS|FAIL)|TIME" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-200
fi
if [ -z "${SKIP_PEER:-}" ]; then
    step "PyTorch peer"
    (cd "$dev/py" && timeout "${PEER_S:-45}" python3 sdpa_ragged_peer.py) > "$out/peer.log" 2>&1
    echo "peer rc=$?"; cut -c1-200 "$out/peer.log" | tail -12
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "compute-sanitizer memcheck (--quick wgmma ragged)"
    timeout "${SAN_S:-50}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick wgmma/ragged \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
fi
if [ -n "${DENSE:-}" ]; then
    step "dense wgmma bench and peer"
    for f in sdpa_fwd_bf16/b4h16k16s4096d128 sdpa_fwd_bf16_causal/b4h16k16s4096d128 sdpa_bwd_bf16/b4h16k16s4096d128 \
        sdpa_bwd_bf16_causal/b4h16k16s4096d128 sdpa_fwd_bf16/b4h16k16s4096d64 sdpa_bwd_bf16_causal/b4h16k16s4096d64; do
        DIFFTEST_ITERS=${ITERS:-20} timeout 30 "$dt" --bench "bench/wgmma/$f" >> "$out/dense.log" 2>&1
    done
    grep -E "^(PASS|FAIL)|TIME" "$out/dense.log" | sed 's/engines=.*//' | cut -c1-160
    (cd "$dev/py" && SDPA_PEER_SHAPES=b4h16k16s4096d128,b4h16k16s4096d64 timeout "${DENSE_S:-60}" python3 sdpa_peer.py) \
        >> "$out/dense.log" 2>&1
    echo "dense peer rc=$?"; grep '"ms"' "$out/dense.log" | cut -c1-160
fi
step done
