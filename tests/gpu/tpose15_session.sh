#!/usr/bin/env bash
# tpose15_session.sh DEV OUT — session 15 (tpose15, issue 12: tensor copies at the bandwidth roofline): the
# pipelined transposing copy, written without a GPU, for one device call (<= 150 s).  Run from the root of the
# tree as `bash tests/gpu/tpose15_session.sh DEV OUT`; DEV: tests/gpu/pack_dev.sh's folder plus
# dt/{difftest_norm,diffharness}.o compiled where the library was built (else difftest_norm.c is compiled here),
# and optionally mem_peer.py (bench/mem_peer.py) for the copy_ of the same bytes.
# The change (kernels/copy.cu k_transpose_piped; on by default, XDNN_COPY_TILED_V2=0 keeps session 12's
# k_transpose, =2 tiles twice as deep): each block loads its part of the next tile into registers before it stores
# the current one from shared memory (DRAM reads go on across the store phase and both barriers), on a grid of the
# blocks resident at once (cudaOccupancy...: k_transpose's 132 x 8 blocks, 40 registers for bf16 pairs, left a
# second wave of 264 blocks at 2 a SM), __launch_bounds__(256, 8): 32 registers, no spills (ptxas), 8 KB tiles
# (64 x 64 2-byte units in pairs, 32 x 64 f32, 16 x 64 8-byte) so 64 KB of loads in flight a SM; 32-bit tile
# index math, the next tile's place computed while its loads fly.  8-byte units (i64, f64) now tiled too (the
# element loop before).  1-byte units keep k_transpose (64 one-byte loads a thread would take 64 registers).
# Steps:
#  1. correctness, exact (a copy moves bits), default path: difftest_norm tp15/ (66 cases: partial tiles at both
#     edges, pairs, 1-sized and 5-D batch dims, views with strides, a slice offset into a column-major output, 2-D
#     8193x127 / 127x8193, shapes of 2000-9000 tiles (several a block), NaN / Inf, i32 / i64 / bool), then the
#     copy families copy/ (copy, s12-copy, s13-copy) and view/;
#  2. the switched paths: XDNN_COPY_TILED_V2=2 on tp15/ (the deeper tiles, every unit size), XDNN_COPY_TILED_V2=0
#     on tp15/ --quick and s12-copy (k_transpose as before; i64 through the element loop);
#  3. bench bench/s12/permute (bf16 NCHW -> NHWC 64x256x56x56, NHWC -> NCHW, f32 8192^2 transpose): V2 default,
#     V2=0, V2=2, alternated twice; the detail column names the path ("... the next tile's loads in flight");
#  4. mem_peer.py --filter permute (eager, copy_ of the same bytes) if DEV has it and 60 s are left;
#  5. memcheck on tp15/ --quick with what time is left (>= 25 s; it comes last so the bench is never cut).
# EXPECTED (written before the call): every case passes on the three paths, memcheck 0 errors;
#   permute bf16 64x256x56x56 -> NHWC 0.1012 ms (68 % of copy) -> ~0.080-0.085 (81-86 %),
#   NHWC -> NCHW 0.1007 (69 %) -> ~0.080-0.085, f32 8192^2 0.2250 (80 %) -> ~0.200-0.205 (88-90 %);
#   V2=0 as session 12 (+-2 %); V2=2 within +-5 % of the default (more bytes a block, 6 blocks a SM).
# If it wins (>= 5 % on the bf16 rows): keep the default; if V2=2 beats it by >= 3 % on all three rows, make the
# deep tiles the default (launch_transpose_piped's `deep`).  If it loses or ties: set tiled_v2_mode's default to
# 0 (the A/B stays), report the figures; next would be cp.async (or TMA) into a second shared buffer.
# DRY=1 (no GPU): the tester's --dry on steps 1-2 only; TD=difftest_norm built here.
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-145} # tl, counts: dev_env.sh
if [ -n "$dry" ]; then td=${TD:?DRY=1 needs TD=difftest_norm built here}
else step link; dev_build_testers difftest_norm || exit 1; td=$dev/difftest_norm; fi

step "1. correctness, default path (k_transpose_piped): tp15/, copy/, view/"
for f in tp15/:40 copy/:15 view/:10; do
    timeout "$(tl "${f#*:}")" "$td" $dry "${f%:*}" > "$out/t_on_${f%%/*}.log" 2>&1; echo "${f%:*} rc=$?"
    counts "$out/t_on_${f%%/*}.log"
done

step "2. the switched paths: XDNN_COPY_TILED_V2=2 tp15/, XDNN_COPY_TILED_V2=0 tp15/ --quick and s12-copy"
XDNN_COPY_TILED_V2=2 timeout "$(tl 35)" "$td" $dry tp15/ > "$out/t_deep.log" 2>&1; echo "V2=2 tp15/ rc=$?"
counts "$out/t_deep.log"
XDNN_COPY_TILED_V2=0 timeout "$(tl 15)" "$td" $dry --quick tp15/ > "$out/t_off.log" 2>&1; echo "V2=0 tp15/ rc=$?"
XDNN_COPY_TILED_V2=0 timeout "$(tl 10)" "$td" $dry s12-copy >> "$out/t_off.log" 2>&1; echo "V2=0 s12-copy rc=$?"
counts "$out/t_off.log"
[ -n "$dry" ] && exit 0

step "3. bench bench/s12/permute: V2 default / 0 / 2, twice"
for r in 1 2; do
    for sw in on 0 2; do
        v=$sw; [ "$sw" = on ] && v=1 # 1: the default
        XDNN_COPY_TILED_V2=$v timeout "$(tl 15)" "$td" --bench bench/s12/permute > "$out/bench_${sw}_$r.log" 2>&1
        echo "XDNN_COPY_TILED_V2=$sw run $r:"
        grep -h "BENCH" "$out/bench_${sw}_$r.log" | sed 's/^ *BENCH bench\/s12\/permute\///' | cut -c1-190
    done
done

if [ -f "$dev/mem_peer.py" ] && [ $((DEADLINE - (SECONDS - t0))) -ge 60 ]; then
    step "4. peer: mem_peer.py --filter permute (eager, copy_ of the same bytes; no compile)"
    PYTHONUNBUFFERED=1 timeout "$(tl 30)" python3 "$dev/mem_peer.py" --filter permute --compile-budget-s 0 \
        > "$out/peer.log" 2> "$out/peer.err"
    echo "rc=$?"; grep -v compile "$out/peer.log" | cut -c1-200
fi

left=$((DEADLINE - (SECONDS - t0)))
if [ "$left" -ge 25 ]; then dev_memcheck "$td" tp15/ "$(tl 60)"
else echo "memcheck skipped: $left s left"; fi
step done
