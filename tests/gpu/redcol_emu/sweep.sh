#!/usr/bin/env bash
# sweep.sh BUILD [WORK] [FILTER] — reduce v2 (XDNN_REDUCE_V2=1, src/gpu/codegen_redcol.c) on the CPU, no GPU:
# for each configuration below, gen (linked against BUILD/libxdnn.a) writes the generated kernel source (prelude
# stripped) and its geometry, emu.cpp compiles that source with g++ (256 std::threads a block, std::barrier for
# __syncthreads, a warp exchange for __shfl_xor_sync, f16 / bf16 conversions in software) and runs every block,
# then the fold, against a double reference.  One line per configuration: "ok" or "FAIL" with the first
# mismatches.  Session 12 (redcol): 285 of 285 ok, ~8 minutes on 2 cores.  WORK: scratch (default /tmp/redcol_emu).
# EMU_SPECIALS=1 (session 15, the packed 16-bit max/min/amax): NaN, +-Inf, -0/+0 and all-negative outputs in
# f16/bf16 max/min/amax, the reference propagating NaN, compared exactly (emu.cpp's xd_pk models max.NaN/min.NaN);
# filters " max", " min", "amax": 132 of 132 ok (88 of them f16/bf16); with XDNN_REDUCE_PACKED=0 the NaN outputs
# failed (fmaxf dropped NaN) until the f32 path took xd_max_nan / xd_min_nan (max.NaN / min.NaN.f32, modelled
# here): those pass too (XDNN_REDUCE_PACKED=0 EMU_SPECIALS=1, filter " max -> bf16": 11 of 11 ok).
set -uo pipefail
build=${1:?usage: sweep.sh BUILD [WORK] [FILTER]}; work=${2:-/tmp/redcol_emu}; filter=${3:-}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
mkdir -p "$work"
gcc -std=c11 -D_GNU_SOURCE -O1 -DXDNN_HAVE_CUDA=1 -I"$root/include" -I"$root/src" -I"$root/tests/unit" \
    -I/usr/local/cuda/include -o "$work/gen" "$here/gen.c" "$root/tests/unit/gpu_fixture.c" "$root/tests/unit/harness.c" \
    "$build/libxdnn.a" -lcjson -lm -fopenmp -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -ldl -lpthread -lrt || exit 1
ty() { [ "$1" = f32 ] && echo float || echo "unsigned short"; }
one() { # one DT_X SHAPE AXES OP DT_Y [KEEP]
    local xd=$1 shape=$2 axes=$3 op=$4 yd=$5 keep=${6:-true} tag info form work_ gy fold rest
    tag="$xd$shape$axes $op -> $yd keep=$keep"
    [[ "$tag" == *"$filter"* ]] || return 0
    info=$(XDNN_REDUCE_V2=1 "$work/gen" "dnn 1;
graph g {
  input x: $xd$shape;
  y = reduce(x, op=\"$op\", axes=$axes, keepdims=$keep);
  output y: $yd;
}
" "$work/k.inc" "$work/meta.txt") || { echo "$tag: not the v2 form ($info)"; return 0; }
    read -r form work_ gy fold rest < "$work/meta.txt"
    local defs=(-DFORM="$form" "-DXT=$(ty "$xd")" "-DYT=$(ty "$yd")" -DKFILE="\"$work/k.inc\"")
    [ "$fold" = 1 ] && defs+=(-DHAS_FIN)
    g++ -std=c++20 -O1 -w "${defs[@]}" -o "$work/emu" "$here/emu.cpp" -lpthread || { echo "$tag: emu build failed"; return 0; }
    printf '%-48s %s :: ' "$tag" "$info"; timeout 300 "$work/emu" "$work/meta.txt" | tail -6
}
for dt in f32 f16 bf16; do
    for sh in "[7, 3]" "[8191, 3]" "[7, 40]" "[8191, 40]" "[7, 8]" "[8191, 8]" "[7, 4097]" "[300, 4096]" "[1031, 40]"; do
        for op in sum mean max min; do
            yd=f32; { [ $op = max ] || [ $op = min ]; } && yd=$dt
            k=true; { [ $op = mean ] || [ $op = min ]; } && k=false
            one $dt "$sh" "[0]" $op $yd $k
        done
    done
    for op in amax norm1 norm2 prod; do one $dt "[1031, 40]" "[0]" $op f32; done
    for op in sum mean max min; do
        one $dt "[3, 7, 5]" "[1]" $op $dt false; one $dt "[3, 1031, 64]" "[1]" $op f32; one $dt "[2, 9, 4097]" "[1]" $op f32
    done
    one $dt "[5, 7, 24]" "[0, 1]" sum f32; one $dt "[4, 6, 2, 12]" "[1, 2]" max $dt false
    for sh in "[7, 3]" "[7, 8]" "[300, 40]" "[7, 1000]" "[300, 4097]" "[7, 8192]" "[9, 520]" "[3, 1024]"; do
        for op in sum mean max min; do one $dt "$sh" "[-1]" $op f32; done
    done
    for op in amax norm1 norm2 prod; do one $dt "[9, 520]" "[-1]" $op f32; one $dt "[7, 1000]" "[-1]" $op f32; done
    one $dt "[4, 512, 64]" "[0]" sum f32
done
