#!/usr/bin/env bash
# bwddrop_session.sh DEV OUT — session 11's device call for dropout on sdpa_bwd_wgmma (issue 10).  DEV: what
# tests/gpu/pack_dev.sh packs, plus DEV/dt/{difftest_seq,diffharness}.o, DEV/peer.py, DEV/sdpa_drop_peer.py.
#
# EXPECTED (written before the first call; the second call's below): b4h16s4096d128 bf16 dropout 0.1 backward from 17.0 ms on
# sdpa_bwd_flash to ~3.0-3.4 ms on sdpa_bwd_wgmma (the no-dropout kernel takes 2.67-2.70: the Philox words,
# BM / 16 = 4 calls per thread and 64 x 64 tile plus the oct shuffles, cost ~10-25% over it), i.e. <= 1.0x
# cuDNN's 3.57; causal and the Llama GQA causal shape likewise ~10-25% over their 1.52 / 1.60 ms.  The
# no-dropout rows must not move (their kernels' PTX and registers are unchanged: ptxas -v, same spills).
# First call (commit 5f44485): all correct; dropout 3.88 ms (cuDNN 3.57: 1.09x), causal 2.15 (1.90: 1.13x), Llama
# 2.09 (1.96: 1.06x); no-dropout rows unmoved (2.66, 1.54, 1.61).  Dropout costs +1.2 ms, as the forward's
# (+1.13): the consumers' issue slots, ~145 instructions per Philox call of which ~80 the oct exchange.
# EXPECTED of the second call: drop_words_t8 (a 3-stage butterfly transpose, ~40 instructions less per call)
# takes ~25% off the dropout's cost: ~3.55 ms (~1.0x cuDNN), against XDNN_SDPA_BWD_DROP=oct in the same call;
# its extra spills (104 bytes against oct's 68, ptxas -v) may eat part of it.
# Second call (commit 4a43931, which had XDNN_SDPA_BWD_DROP=oct for the A/B and a bench of it here): all correct;
# t8 3.66 ms against oct's 3.87 in the same call (cuDNN 3.48: 1.05x), causal 2.02 / 2.16 (2.01), Llama 1.96 /
# 2.09 (2.05).  oct removed after it (the kept instances' PTX is the call's).
#
# PART=all (default): the bwddrop cases (every dropout case on sdpa_bwd_wgmma), again under
# XDNN_SDPA_BWD_DETERMINISTIC=1; the bench rows bench/drop (xdnn) and sdpa_drop_peer.py (cuDNN, flash);
# compute-sanitizer memcheck on --quick bwddrop; then every sdpa_bwd_wgmma case (the existing ones again) in
# what time is left.  DRY=1: the CPU references and plans here (no GPU).  Logs in OUT/logs.tgz, summary.txt.
set -uo pipefail
source "$(dirname "$0")/dev_env.sh" "$@" > /dev/null
sum=$out/summary.txt
say() { echo "$*" | tee -a "$sum"; }
left() { echo $(( ${BUDGET_S:-180} - (SECONDS - t0) )); }
dry=${DRY:+--dry}
if [ -z "$dry" ]; then
    dev_build_testers difftest_seq || exit 1
fi
dt=${DT:-$dev/difftest_seq}
# run TAG LIMIT [ENV...] -- ARGS...: the tester with ENV into OUT/TAG.log, its rc, failures and counts
run() {
    local tag=$1 lim=$2 env=(); shift 2
    while [ "$1" != -- ]; do env+=("$1"); shift; done; shift
    say "== $tag ($((SECONDS - t0)) s)"
    env "${env[@]}" timeout "$lim" "$dt" $dry "$@" > "$out/$tag.log" 2>&1
    say "rc=$? (124: cut short)"
    grep -E "^FAIL" -A3 "$out/$tag.log" | cut -c1-300 | head -12 | tee -a "$sum"
    say "ran $(grep -cE '^(PASS|FAIL)' "$out/$tag.log"); $(grep -E 'passed,' "$out/$tag.log" | tail -1)"
}
run drop 30 -- bwddrop
run drop_det 20 XDNN_SDPA_BWD_DETERMINISTIC=1 -- bwddrop
say "== bench ($((SECONDS - t0)) s)"
DIFFTEST_ITERS=${ITERS:-20} timeout 45 "$dt" $dry --bench bench/drop > "$out/bench.log" 2>&1
say "rc=$?"
grep -E "^(PASS|FAIL)|TIME" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-220 | tee -a "$sum"
if [ -z "$dry" ]; then
    say "== peer ($((SECONDS - t0)) s)"
    (cd "$dev" && PYTHONUNBUFFERED=1 timeout 50 python3 sdpa_drop_peer.py) > "$out/peer.log" 2>&1
    say "rc=$?"; tee -a "$sum" < "$out/peer.log"
    say "== memcheck --quick bwddrop ($((SECONDS - t0)) s)"
    timeout 30 compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$dt" --quick bwddrop \
        > "$out/memcheck.log" 2>&1
    say "memcheck rc=$? (124: cut short)"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -6 | tee -a "$sum"
fi
lim=$(left); [ "$lim" -gt 100 ] && lim=100
[ "$lim" -gt 10 ] && run bwd_wgmma_all "$lim" -- sdpa_bwd_wgmma
say "== done ($((SECONDS - t0)) s)"
[ -z "$dry" ] && (cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
exit 0
