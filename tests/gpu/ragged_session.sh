#!/usr/bin/env bash
# ragged_session.sh DEV OUT — the device call of ragged (THD-packed) attention
# on the tensor-core engines (issue 14: sdpa_flash forward, sdpa_bwd_flash
# backward with seq_offsets_q/kv).  DEV is what tests/gpu/pack_dev.sh packs
# plus dt/difftest_seq.o and dt/diffharness.o compiled where the library was
# built (the commands are at the end of this header): the tester is linked
# here from objects only, so the call builds nothing and does not depend on
# the headers of the tree it runs in.
#  1. difftest_seq "ragged": the new sdpa_flash / sdpa_bwd_flash ragged cases
#     and sdpa_splitkv's ragged serving cases, against the CPU reference;
#  2. the ragged training-step bench (difftest_seq --bench bench/ragged): 8
#     packed sequences of mixed lengths (8192 tokens, Hq 16, D 128, bf16,
#     causal) against the dense step padded to 2048 with seq_len_q/kv
#     (compare the milliseconds);
#  3. regression: every other sdpa case of difftest_seq (dense sdpa_flash,
#     sdpa_bwd_flash, sdpa_flash_tf32, sdpa_naive, sdpa_bwd, the wgmma
#     engines, sdpa_splitkv: their shared header and parameter block changed);
#  4. compute-sanitizer memcheck on the --quick ragged cases (blocks that
#     exit past a sequence's end, loads bounded by the next sequence).
# Logs under OUT; a summary on stdout.  SKIP_NEW, SKIP_BENCH, SKIP_SWEEP,
# SKIP_SAN leave one out; NEW_S, BENCH_S, SWEEP_S, SAN_S are their time
# limits (the four fit one 600-second call).
# Packing DEV (on the build machine, tree at the commit to test):
#   tests/gpu/pack_dev.sh build-ragged2 build-ragged-dev
#   mkdir -p build-ragged-dev/dt && for f in difftest_seq diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o build-ragged-dev/dt/$f.o; done
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_seq || exit 1
dt=$dev/difftest_seq
if [ -z "${SKIP_NEW:-}" ]; then
    step "ragged difftests"
    timeout "${NEW_S:-90}" "$dt" ragged > "$out/ragged.log" 2>&1
    echo "difftest ragged rc=$?"
    grep -E "^FAIL" -A16 "$out/ragged.log" | cut -c1-600 | head -60
    grep -E "^(PASS|FAIL)" "$out/ragged.log" | sed 's/ (dry.*//' | cut -c1-200
    grep -E "passed," "$out/ragged.log"
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    step "ragged training-step bench"
    DIFFTEST_ITERS=${ITERS:-10} timeout "${BENCH_S:-130}" "$dt" --bench bench/ragged > "$out/bench.log" 2>&1
    echo "bench rc=$?"
    grep -E "^(PASS|FAIL)|TIME" "$out/bench.log" | sed 's/engines=.*//' | cut -c1-240
fi
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "sdpa regression sweep"
    timeout "${SWEEP_S:-240}" "$dt" sdpa > "$out/sdpa.log" 2>&1
    echo "difftest sdpa rc=$? (124: cut short by SWEEP_S; the cases listed ran)"
    grep -E "^FAIL" "$out/sdpa.log" | cut -c1-400 | head -30
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/sdpa.log") of $("$dt" --list sdpa | wc -l) sdpa cases"
    grep -E "passed," "$out/sdpa.log"
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "compute-sanitizer memcheck (--quick ragged)"
    timeout "${SAN_S:-90}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick ragged \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
fi
step done
