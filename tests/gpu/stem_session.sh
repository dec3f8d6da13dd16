#!/usr/bin/env bash
# stem_session.sh DEV OUT — the device call of conv_igemm_wgmma on padded
# copies (C % 8 != 0: the C = 3 ResNet stem, C = 5, C = 12, 1-D, NCHW;
# src/gpu/conv_pack.c).  DEV: what tests/gpu/pack_dev.sh packs (difftest_conv
# is linked from the tree's sources here by conv_session.sh).  Four runs of
# conv_session.sh, logs under OUT/<step>/:
#  1. new: the padded cases, ids holding "wgp" (forced; the N = 1, 2, 32
#     stems; the fused epilogues on the copies);
#  2. bench: the stem at N = 32 and 256 (f16, bf16; as the planner places it
#     and forced on conv_igemm's packed path) beside cuDNN (conv_peer.py set
#     stem): OUT/bench/table.txt, columns name shape engine ms peer_ms ratio;
#  3. regression: conv_igemm's packed cases (the packing code moved), the
#     other conv_igemm_wgmma cases and every fused epilogue;
#  4. compute-sanitizer memcheck on the --quick padded cases.
# Run from the tree's root (the device call's working directory):
#   tests/gpu/pack_dev.sh build-stem build-stem-dev      (here, before the call)
#   run: tests/gpu/stem_session.sh build-stem-dev $OUT    (carry build-stem-dev)
# NEW_S, REG_S, BENCH_S, PEER_S, SAN_S bound each step (the defaults fit 600 s).
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
s=tests/gpu/conv_session.sh
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }
step "new padded cases"
SKIP_BENCH=1 SKIP_SAN=1 SWEEP_S=${NEW_S:-200} SWEEP_FILTERS=wgp $s "$dev" "$out/new"
grep -E "^(PASS|FAIL)" "$out/new/difftest.log" | cut -c1-160
step "bench: the stem beside cuDNN"
SKIP_SWEEP=1 SKIP_SAN=1 BENCH_S=${BENCH_S:-60} PEER_S=${PEER_S:-80} BENCH_FILTERS=c3h224 PEER_SETS=stem \
    $s "$dev" "$out/bench"
step "regression: packed conv_igemm, conv_igemm_wgmma, the fused epilogues"
SKIP_BENCH=1 SKIP_SAN=1 SWEEP_S=${REG_S:-60} SWEEP_FILTERS="conv/fwd/packed wg- fwd+epi" $s "$dev" "$out/reg"
step "compute-sanitizer memcheck (--quick padded cases)"
SKIP_SWEEP=1 SKIP_BENCH=1 SAN_S=${SAN_S:-100} SAN_FILTERS=wgp $s "$dev" "$out/san"
step done
