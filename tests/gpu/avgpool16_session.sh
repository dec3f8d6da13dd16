#!/usr/bin/env bash
# avgpool16_session.sh DEV OUT — session 16 (avgpool, issue 12): average pooling of 3x3 stride-2 windows, forward
# and backward, written without a GPU, for one device call (<= 120 s).  Run from the root of the tree as
# `bash tests/gpu/avgpool16_session.sh DEV OUT`; DEV: tests/gpu/pack_dev.sh's folder plus
# dt/{difftest_norm,difftest_conv,diffharness}.o compiled where the library was built.
# The change (kernels/pool_avg.cuh, v5 of kernels/pool.cu; on by default, XDNN_POOL_AVG_WALK=0 the A/B):
#  - forward: v3's walk (kpool_roll3x3s2, 2 output rows a thread) with a lean policy: the divisor from kp_taps3's
#    two int32 counts and one reciprocal a window (v3: kp_divisor's 64-bit loops over 3 dims and 8 IEEE divisions
#    per 16-byte output chunk, as many instructions as the sums), taps outside x summed as the zeros they load:
#    48 registers, 5 blocks of 256 per SM (v3: 64, 4).  0.0655 ms, 66 % of copy (bytes x + y) on 64x256x56x56.
#  - backward: one pass like the max one (v4): a thread owns a 2 x 2 block of input pixels x 16 bytes of channels and
#    walks down 4 blocks; each step reads the next window row's 2 dy chunks, scales them by their divisors'
#    reciprocals and writes 4 dx chunks from them and the carried row: dy read 1.25x from L2, dx written once, x
#    not read; 56 registers, 4 blocks per SM.  v3's gather: 2.25 dy chunks per pixel, a division per tap, 0.1520 ms,
#    51 % of copy (bytes x + dy + dx = 231 MB though x is not read: 128 MB move).  XDNN_POOL_AVG_WALK=2 / 8: walks
#    of 2 / 8 blocks.  The engine's detail reads "avg fwd walk" / "avg bwd walk" on the new paths, "avg fwd" /
#    "avg bwd gather" on the old.
# Steps (the later ones only while time is left):
#  1. correctness: difftest_norm avg16/ (72 cases: include_pad both ways, NaN and -inf taps and windows, odd extents
#     7x9 / 113x57 / 1x1 / 2x2, pads 0 / 1 / 2 / asymmetric, ceil_mode, N = 1, f32 / f16 / bf16, C = 12 falling
#     back to the element kernel) with the default, then XDNN_POOL_AVG_WALK=0; the pooling family with the default
#     (difftest_norm "pool": vec/ and s12-pool, 84; difftest_conv pool/, 94);
#  2. memcheck --quick avg16/ (48: f32 and bf16), default;
#  3. bench: the avgpool rows (bench/s12/avgpool{,_bwd}/bf16/nhwc/64x256x56x56, the stem's
#     bench/avg16/avgpool{,_bwd}/bf16/nhwc/64x64x112x112), default / XDNN_POOL_AVG_WALK=0 alternated twice;
#  4. extras: avg16/ with walks of 2 and 8, the family with XDNN_POOL_AVG_WALK=0, the backward rows at 2 and 8.
# EXPECTED (before the call): every case passes every way; forward 0.0655 -> ~0.053 ms (66 -> ~81 % of copy; the
# max forward on the same walk with 48 registers: 0.0503), the stem forward about the same; backward 0.152 ->
# ~0.085 ms (51 -> ~90 % of the counted bytes; ~1500 GB/s of bytes moved), the stem backward likewise; walks of 2 / 8
# within ~5 % of 4.  If it wins: keep the defaults, the rows into bench/RESULTS-norm.md's pool table (and
# bench/mem_peer.py --filter avgpool for the PyTorch columns: the stem rows are new there).  If a direction loses:
# say which; the forward's policy or the backward's walk goes behind XDNN_POOL_AVG_WALK=1 (kp_avg_walk_blocks'
# default to 0) and an ncu of the kernel (NCU=1 below) says whether it is DRAM-, L1- or issue-bound.
# DRY=1: the testers' --dry only (TN=difftest_norm and TC=difftest_conv built here).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-120} # tl, counts: dev_env.sh
left() { echo $((DEADLINE - (SECONDS - t0))); }
if [ -n "$dry" ]; then tn=${TN:?DRY=1 needs TN=difftest_norm built here}; tc=${TC:?and TC=difftest_conv}
else
    step link; dev_build_testers difftest_norm difftest_conv || exit 1; tn=$dev/difftest_norm; tc=$dev/difftest_conv
