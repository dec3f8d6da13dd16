#!/usr/bin/env bash
# decode10_session.sh DEV OUT — session 10's sdpa_splitkv device call (issue 10; bench/RESULTS-sdpa.md
# 2026-11-24 session 10).  DEV: tests/gpu/pack_dev.sh's folder plus dt/difftest_seq.o, dt/diffharness.o,
# dev_env.sh, decode10_tables.py and sdpa_decode_peer.py.
#  1. sweep: difftest_seq FILTER for each "ENV=V,ENV=V|FILTER|ARGS" of SWEEPS (';'-separated; ENV "-": none);
#  2. compute-sanitizer memcheck on --quick SAN_FILTER (SAN_FILTER empty: skipped);
#  3. bench: each "ENV=V,ENV=V|FILTER|TAG|SECONDS" of BENCH_RUNS into OUT/bench.log under "### TAG [ENV]"
#     (difftest_seq --bench, ITERS timed CUDA-graph replays; one file: a call brings back 8);
#  4. the PyTorch peer (sdpa_decode_peer.py table) into OUT/peer.log (SKIP_PEER);
#  5. decode10_tables.py: the table beside the peer into OUT/summary.txt, the rest tarred.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh" # dev, out, step, dev_link_tester, dev_tables
dev_link_tester difftest_seq || exit 1
T=$dev/difftest_seq
step sweep
IFS=';' read -ra sweeps <<< "${SWEEPS:--|odd-|}"
for r in "${sweeps[@]}"; do
    IFS='|' read -r envs filt args <<< "$r"
    x=${envs/#-/} # "-": no variables (env - would empty the environment)
    env ${x//,/ } timeout "${SWEEP_S:-30}" "$T" $args "$filt" > "$out/sweep.tmp" 2>&1
    echo "difftest [$envs] $args $filt rc=$? $(grep -E 'passed,' "$out/sweep.tmp")"
    grep -E "^FAIL" "$out/sweep.tmp" | cut -c1-300 | head -8
    { echo "=== [$envs] $args $filt"; cat "$out/sweep.tmp"; } >> "$out/sweep.log"
done
rm -f "$out/sweep.tmp"
if [ -n "${SAN_FILTER:-}" ]; then
    step sanitizer
    timeout "${SAN_S:-40}" compute-sanitizer --tool memcheck --print-limit 10 "$T" --quick "$SAN_FILTER" \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|passed,' "$out/memcheck.log" | tr '\n' ' ')"
fi
step bench
dev_bench_runs "$T" "${BENCH_RUNS:--|bench/decode/table/|main|60}"
if [ -z "${SKIP_PEER:-}" ]; then
    step peer
    PYTHONUNBUFFERED=1 timeout "${PEER_S:-50}" python3 "$dev/sdpa_decode_peer.py" table > "$out/peer.log" 2>&1
    echo "peer rc=$? $(grep -c ms_graph1 "$out/peer.log") rows"
fi
dev_tables "$dev/decode10_tables.py"
