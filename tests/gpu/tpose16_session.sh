#!/usr/bin/env bash
# tpose16_session.sh DEV OUT — session 16 (tpose, issue 12: tensor copies at the bandwidth roofline): the
# transposing copy through cp.async, written without a GPU, for one device call (<= 120 s).  Run from the root of
# the tree as `bash tests/gpu/tpose16_session.sh DEV OUT`; DEV: tests/gpu/pack_dev.sh's folder plus
# dt/{difftest_norm,diffharness}.o compiled where the library was built (else difftest_norm.c is compiled here),
# and optionally mem_peer.py (bench/mem_peer.py) for the copy_ of the same bytes.
# The change (kernels/copy.cu k_transpose_async, v3; on by default, XDNN_COPY_TILED_V2=1 keeps session 15's
# k_transpose_piped, 0 session 12's k_transpose): session 15 left one tile's loads in flight a block, none between
# its two barriers.  v3 copies the input's lines as 16-byte chunks with cp.async.cg straight into one of 3 shared
# buffers: a block's next two tiles are in flight while it stores the current one, one barrier a tile, no
# registers held for them.  Tiles of 128 bytes along a x 32 * SP rows (bf16 64 x 128 = 16 KB, f32 32 x 128): a
# thread reads SP rows' chunks as 16-byte shared loads (chunks xor-swizzled: no bank conflicts, no padding),
# transposes them in registers and stores LP runs of SP units (SP = 4 here: 8-byte stores for bf16, 16 for f32;
# v2: 4-byte).  48 KB of shared memory, 60-64 registers (ptxas, no spills) -> 4 blocks an SM, 128 KB of loads in
# flight an SM.  Taken when the lines split into whole 16-byte chunks and the output rows into runs of 4 or 2
# (the three bench rows do); other shapes run v2 as before.  1-byte units (bool, i8) now pipelined too.
# Steps:
#  1. correctness, exact (a copy moves bits), default path: difftest_norm tp16/ (51 cases: partial tiles along a
#     and d, runs of 2 and 4, 1-sized dims, 5-D, views, a column-major output from a slice, NaN / Inf, 1000-3000
#     tiles, f32 / f16 / bf16 / i32 / i64 / bool; v2/ and the unit-4 slice take the other paths), tp15/ --quick,
#     then the copy families copy/ and view/;
#  2. the switched path: XDNN_COPY_TILED_V2=1 on tp16/ --quick (session 15's kernel on the same shapes);
#  3. bench bench/s12/permute (bf16 NCHW -> NHWC 64x256x56x56, NHWC -> NCHW, f32 8192^2 transpose): default and
#     XDNN_COPY_TILED_V2=1 alternated twice; the detail column names the path ("... cp.async of the next two
#     tiles" / "... the next tile's loads in flight");
#  4. mem_peer.py --filter permute (eager, copy_ of the same bytes) if DEV has it and 45 s are left;
#  5. memcheck on tp16/ --quick with what time is left (>= 20 s; it comes last so the bench is never cut).
# EXPECTED (written before the call): every case passes on both paths, memcheck 0 errors;
#   permute bf16 64x256x56x56 -> NHWC 0.0879 ms (79 % of copy) -> ~0.077-0.081 (86-90 %),
#   NHWC -> NCHW 0.0862-0.0878 (79 %) -> ~0.077-0.081, f32 8192^2 0.2135 (85 %) -> ~0.200-0.206 (88-91 %);
#   V2=1 as session 15 (+-2 %).
# If it wins (>= 4 % on the bf16 rows, no loss on f32): keep the default.  If it loses or ties: set
# tiled_v2_mode's default to 1 in kernels/copy.cu (the A/B stays) and report the figures; the next try would be
# 256-byte tile rows (two lines a row: DRAM pages on the f32 transpose's 32 KB row stride) or TMA.
# DRY=1 (no GPU): the tester's --dry on steps 1-2 only; TD=difftest_norm built here.
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-118} # tl, counts: dev_env.sh
if [ -n "$dry" ]; then td=${TD:?DRY=1 needs TD=difftest_norm built here}
else step link; dev_build_testers difftest_norm || exit 1; td=$dev/difftest_norm; fi

step "1. correctness, default path (k_transpose_async): tp16/, tp15/ --quick, copy/, view/"
timeout "$(tl 30)" "$td" $dry tp16/ > "$out/t_on_tp16.log" 2>&1; echo "tp16/ rc=$?"
counts "$out/t_on_tp16.log"
timeout "$(tl 15)" "$td" $dry --quick tp15/ > "$out/t_on_tp15.log" 2>&1; echo "tp15/ --quick rc=$?"
counts "$out/t_on_tp15.log"
for f in copy/:12 view/:8; do
    timeout "$(tl "${f#*:}")" "$td" $dry "${f%:*}" > "$out/t_on_${f%%/*}.log" 2>&1; echo "${f%:*} rc=$?"
    counts "$out/t_on_${f%%/*}.log"
done

step "2. the switched path: XDNN_COPY_TILED_V2=1 tp16/ --quick (session 15's k_transpose_piped)"
XDNN_COPY_TILED_V2=1 timeout "$(tl 15)" "$td" $dry --quick tp16/ > "$out/t_v2.log" 2>&1; echo "V2=1 tp16/ rc=$?"
counts "$out/t_v2.log"
[ -n "$dry" ] && exit 0

step "3. bench bench/s12/permute: default (v3) / XDNN_COPY_TILED_V2=1 (v2), twice"
for r in 1 2; do
    for sw in on 1; do
        if [ "$sw" = on ]; then
            timeout "$(tl 15)" "$td" --bench bench/s12/permute > "$out/bench_${sw}_$r.log" 2>&1
        else
            XDNN_COPY_TILED_V2=1 timeout "$(tl 15)" "$td" --bench bench/s12/permute > "$out/bench_${sw}_$r.log" 2>&1
        fi
        echo "XDNN_COPY_TILED_V2=$sw run $r:"
        grep -h "BENCH" "$out/bench_${sw}_$r.log" | sed 's/^ *BENCH bench\/s12\/permute\///' | cut -c1-190
    done
done

if [ -f "$dev/mem_peer.py" ] && [ $((DEADLINE - (SECONDS - t0))) -ge 45 ]; then
    step "4. peer: mem_peer.py --filter permute (eager, copy_ of the same bytes; no compile)"
    PYTHONUNBUFFERED=1 timeout "$(tl 25)" python3 "$dev/mem_peer.py" --filter permute --compile-budget-s 0 \
        > "$out/peer.log" 2> "$out/peer.err"
    echo "rc=$?"; grep -v compile "$out/peer.log" | cut -c1-200
fi

left=$((DEADLINE - (SECONDS - t0)))
if [ "$left" -ge 20 ]; then dev_memcheck "$td" tp16/ "$(tl 60)"
else echo "memcheck skipped: $left s left"; fi
step done
