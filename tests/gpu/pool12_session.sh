#!/usr/bin/env bash
# pool12_session.sh DEV OUT — session 12 (pool, issue 12 item 1): the consolidated table of the memory-bound
# engines at >= 64 MB and the A/B of two new paths, run from the lead tree's root as
# `bash DEV/pool12_session.sh DEV OUT` (DEV: tests/gpu/pack_dev.sh's folder, dt/{difftest_norm,difftest_conv,
# difftest_quant,diffharness}.o compiled where the library was built, mem_peer.py and pool12_tables.py copied in).
#  PART=1 (first call): the new difftest cases (s12-: pooling v3 and the tiled transposes) against the CPU
#    reference, memcheck on them; xdnn `--bench` of every row (difftest_norm bench/s12/, the s10 layernorm /
#    rmsnorm, rn50 batchnorm and stem maxpool_bwd rows, difftest_quant's quantize / dequantize); the A/B of the
#    new paths (XDNN_POOL_ROLL=0, XDNN_COPY_TILED=0: the old ones); bench/mem_peer.py (PyTorch eager, a copy_ of
#    the same bytes, torch.compile while COMPILE_S lasts); the table (pool12_tables.py).
#  PART=2 (second call): the families touched, in full (difftest_norm vec/ copy/ view/ s12-, difftest_conv
#    pool/, difftest_quant, difftest --quick), memcheck; the bench and A/B again; torch.compile of the rows PART=1 left
#    (COMPILE_START).
# New paths: kernels/pool.cu v3 (kpool_roll3x3s2: a thread walks 4 output rows of a 3x3 stride-2 pooling,
# each input row reduced once and the shared row carried; the backward's winners from the same walk);
# kernels/copy.cu k_transpose (a 128-byte shared-memory tile for copies whose output-contiguous dim is strided
# in the input).
# After the first call (00:40): the forward's walk 1.37x (60 % of copy: 64 registers, 4 blocks per SM), the
# walk's winners lost (92 registers: 0.167 against 0.136 ms), the transposes 2.9-3.4x (bf16 51 %, f32 80 %).
# Second call: the 16-bit max forward on packed pairs (48 registers, 5 blocks), the walk's winners with packed
# tap bits behind XDNN_POOL_ROLL_WINNERS=1 (v2's winners by default), the avgpool backward enumerating its 2 x 2
# windows, 2-byte transposes in pairs (XDNN_COPY_TILED_PAIRS=0: one by one), 2 rows per thread of the walk
# (XDNN_POOL_ROLL_ROWS=2: more waves).  EXPECTED: maxpool fwd 60 -> ~70 %,
# avgpool bwd 35 -> ~50 %, bf16 transposes 51 -> ~65-75 %, the walk's winners within +-10 % of v2's.
# After the second call (01:00): all passed; max forward 0.0556 ms with 4 rows, 0.0503 with 2 (86 % of copy), so
# 2 rows became the default after it (XDNN_POOL_ROLL_ROWS=4: the other; the script now A/Bs that); avgpool bwd
# 1.49x; bf16 transposes in pairs 1.34x (68 %); the walk's winners still 5 % slower (off).
# EXPECTED (written before the first call): maxpool fwd bf16 NHWC 64x256x56x56 from ~35-42 % of copy (v2, L1/L2
# re-reads 2.25x) to ~75-85 %, avgpool alike; maxpool_bwd -15-25 % (its winners pass is a forward); NCHW <-> NHWC
# bf16 64x256x56x56 from ~18 % to ~70-80 % of copy, the f32 8192^2 transpose to ~80 %.
set -uo pipefail
. tests/gpu/dev_env.sh
PART=${PART:-1}
# tl S: S seconds, or what is left before DEADLINE (seconds after t0, default 185) when less: every step ends in
# time for the tables (a call that is killed brings back its files untarred, past the 8 that return)
tl() { local l=$((${DEADLINE:-185} - (SECONDS - t0))); if [ "$l" -lt "$1" ]; then echo $((l > 1 ? l : 1)); else echo "$1"; fi; }
BENCH_FILTERS=(bench/s12/ bench/s10/layernorm/bf16/8192x8192 bench/s10/layernorm_bwd/bf16/8192x8192
              bench/s10/rmsnorm/bf16/8192x8192 bench/s10/rmsnorm_bwd/bf16/8192x8192 bench/rn50/bf16/256x256x56x56
              bench/maxpool_bwd/)
step link
dev_build_testers difftest_norm difftest_conv difftest_quant difftest || exit 1
if [ "$PART" = 1 ]; then
    step "difftest_norm s12- (the new cases)"
    timeout "$(tl 90)" "$dev/difftest_norm" s12- > "$out/t_s12.log" 2>&1; echo "rc=$?"
    grep -E "^FAIL" -A2 "$out/t_s12.log" | cut -c1-300 | head -12; grep "passed," "$out/t_s12.log"
