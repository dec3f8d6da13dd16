#!/usr/bin/env bash
# d64w_session.sh DEV OUT — sdpa_flash_wgmma v13, the wide key tile at head dim 64 (issue 10, session 15), written
# without a GPU for the next device call (DEADLINE, default 150 s).  Run from the root of the tree as
# `bash DEV/d64w_session.sh DEV OUT` (DEV: tests/gpu/pack_dev.sh's folder plus dt/{difftest_seq,diffharness}.o
# compiled where the library was built, and this script with sdpa_fwd_turns.sh beside it).
# The change (kernels/sdpa_wgmma_sm90a.cu v13, kernels/wgmma_sm90a.cuh XW_SS192): where max(D, Dv) <= 64, v11's
# wide tile under the same conditions (no band or one open on one side, dense q and k/v, 16-bit o, no bias or
# dropout, not v10's packing): 192 keys a tile instead of 128 (S = Q K^T by wgmma m64n192k16, P V in 12 k-steps
# of m64n64k16; two Q buffers still fit, so v9's stream stays).  At DP 64 the per-tile costs that do not grow
# with the keys (row max shuffles, o rescale, the turn's barriers, the GEMMs' issue and wait) weigh twice as much
# per flop as at DP 128; 192 keys spread them over 1.5x the work.  ptxas: no consumer spill (0/0 with the producer
# compiled out, as the 128-key instance), no C7518/C7520.  XDNN_SDPA_WGMMA_WIDE=0 keeps 128 keys (the A/B); on
# by default.
# Steps:
#  1. correctness: the new k192- cases (D 64, 56, 48, 40, Dv != D, Skv 1 .. 4099, causal top-left and
#     bottom-right, seq lens, GQA 4 and 5, f16 / bf16, 16-bit and f32 o) with the default, then with
#     XDNN_SDPA_WGMMA_WIDE=0; the whole sdpa/sdpa_flash_wgmma/ forward family with the default;
#  2. memcheck --quick on the k192- cases;
#  3. bench, the default (v13) and XDNN_SDPA_WGMMA_WIDE=0 (128 keys) in turn per row:
#     bench/wgmma/sdpa_fwd_bf16{,_causal}/b16h16k16s1024d64, b4h16k16s4096d64, and b2h8k8s4096d40 (D 40: DP 64),
#     then the two b16h16s1024d64 rows again (the bench stops 14 s before the deadline).
# EXPECTED (before the call): every case passes both ways, memcheck clean.  b16h16s1024d64 0.2023 -> ~0.190 ms
# (-6 %; cuDNN 0.1894), causal 0.149 -> ~0.140 (cuDNN 0.125); b4h16s4096d64 and d40 -4..-7 % (no mask), causal
# -3..-6 % (the edge tiles are wider: up to 191 masked keys a row block instead of 127).  At S = 1024, 1024 / 192
# = 5.33 tiles: the last tile 1/3 full, 11 % of the keys computed past the end, which the estimate includes.
# If it wins (every d64 row <= 0.99x of WIDE=0): keep the default, record the rows in bench/RESULTS-sdpa.md.  If
# the causal rows lose while no mask wins: make the DP 64 wide tile no-band only (wide_tile<64>: !band); if
# both lose: set WIDE's default to keep 128 keys at DP 64 (launch_t) and record why.
# Run 1 (session 15, 463ed19, 192 keys at every length): k192- 37/37 both ways, the forward family 387 of 387 run
# (cut short at the deadline), memcheck 13 cases 0 errors; 192 / 128 keys: b4h16s4096d64 0.6445 / 0.6866 ms,
# causal 0.3617 / 0.3735, d40 0.1900 / 0.1907, but b16h16s1024d64 0.2104 / 0.2079 (0.2083 / 0.2067) and causal
# 0.1605 / 0.1512 (0.1573 / 0.1493).  Since: the 192-key tile from 2048 keys only (wide_tile, kWide64MinKeys),
# XDNN_SDPA_WGMMA_WIDE=3 takes it at every length (step 1 runs k192- that way and with the default).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
. "$(dirname "${BASH_SOURCE[0]}")/sdpa_fwd_turns.sh"
DEADLINE=${DEADLINE:-150}
budget() { echo $((DEADLINE - (SECONDS - t0))); } # tl: dev_env.sh
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
sweep() { # LOG SECONDS FILTER [ENV...]
    local log=$1 lim=$2 f=$3; shift 3
    env "$@" timeout "$(tl "$lim")" "$dt" "$f" > "$out/$log" 2>&1
    echo "$log: rc=$? (124: cut short)"
    grep -E "^FAIL" -A6 "$out/$log" | cut -c1-300 | head -24
    echo "$log: $(grep -cE '^PASS' "$out/$log") passed, $(grep -cE '^FAIL' "$out/$log") failed"
}
step "1. difftest_seq: k192- (default, then WIDE=0), the whole sdpa_flash_wgmma forward family (default)"
sweep k192.log 15 sdpa/sdpa_flash_wgmma/k192- XDNN_SDPA_WGMMA_WIDE=3
sweep k192_default.log 15 sdpa/sdpa_flash_wgmma/k192-
sweep k192_wide0.log 10 sdpa/sdpa_flash_wgmma/k192- XDNN_SDPA_WGMMA_WIDE=0
sweep fwd.log 30 sdpa/sdpa_flash_wgmma/
dev_memcheck "$dt" sdpa/sdpa_flash_wgmma/k192- "$(tl 15)"
# round 1 every row, round 2 the two issue rows (b16h16s1024d64), as the deadline allows
runs=""
for x in sdpa_fwd_bf16/b16h16k16s1024d64 sdpa_fwd_bf16_causal/b16h16k16s1024d64 sdpa_fwd_bf16/b4h16k16s4096d64 \
    sdpa_fwd_bf16_causal/b4h16k16s4096d64 sdpa_fwd_bf16/b2h8k8s4096d40 sdpa_fwd_bf16/b16h16k16s1024d64 \
    sdpa_fwd_bf16_causal/b16h16k16s1024d64; do
    runs+="-|bench/wgmma/$x|v13-192|10;XDNN_SDPA_WGMMA_WIDE=0|bench/wgmma/$x|128keys|10;"
done
sdpa_fwd_bench_turns "$runs"
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v '^logs.tgz$'))
