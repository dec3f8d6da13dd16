#!/usr/bin/env bash
# pw_session.sh DEV OUT — session 13 "pw" (issue 12): the last three memory-bound rows behind PyTorch (silu bf16
# 82 % of copy, 1.09x eager; cast bf16->f32 74 %, 1.04x torch.compile; concat bf16 2 x [8192, 4096] 85 %, 1.02x
# eager) and their siblings, in one device call (<= 200 s).  Run from the root of the tree as
# `bash DEV/pw_session.sh DEV OUT`; DEV: tests/gpu/pack_dev.sh's folder plus dt/{difftest,difftest_norm,
# diffharness}.o compiled where the library was built, and mem_peer.py, norm_torch.py, pool12_tables.py copied in.
# The new paths (each with a switch that keeps the old one, man/xdnn.1):
#  - the logistic family's 16-bit results from ex2.approx / rcp.approx (lower.c pw_fast_form, codegen.c
#    xd_sigmoid_fast): silu, sigmoid, swish, their backwards, softplus_bwd (XDNN_PW_APPROX=0: expf and IEEE division);
#  - pointwise chunks of 16 bytes of the widest full stream (codegen.c vec_width): bf16 -> f32 moves 4 elements a
#    thread, 8-byte loads and one 16-byte store, every warp access whole sectors (XDNN_PW_VEC_WIDEST=0: 8 elements,
#    two 16-byte f32 stores each covering half of every sector);
#  - concat / split pieces in one launch over a table of pieces (copy.cu k_copy_pieces; XDNN_COPY_ONE_LAUNCH=0).
# Steps (DEADLINE 192 s after t0: each step's limit is what is left when less):
#  1. difftest_norm s13- (114 new cases, registered last: logistic forms over |x| <= 30 / 200, +-inf / NaN / 0
#     inputs, widening and narrowing casts on odd shapes, concat / split pieces; the -exact/, -narrowest/, -off/
#     prefixes with the switches), then the families touched: difftest pw/ (every pointwise mode), difftest_norm
#     vec/ copy/ view;
#  2. memcheck --quick on s13-copy/ and s13-pw/widen;
#  3. bench (new defaults): bench/s12/pw/ (relu .. cast), bench/s12/concat, bench/s13/ (sigmoid, silu_bwd,
#     silu->f32, cast f16->f32, f32->bf16, split); the A/B: each switch's rows with the old path;
#  4. ncu of the cast kernel, old (XDNN_PW_VEC_WIDEST=0) then new, while time lasts;
#  5. bench/mem_peer.py on the same rows (eager, copy_, torch.compile while COMPILE_S, default 35, lasts);
#  6. the table (pool12_tables.py) and the correctness counts.
# (A PART=2 measured XDNN_PW_CHUNKS=2 / 4, several chunks a thread: gelu -3 %, silu +2 %, the others level; the
# switch was removed in session 14.)
# DRY=1: the script's own check without a GPU (--dry testers; no bench, peer or ncu).
#
# EXPECTED (written before the call).  silu bf16 8192^2: issue-bound on expf + div.rn (~30 instructions an
# element); ex2 + rcp approx (~6) makes it a stream like relu (0.100 ms, 90 %): 0.1105 -> ~0.100-0.102 ms
# (88-90 %), ~0.92-0.95x eager (0.101 ms); sigmoid alike; silu_bwd (3 streams) ~88-92 %.  cast bf16->f32:
# 402 MB, 2:1 written : read; the half-sector stores were the suspected cost: 0.1836 -> ~0.155-0.165 ms (82-87 %
# of copy; torch.compile 0.1765, so ~0.90x), f16->f32 alike, f32->bf16 +0-5 %.  concat: one launch instead of
# two saves the drain / ramp between them (~3-5 us): 0.1058 -> ~0.101-0.103 ms (87-89 %), ~0.98x eager (0.1037);
# split alike.  Correctness: all s13- cases pass, the families unchanged, memcheck 0 errors.
# After the call (04:05 UTC, 158 s, 425b35e): every case passed (s13- 114, pw/ 71, vec/ 39, copy/ 88, view 11;
# memcheck 28 cases, 0 errors).  cast bf16->f32 0.1852 -> 0.1522 ms (1.22x, 89 %; ncu DRAM 64 -> 81 %), f16->f32
# alike, silu->f32 1.47x, but f32->bf16 0.99x (the wider input's half sectors hit L1): the chunk is now 16 bytes
# of the widest *stored* dtype (f32->bf16 back to 8 elements, the kernel measured as the switch's).  silu and
# sigmoid 1.05x (86 %: 0.1050 ms against eager's 0.1043, a tie), silu_bwd 92 %; concat in one launch 1.01x
# (0.1030, 88 %), split 1.03x: the second launch was not the cost (a copy_ of the same 268 MB took 0.112 ms).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
tl() { local l=$((${DEADLINE:-192} - (SECONDS - t0))); if [ "$l" -lt "$1" ]; then echo $((l > 1 ? l : 1)); else echo "$1"; fi; }
counts() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -18; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
if [ -n "$dry" ]; then tn=${TN:?DRY=1 needs TN=difftest_norm built here}; tc=${TC:?and TC=difftest}
else step link; dev_build_testers difftest_norm difftest || exit 1; tn=$dev/difftest_norm; tc=$dev/difftest; fi