fi

# family TAG [VAR=VALUE]: the pooling cases of both testers
family() {
    local tag=$1; shift
    env "$@" timeout "$(tl 20)" "$tn" $dry pool > "$out/t_norm_pool_$tag.log" 2>&1; echo "difftest_norm pool [$*] rc=$?"
    counts "$out/t_norm_pool_$tag.log"
    env "$@" timeout "$(tl 25)" "$tc" $dry pool/ > "$out/t_conv_pool_$tag.log" 2>&1
    echo "difftest_conv pool/ [$*] rc=$?"
    counts "$out/t_conv_pool_$tag.log"
}
# avg16 W: the new cases with XDNN_POOL_AVG_WALK=W ("default": unset)
avg16() {
    local env=(); [ "$1" = default ] || env=(XDNN_POOL_AVG_WALK=$1)
    env "${env[@]}" timeout "$(tl 20)" "$tn" $dry avg16/ > "$out/t_avg16_$1.log" 2>&1; echo "avg16/ walk=$1 rc=$?"
    counts "$out/t_avg16_$1.log"
}
# bench W R FILTER: the rows of FILTER with XDNN_POOL_AVG_WALK=W (default 4), run R; BENCH lines as "W R row ms detail"
bench() {
    XDNN_POOL_AVG_WALK=$1 timeout "$(tl 15)" "$tn" --bench "$3" > "$out/bench_$1_$2.log" 2>&1
    echo "XDNN_POOL_AVG_WALK=$1 run $2 rc=$?"
    grep -h "BENCH" "$out/bench_$1_$2.log" | awk -F'|' -v w="$1" -v r="$2" \
        '{sub(/.*BENCH /, "", $1); split($4, m, " "); printf "%s %s %-48s %s ms %s|%s\n", w, r, $1, m[2], $5, $6}'
}

step "1. correctness: avg16/ default and XDNN_POOL_AVG_WALK=0; the pooling family (default)"
avg16 default
avg16 0
family default
[ -n "$dry" ] && { avg16 2; avg16 8; family old XDNN_POOL_AVG_WALK=0; exit 0; }
dev_memcheck "$tn" avg16/ "$(tl 30)"

step "3. bench: avgpool rows, XDNN_POOL_AVG_WALK=4 (default) / 0 alternated twice"
for run in 4:1 0:1 4:2 0:2; do bench "${run%:*}" "${run#*:}" avgpool; done

step "4. extras while time lasts: avg16/ at 2 and 8, the family with XDNN_POOL_AVG_WALK=0, bwd rows at 2 and 8"
[ "$(left)" -gt 15 ] && avg16 2
[ "$(left)" -gt 15 ] && avg16 8
[ "$(left)" -gt 30 ] && family old XDNN_POOL_AVG_WALK=0
[ "$(left)" -gt 10 ] && bench 2 1 avgpool_bwd
[ "$(left)" -gt 10 ] && bench 8 1 avgpool_bwd
if [ -n "${NCU:-}" ]; then
    step "ncu: the avgpool kernels on the 64x256x56x56 rows"
    timeout "$(tl 40)" ncu --kernel-name regex:"kpool_avg_bwd_walk|kpool_roll3x3s2" --launch-count 2 \
        --section SpeedOfLight --section Occupancy "$tn" --bench s12/avgpool > "$out/ncu.log" 2>&1
    echo "ncu rc=$?"
    grep -E "kpool|Duration|DRAM Throughput|L1/TEX Cache|L2 Cache Thr|Achieved Occupancy|Registers" "$out/ncu.log"
fi
step done
