#!/usr/bin/env bash
# paged_session.sh DEV OUT — the paged-decode bandwidth device call (issue 14
# item 4; bench/RESULTS-sdpa.md): sdpa_splitkv on @bshd and head-major page
# pools.  DEV: tests/gpu/pack_dev.sh's folder plus dt/difftest_seq.o and
# dt/diffharness.o (linked here from objects, see dev_env.sh).
#  1. sweep: difftest_seq's serving cases under each setting of
#     SWEEP_VARIANTS (space-separated; a setting is ENV=V,ENV=V of
#     XDNN_SPLITKV_*, "-" the defaults), SWEEP_EXTRA's filters under the first;
#  2. compute-sanitizer memcheck on the --quick serving cases (SKIP_SAN);
#  3. bench: each "ENV=... ENV=...:FILTER" of BENCH_RUNS (ENV "-" = none),
#     difftest_seq --bench FILTER, 10 timed CUDA-graph replays;
#  4. the PyTorch peer bench/sdpa_paged_peer.py (SKIP_PEER).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh" # dev, out, step, dev_link_tester
dev_link_tester difftest_seq || exit 1
step sweep
extra=${SWEEP_EXTRA:-}
for v in ${SWEEP_VARIANTS:--}; do
    for f in serve $extra; do
        x=${v/#-/}
        env ${x//,/ } timeout "${SWEEP_S:-40}" "$dev/difftest_seq" "$f" > "$out/sweep.tmp" 2>&1
        echo "difftest [$v] $f rc=$? $(grep -E 'passed,' "$out/sweep.tmp")"
        grep -E "^FAIL" "$out/sweep.tmp" | cut -c1-300 | head -5
        { echo "=== [$v] $f"; cat "$out/sweep.tmp"; } >> "$out/sweep.log"
    done
    extra= # the extra filters under the first setting only
done
rm -f "$out/sweep.tmp"
if [ -z "${SKIP_SAN:-}" ]; then
    step sanitizer
    timeout "${SAN_S:-60}" compute-sanitizer --tool memcheck --print-limit 10 "$dev/difftest_seq" --quick serve \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|passed,' "$out/memcheck.log" | tr '\n' ' ')"
fi
step bench
IFS=';' read -ra runs <<< "${BENCH_RUNS:--:bench/decode/paged}"
for r in "${runs[@]}"; do
    envs=${r%%:*} filt=${r#*:}
    echo "--- [$envs] $filt ($((SECONDS - t0)) s)" | tee -a "$out/bench.log"
    env ${envs/#-/} DIFFTEST_ITERS=10 timeout "${BENCH_S:-60}" "$dev/difftest_seq" --bench "$filt" > "$out/bench.tmp" 2>&1
    cat "$out/bench.tmp" >> "$out/bench.log"
    grep -E "^(PASS|FAIL) |TIME|GRAPH" "$out/bench.tmp" | sed -E 's/engines=.*//; s#bench/decode/paged/sdpa_fwd_bf16_##; s/ +median/ med/' |
        sed -E 's/\(min [^)]*\)//; s/B=[0-9]+ Hq=32 Hk=8 Sq=1 //' | cut -c1-200
done
rm -f "$out/bench.tmp"
if [ -z "${SKIP_PEER:-}" ]; then
    step peer
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-60}" python3 bench/sdpa_paged_peer.py > "$out/peer.log" 2>&1
    echo "peer rc=$?"
    grep -vE '"efficient"' "$out/peer.log" | cut -c1-220
fi
step done
