#!/usr/bin/env bash
# prefill_session.sh DEV OUT — session 11's sdpa_flash_wgmma v10 device calls (issue 10: chunked prefill with
# few query rows; bench/RESULTS-sdpa.md 2026-11-24 session 11).  DEV: tests/gpu/pack_dev.sh's folder plus
# dt/difftest_seq.o, dt/diffharness.o, prefill_tables.py, sdpa_decode_peer.py and sdpa_peer.py.
#
# EXPECTED (written before the first call): v10 packs a GQA group's heads into one 128-row tile (K/V streamed
# once per group, not once per q head) and splits the keys over blocks up to the 132 SMs, combined by
# sdpa_splitkv's pass.  Sq 64, 32/8, causal bottom-right, b1: Skv 4k 73 -> ~30 us (16 packed items x 8 key
# shares of 4 tiles: ~4 x 1.7 us + ~4 us per item + the combine), Skv 32k 514 -> ~140 us or better (134 MB of
# K/V once at ~2.5 TB/s = 54 us; 34 GFLOP at ~500 TFLOP/s = 68 us).  MHA 32/32 Sq 64: 70 -> ~35 us at 4k,
# 511 -> ~200 us at 32k (memory-bound: 537 MB at ~2.7 TB/s); Sq 256 at or under its 62-441 us (K/V once per
# group).  Decode (Sq 1) and speculative (Sq 4) rows forced onto sdpa_flash_wgmma: about sdpa_splitkv's time
# (memory-bound, 31/32 of the tile's rows padding).  The large row b4h16s4096d128 (2048 items: v10 not taken)
# unchanged: 0.90 ms no mask, 0.50 causal (session 10).
#
# PART=splitkv (call 2): every sdpa_splitkv case, memcheck on --quick sdpa_splitkv/odd-.
# PART=check: difftest_seq pack- in full (default, then --quick with XDNN_SDPA_WGMMA_SPLITS=1 and with
#   XDNN_SDPA_WGMMA_PACK=0), every sdpa forward case ("sdpa/"), compute-sanitizer memcheck on --quick pack-.
# PART=bench: the decode table's chunk / dec / spec rows (both engines) with the v10 A/B (PACK=0, SPLITS=1) on
#   the chunk rows, the large prefill row, then the peers (sdpa_decode_peer.py table; sdpa_peer.py on the large
#   row); prefill_tables.py makes the summary.  PART=all: both.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh" # dev, out, step, dev_link_tester, dev_tables
dev_link_tester difftest_seq || exit 1
T=$dev/difftest_seq
PART=${PART:-all}
sweep() { # ENVS|FILTER|ARGS|SECONDS
    IFS='|' read -r envs filt args lim <<< "$1"
    x=${envs/#-/}
    env ${x//,/ } timeout "${lim:-30}" "$T" $args "$filt" > "$out/sweep.tmp" 2>&1
    echo "difftest [$envs] $args $filt rc=$? $(grep -E 'passed,' "$out/sweep.tmp")"
    grep -E "^FAIL" "$out/sweep.tmp" | cut -c1-300 | head -8
    { echo "=== [$envs] $args $filt"; cat "$out/sweep.tmp"; } >> "$out/sweep.log"
}
if [ "$PART" = check ] || [ "$PART" = all ]; then
    step check
    sweep "-|/pack-||${PACK_S:-35}"
    sweep "XDNN_SDPA_WGMMA_SPLITS=1|/pack-|--quick|12"
    sweep "XDNN_SDPA_WGMMA_PACK=0|/pack-|--quick|12"
    if [ "${FWD_S:-40}" != 0 ]; then # the forward engines this change touches, every older case
        sweep "-|sdpa/sdpa_flash_wgmma/||${FWD_S:-40}"
        sweep "-|sdpa/sdpa_splitkv/||15"
    fi
    rm -f "$out/sweep.tmp"
    step sanitizer
    timeout "${SAN_S:-30}" compute-sanitizer --tool memcheck --print-limit 10 "$T" --quick /pack- \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|passed,' "$out/memcheck.log" | tr '\n' ' ')"
fi
if [ "$PART" = splitkv ]; then # call 2: the sdpa_splitkv cases call 1's 15 s left (its combine pass refactored)
    step splitkv
    sweep "-|sdpa/sdpa_splitkv/||45"
    rm -f "$out/sweep.tmp"
    step sanitizer
    timeout 30 compute-sanitizer --tool memcheck --print-limit 10 "$T" --quick sdpa_splitkv/odd- > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|passed,' "$out/memcheck.log" | tr '\n' ' ')"
fi
if [ "$PART" = bench ] || [ "$PART" = all ]; then
    step bench
    dev_bench_runs "$T" "${BENCH_RUNS:--|bench/decode/table/chunk/|chunk|25;-|bench/decode/table/dec|dec|35;-|bench/decode/table/spec/|spec|12;XDNN_SDPA_WGMMA_PACK=0|table/chunk/sdpa_flash_wgmma|chunk PACK=0 (v9)|10;XDNN_SDPA_WGMMA_SPLITS=1|table/chunk/sdpa_flash_wgmma|chunk SPLITS=1 (packing alone)|10;-|wgmma/sdpa_fwd_bf16/b4h16k16s4096d128|large|15;-|wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d128|large causal|15}"
    if [ -z "${SKIP_PEER:-}" ]; then
        step peer
        PYTHONUNBUFFERED=1 timeout "${PEER_S:-50}" python3 "$dev/sdpa_decode_peer.py" table > "$out/peer.log" 2>&1
        echo "peer rc=$? $(grep -c ms_graph1 "$out/peer.log") rows"
        SDPA_PEER_SHAPES=b4h16k16s4096d128 SDPA_PEER_FWD_ONLY=1 PYTHONUNBUFFERED=1 timeout 20 \
            python3 "$dev/sdpa_peer.py" > "$out/peer_large.log" 2>&1
        echo "peer large rc=$?"
    fi
fi
dev_tables "$dev/prefill_tables.py"
