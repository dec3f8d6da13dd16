#!/usr/bin/env bash
# fix14_session.sh DEV OUT — session 14's fixes, written without a GPU (the session's device time was spent), for
# the next call (<= 150 s).  Run from the root of the tree as `bash DEV/fix14_session.sh DEV OUT` (DEV:
# tests/gpu/pack_dev.sh's folder plus dt/{difftest,difftest_conv,difftest_norm,diffharness}.o compiled where the
# library was built, plan_api_check.c and test_plan_exec's binary built there as DEV/plan_api_check and
# DEV/test_plan_exec).  The changes:
#  - conv_igemm_wgmma's 5-d TMA producer, C = 32 and an odd tap count: the last slice's second half reads images
#    past N (TMA zero fill) instead of the last tap again, so an Inf in x no longer meets w's zero columns
#    (Inf x 0 = NaN where the reference has +-Inf); kernels/conv_igemm_wgmma_sm90a.cu;
#  - xd_sigmoid_fast (codegen.c): e = e^-|x| from ex2 without ftz, x < 0 takes e / (1 + e), so bf16 silu / silu_bwd
#    of x from -91 to -87.3 (normal results) no longer flush to 0; the backward forms (lower.c pw_fast_form) take
#    1 - sigmoid(x) as sigmoid(-x) (sigmoid_bwd of x in [9, 16] was up to 100 % off by cancellation);
#  - main's 3fbb9c5 (merged here): xdnn_plan_execute refuses a binding off 16 bytes or a workspace off 256.
# Steps:
#  1. difftest_conv tm3 (the 5-d producer's cases, the three new +Inf ones among them: tm3-inf / tm3d-inf /
#     tm3-inf-n1 with bias + relu) and conv/fwd+epi/on/tm3; difftest_norm s14- (new, atol 0) and s13-pw/;
#     difftest pw/ (every pointwise mode);
#  2. plan_api_check graphs/*.dnn (item 4: bindings at +16 bytes give the same bits, at +1 element are refused);
#     XDNN_TEST_BACKEND=cuda test_plan_exec (the alignment refusals);
#  3. bench pw/si (silu, sigmoid, silu_bwd bf16 8192^2): against session 13's 0.1034-0.1050 ms;
#  4. the Llama step's attention backward (1.82 ms in the step, 1.56 alone in BSHD): difftest_seq --bench layout/,
#     the BSHD row, then stats in f32 (as the step), then v a strided view of the fused QKV (as the step).
#     EXPECTED: the three within 2 % of each other (v is loaded once a key block; stats are one read a query
#     tile): the gap is then in the step's conditions (clocks, L2), measured next by timing the partition in
#     the step with --cold-l2 and beside its neighbours.
# RISK (review): the conv fix makes the first TMA box of the tree wholly out of bounds (the PTX ISA zero-fills
# it and counts its bytes); if tm3 hangs (a timeout here), load that half as a 1-D bulk copy of a zeroed buffer.
# The sigmoid form is ~10 instructions an element against ~5 (ptxas: the non-ftz exp2 halves its argument below
# -126 and squares): step 3 says whether silu keeps its 86 % of copy.
# EXPECTED (before the call): every case passes, the old code would fail the tm3*-inf cases (NaN against +-Inf)
# and s14-logistic-low/silu (0 against -1e-36) and s14-logistic-high/sigmoid_bwd; silu / sigmoid bf16 8192^2
# +0-5 % (more instructions an
# element: |x| folds into the multiply, a select and a multiply; still issue-light at ~90 % of copy).
# DRY=1: the testers' --dry only (no GPU).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
DEADLINE=${DEADLINE:-150} # tl, counts: dev_env.sh
if [ -n "$dry" ]; then tc=${TC:?DRY=1 needs TC=difftest_conv built here}; tn=${TN:?and TN=difftest_norm}; td=${TD:?and TD=difftest}
    ts=${TS:?and TS=difftest_seq}
else step link; dev_build_testers difftest_conv difftest_norm difftest difftest_seq || exit 1
    tc=$dev/difftest_conv; tn=$dev/difftest_norm; td=$dev/difftest; ts=$dev/difftest_seq; fi

step "1. correctness: difftest_conv tm3, difftest_norm s14- s13-pw/, difftest pw/"
timeout "$(tl 40)" "$tc" $dry tm3 > "$out/t_tm3.log" 2>&1; echo "tm3 rc=$?"; counts "$out/t_tm3.log"
timeout "$(tl 15)" "$tn" $dry s14- > "$out/t_s14.log" 2>&1; echo "s14- rc=$?"; counts "$out/t_s14.log"
timeout "$(tl 25)" "$tn" $dry s13-pw/ > "$out/t_s13pw.log" 2>&1; echo "s13-pw/ rc=$?"; counts "$out/t_s13pw.log"
timeout "$(tl 25)" "$td" $dry pw/ > "$out/t_pw.log" 2>&1; echo "pw/ rc=$?"; counts "$out/t_pw.log"
[ -n "$dry" ] && { "$ts" --dry --bench layout/ | tail -1; exit 0; }

step "2. plan API: bindings at +16 bytes and +1 element; test_plan_exec on CUDA"
timeout "$(tl 40)" "$dev/plan_api_check" graphs/*.dnn > "$out/plan_api.md" 2> "$out/plan_api.err"
echo "plan_api_check rc=$?"; cut -d'|' -f2,13-15 "$out/plan_api.md"; grep -v "refused:" "$out/plan_api.err" | head -8
XDNN_TEST_BACKEND=cuda timeout "$(tl 20)" "$dev/test_plan_exec" > "$out/t_plan_exec.log" 2>&1
echo "test_plan_exec rc=$?"; tail -3 "$out/t_plan_exec.log"

step "3. bench: silu / sigmoid / silu_bwd bf16 with the new form"
for f in pw/si; do timeout "$(tl 20)" "$tn" --bench "$f" >> "$out/bench.log" 2>&1; done
grep -h "BENCH" "$out/bench.log" | cut -c1-200

step "4. the Llama step's attention backward: layout rows (BSHD, + f32 stats, + v a view of the fused QKV)"
timeout "$(tl 40)" "$ts" --bench layout/ > "$out/bench_layout.log" 2>&1; echo "rc=$?"
grep -h "BENCH\|^PASS\|^FAIL" "$out/bench_layout.log" | cut -c1-220