else
    step "families in full"
    for f in vec/:50 copy/:20 view:20 s12-:20; do
        timeout "$(tl "${f#*:}")" "$dev/difftest_norm" "${f%:*}" > "$out/t_norm_${f%%[/:]*}.log" 2>&1
        echo "difftest_norm ${f%:*} rc=$?"
    done
    timeout "$(tl 40)" "$dev/difftest_conv" pool/ > "$out/t_pool.log" 2>&1; echo "difftest_conv pool/ rc=$?"
    timeout "$(tl 40)" "$dev/difftest_quant" > "$out/t_quant.log" 2>&1; echo "difftest_quant rc=$?"
    timeout "$(tl 30)" "$dev/difftest" --quick > "$out/t_core.log" 2>&1; echo "difftest --quick rc=$?"
    # the switched paths on the new cases: the old ones, 2 rows per thread, the walk's winners, single units
    XDNN_POOL_ROLL=0 timeout "$(tl 15)" "$dev/difftest_norm" s12-pool > "$out/t_sw_roll0.log" 2>&1; echo "ROLL=0 rc=$?"
    XDNN_POOL_ROLL_ROWS=4 timeout "$(tl 15)" "$dev/difftest_norm" s12-pool > "$out/t_sw_rows4.log" 2>&1; echo "ROWS=4 rc=$?"
    XDNN_POOL_ROLL_WINNERS=1 timeout "$(tl 15)" "$dev/difftest_norm" s12-pool/max_bwd > "$out/t_sw_win.log" 2>&1
    echo "WINNERS=1 rc=$?"
    XDNN_COPY_TILED_PAIRS=0 timeout "$(tl 15)" "$dev/difftest_norm" s12-copy > "$out/t_sw_pairs0.log" 2>&1; echo "PAIRS=0 rc=$?"
    grep -hE "^FAIL" "$out"/t_*.log | cut -c1-300 | head -12; grep "passed," "$out"/t_*.log | sed "s|^$out/||"
fi
dev_memcheck "$dev/difftest_norm" s12- "$(tl 45)"
step "xdnn bench"
# the second call times again only the rows its changes reach (the others: the first call's)
[ "$PART" = 1 ] || BENCH_FILTERS=(bench/s12/maxpool bench/s12/avgpool bench/s12/permute bench/maxpool_bwd/)
for f in "${BENCH_FILTERS[@]}"; do
    timeout "$(tl 90)" "$dev/difftest_norm" --bench "$f" >> "$out/bench_norm.log" 2>&1
done
for f in bench/quantize bench/dequantize; do
    [ "$PART" = 1 ] && timeout "$(tl 30)" "$dev/difftest_quant" --bench "$f" >> "$out/bench_quant.log" 2>&1
done
grep -hc "BENCH" "$out"/bench_*.log; grep -h "FAIL" "$out"/bench_*.log | cut -c1-200 | head -5
step "A/B: the old paths"
for f in bench/s12/maxpool bench/s12/avgpool bench/maxpool_bwd/; do
    XDNN_POOL_ROLL=0 timeout "$(tl 30)" "$dev/difftest_norm" --bench "$f" >> "$out/ab_XDNN_POOL_ROLL=0.log" 2>&1
done
[ "$PART" = 1 ] && XDNN_COPY_TILED=0 timeout "$(tl 30)" "$dev/difftest_norm" --bench bench/s12/permute \
    >> "$out/ab_XDNN_COPY_TILED=0.log" 2>&1
if [ "$PART" != 1 ]; then # the variants added after the first call
    for f in bench/s12/maxpool_bwd bench/maxpool_bwd/; do
        XDNN_POOL_ROLL_WINNERS=1 timeout "$(tl 30)" "$dev/difftest_norm" --bench "$f" >> "$out/ab_XDNN_POOL_ROLL_WINNERS=1.log" 2>&1
    done
    XDNN_COPY_TILED_PAIRS=0 timeout "$(tl 30)" "$dev/difftest_norm" --bench bench/s12/permute \
        >> "$out/ab_XDNN_COPY_TILED_PAIRS=0.log" 2>&1
    for f in bench/s12/maxpool/ bench/s12/avgpool/; do
        XDNN_POOL_ROLL_ROWS=4 timeout "$(tl 30)" "$dev/difftest_norm" --bench "$f" >> "$out/ab_XDNN_POOL_ROLL_ROWS=4.log" 2>&1
    done
fi
step "peer: bench/mem_peer.py"
if [ "$PART" = 1 ]; then
    PYTHONUNBUFFERED=1 timeout "$(tl "${PEER_S:-150}")" python3 "$dev/mem_peer.py" --compile-budget-s "${COMPILE_S:-60}" \
        > "$out/peer1.log" 2> "$out/peer1.err"
else
    PYTHONUNBUFFERED=1 timeout "$(tl "${PEER_S:-50}")" python3 "$dev/mem_peer.py" --no-eager \
        --compile-start "${COMPILE_START:-0}" --compile-budget-s "${COMPILE_S:-30}" > "$out/peer2.log" 2> "$out/peer2.err"
fi
echo "rc=$?"; tail -2 "$out"/peer*.err | cut -c1-200
if [ "$PART" != 1 ] && [ $((SECONDS - t0)) -lt 165 ]; then # what limits the pooling kernels, if time is left
    step "ncu: the pooling kernels of bench/s12/maxpool (forward walk, winners, gather)"
    timeout "$(tl 20)" ncu --section SpeedOfLight --section Occupancy -k regex:roll --launch-skip 2 --launch-count 1 \
        "$dev/difftest_norm" --bench bench/s12/maxpool/bf16/nhwc/64x256 > "$out/ncu.log" 2>&1
    echo "rc=$?"
    timeout "$(tl 20)" ncu --section SpeedOfLight --section Occupancy -k regex:'winners|bwd_vec' --launch-skip 2 \
        --launch-count 2 "$dev/difftest_norm" --bench bench/s12/maxpool_bwd/ >> "$out/ncu.log" 2>&1
    echo "rc=$?"; grep -E "kpool_|DRAM Throughput|Memory Throughput|L1/TEX Cache|L2 Cache Throughput|Achieved Occ|Duration" \
        "$out/ncu.log" | cut -c1-110 | head -24
fi
dev_tables "$dev/pool12_tables.py"
