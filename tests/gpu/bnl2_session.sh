#!/usr/bin/env bash
# bnl2_session.sh DEV OUT — session 13 "bnl2": the channels-last batchnorm apply reading its second pass over
# x (and dy) from L2 (kernels/norm_cl.cu, norm_cl1.cu; ng_job.cl_l2, switch XDNN_NORM_CL_L2=0|1).  DEV:
# tests/gpu/pack_dev.sh build-bn build-bn-dev, + dt/ (difftest_norm.o, diffharness.o), bn_peer.py, norm_torch.py,
# this script.  One call (BUDGET_S, default 285 s), in order of need: the new l2 cases (every one), memcheck
# --quick on them, the rn50 / rn50join bench rows on (default) and off (=0) beside bench/bn_peer.py --resnet, ncu
# on the 1024@14 rows (persistent forward and backward, the joined three-launch backward) on and off, then the
# batchnorm family of difftest_norm in what is left, and the ResNet-50 N=256 step A/B if 75 s are left.
#
# WHY: the statistics pass (norm_cl.cu's reduce, norm_cl1.cu's pass 1) reads every split bottom up, all splits
# at once (one wave), so at the apply's start L2 holds the top of every split; the apply walked each split bottom
# up as well: it first read what L2 had lost and, with its own reads and stores, evicted the tops before it got
# there (the "reversed split order" of session 7 changed nothing: the splits run side by side).  Now (x past 32
# MB; XDNN_NORM_CL_L2=0|1): norm_cl1's apply walks the re-read rows top down, loading them (and r) and storing y /
# dx evict-first (cache policy), its pass 1 loading the held rows evict-first; norm_cl.cu's reduce reads each
# split top down (the apply, at its 80-register bound, unchanged: hints there spilled 50-130 bytes), the join's a,
# b, m evict-first.
# EXPECTED (written before the call; L2 keeps ~35-40 MB of the tops for the apply): persistent launch (rn50 rows:
# every fwd+relu and bwd past 26 MB): the second read hits L2 for ~35 MB instead of ~0: 64@56 / 1024@14 fwd+relu
# (103 MB: 29 MB held, 74 re-read) 0.130 -> ~0.118 ms (-10 %), their backwards (x + dy 206 MB) 0.197 -> ~0.185
# (-6 %); the 51 MB backwards (128@28, 2048@7) -8 to -10 %, their forwards ~0 (the re-read 22 MB hit already);
# 256@56 / 64@112 (411 MB) -2 to -3 % (0.4537 -> ~0.44, 0.7244 -> ~0.71).  Three launches (rn50join rows, the
# residual forwards): ~half that (normal-priority stores evict the tops too): -2 to -4 % at 103-206 MB, ~-1 % at
# 411 MB.  The 13-26 MB ones unchanged (off below 32 MB).  ncu: the persistent launches' DRAM reads fall by ~30-35
# MB each, their L2 hit rate up; the joined reduce + apply by ~15-20 MB.
# Step (N=256): norm_welford 23.0 -> 22.3-22.7 ms, the step -0.3 to -0.7 ms (its noise +-1 %).
# OUTCOME call 1 (9904e98, 177 s): 180 + 525 cases passed, memcheck 0 errors; step norm_welford 22.82 -> 22.40 ms
# (on ran first), the 51-206 MB classes 1-13 % faster (60 of 63 partitions), the 411 MB ones 0.2-1.8 % slower:
# the default range is now 32-256 MB.  Call 2 (PART=2, <= 150 s): the step A/B in alternation, bench rows.
# OUTCOME call 2 (94b5ab6, 100 s): l2-odd 36/36; step on - off -0.18 / -0.11 ms (graph replay; the partitions
# timed alone drifted 5-10 % on untouched engines); persistent rows 128@28 / 1024@14 -1.7 to -4 %; the joined
# three-launch 1024@14 +0.2 %: the three-launch variant dropped (4350c02), bench/RESULTS-norm.md session 13.
set -uo pipefail
source tests/gpu/dev_env.sh "$@" > /dev/null
sum=$out/summary.txt
say() { echo "$*" | tee -a "$sum"; }
left() { echo $((${BUDGET_S:-285} - (SECONDS - t0))); }
dev_build_testers difftest_norm || exit 1
dev_link_cli || exit 1
dt=$dev/difftest_norm
# PART=2 (call 2, the default range 32-256 MB of x from call 1's step): the l2-odd/ cases (their default now),
# the step off / on twice in alternation (call 1 ran on first: its unchanged conv engines drifted 2 %), the bench
# rows of 128@28, 1024@14, 512@28 (fwd+relu, bwd) and the rn50join 1024@14 row on / off.
if [ "${PART:-1}" = 2 ]; then
    say "== l2-odd ($((SECONDS - t0)) s)"
    timeout 15 "$dt" l2-odd > "$out/l2odd.log" 2>&1; say "rc=$? $(grep -E 'passed,' "$out/l2odd.log")"
    grep -E "^FAIL" "$out/l2odd.log" | cut -c1-200 | head -5 | tee -a "$sum"
    for ab in off:XDNN_NORM_CL_L2=0 on:XDNN_NORM_CL_L2_UNSET=1 off2:XDNN_NORM_CL_L2=0 on2:XDNN_NORM_CL_L2_UNSET=1; do
        dev_step "${ab%%:*}" 25 "${ab#*:}" | tee -a "$sum"
    done
    R=""
    for f in bench/rn50/bf16/256x128x28x28 bench/rn50/bf16/256x1024x14x14 bench/rn50join/bf16/256x1024x14x14 \
             bench/rn50/bf16/256x512x28x28; do
        R+="-|$f|on|15;XDNN_NORM_CL_L2=0|$f|off|15;"
    done
    ITERS=10 dev_bench_runs "$dt" "${R%;}" | tee -a "$sum"
    grep -E "BENCH|^### " "$out/bench.log" | sed 's/^ *//' | cut -c1-200 | tee -a "$sum"
    say "== done ($((SECONDS - t0)) s)"
    (cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
    exit 0
fi
say "== l2 (new cases) ($((SECONDS - t0)) s)"
timeout 40 "$dt" l2- > "$out/l2.log" 2>&1; say "rc=$?"
grep -E "^FAIL" -A6 "$out/l2.log" | cut -c1-240 | head -24 | tee -a "$sum"; say "$(grep -E 'passed,' "$out/l2.log")"
say "ran $(grep -cE '^(PASS|FAIL)' "$out/l2.log") of $("$dt" --list | grep -c l2-) l2 cases"
dev_memcheck "$dt" l2- 30 | tee -a "$sum"
say "== bench on / off ($((SECONDS - t0)) s)"
ITERS=10 dev_bench_runs "$dt" "-|bench/rn50|on|35;XDNN_NORM_CL_L2=0|bench/rn50|off|35" | tee -a "$sum"
grep -E "BENCH|^### " "$out/bench.log" | sed 's/^ *//' | cut -c1-230 | tee -a "$sum"
say "== peer bn_peer.py --resnet ($((SECONDS - t0)) s)"
(cd "$dev" && PYTHONUNBUFFERED=1 timeout 25 python3 bn_peer.py --resnet) > "$out/peer.log" 2>&1; say "rc=$?"
cut -c1-200 "$out/peer.log" | tee -a "$sum"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for ab in on:XDNN_NORM_CL_L2_UNSET=1 off:XDNN_NORM_CL_L2=0; do
    say "== ncu 256x1024x14x14 ${ab%%:*} ($((SECONDS - t0)) s)"
    env "${ab#*:}" timeout 22 "$ncu" --cache-control none --clock-control none --filter-mode per-launch-config \
        --launch-count 1 -k regex:'k_cl' \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sector_op_read_hit_rate.pct \
        "$dt" --bench 256x1024x14x14 > "$out/ncu_${ab%%:*}.log" 2>&1
    say "rc=$?"
    grep -E '^  k_cl|^  void|k_cl[a-z0-9_]*<|gpu__time|dram__bytes|lts__t_sector' "$out/ncu_${ab%%:*}.log" | sed 's/  */ /g' |
        cut -c1-160 | head -40 | tee -a "$sum"
done
lim=$(($(left) - ${STEP_RESERVE:-0}))
if [ "$lim" -gt 8 ]; then
    say "== difftest_norm batchnorm family, ${lim} s ($((SECONDS - t0)) s)"
    timeout "$lim" "$dt" batchnorm > "$out/family.log" 2>&1; say "rc=$? (124: cut short)"
    grep -E "^FAIL" "$out/family.log" | cut -c1-240 | head -20 | tee -a "$sum"
    say "ran $(grep -cE '^(PASS|FAIL)' "$out/family.log") of $("$dt" --list | grep -c batchnorm); passed $(grep -c '^PASS' "$out/family.log"), failed $(grep -c '^FAIL' "$out/family.log")"
    say "of them not l2: ran $(grep -E '^(PASS|FAIL)' "$out/family.log" | grep -vc " l2-")"
fi
if [ "$(left)" -gt 75 ]; then
    for ab in on:XDNN_NORM_CL_L2_UNSET=1 off:XDNN_NORM_CL_L2=0; do
        dev_step "${ab%%:*}" 35 "${ab#*:}" | tee -a "$sum"
    done
fi
say "== done ($((SECONDS - t0)) s)"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