step "correctness: difftest_norm s13- (new), difftest pw/, difftest_norm vec/ copy/ view"
timeout "$(tl 45)" "$tn" $dry s13- > "$out/t_s13.log" 2>&1; echo "s13- rc=$?"; counts "$out/t_s13.log"
timeout "$(tl 25)" "$tc" $dry pw/ > "$out/t_pw.log" 2>&1; echo "difftest pw/ rc=$?"; counts "$out/t_pw.log"
for f in vec/ copy/ view; do
    timeout "$(tl 20)" "$tn" $dry "$f" > "$out/t_norm_${f%/}.log" 2>&1; echo "difftest_norm $f rc=$?"
    counts "$out/t_norm_${f%/}.log"
done
[ -n "$dry" ] && exit 0
dev_memcheck "$tn" s13-copy/ "$(tl 18)"
dev_memcheck "$tn" s13-pw/widen "$(tl 12)"

step "bench: new defaults, then each switch's rows on the old path"
for f in bench/s12/pw/ bench/s12/concat bench/s13/; do
    timeout "$(tl 40)" "$tn" --bench "$f" >> "$out/bench_new.log" 2>&1
done
grep -c "^PASS" "$out/bench_new.log"; grep -h "^FAIL" "$out/bench_new.log" | cut -c1-200 | head -5
# filters (substrings): pw/si = silu, sigmoid, silu_bwd, silu->f32; ->f32/ = the widening rows
for r in "XDNN_PW_APPROX=0|pw/si" "XDNN_PW_VEC_WIDEST=0|->f32/ f32->bf16" "XDNN_COPY_ONE_LAUNCH=0|bench/s12/concat bench/s13/split"; do
    sw=${r%%|*}
    for f in ${r#*|}; do
        env "$sw" timeout "$(tl 20)" "$tn" --bench "$f" >> "$out/ab_$sw.log" 2>&1
    done
    echo "$sw: $(grep -c '^PASS' "$out/ab_$sw.log") rows"
done

if command -v ncu > /dev/null; then
    step "ncu: cast bf16->f32, old (8 a thread) then new (4)"
    for sw in XDNN_PW_VEC_WIDEST=0 XDNN_PW_VEC_WIDEST=1; do
        [ "$(tl 30)" -ge 8 ] || break
        env "$sw" timeout "$(tl 13)" ncu --section SpeedOfLight --section MemoryWorkloadAnalysis -k regex:xdnn_pw -s 2 -c 1 \
            "$tn" --bench bench/s12/pw/cast > "$out/ncu_cast_$sw.txt" 2>&1
        echo "$sw rc=$?"; grep -E "^\s*(Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Hit|Mem Busy|Max Bandwidth)\s" \
            "$out/ncu_cast_$sw.txt" | head -8
    done
fi

step "peer: bench/mem_peer.py (eager, copy_, torch.compile for ${COMPILE_S:-35} s)"
PYTHONUNBUFFERED=1 timeout "$(tl 70)" python3 "$dev/mem_peer.py" --compile-budget-s "${COMPILE_S:-35}" \
    --filter "s12/concat,s12/pw/silu,s12/pw/cast,s12/pw/gelu,s13/" > "$out/peer.log" 2> "$out/peer.err"
echo "rc=$?"; grep -c '"id"' "$out/peer.log"; tail -2 "$out/peer.err" | cut -c1-200

step "correctness counts"
for f in "$out"/t_*.log; do echo "$(basename "$f"): $(grep -c "^PASS" "$f") passed, $(grep -c "^FAIL" "$f") failed"; done
dev_tables "$dev/pool12_tables.py"
