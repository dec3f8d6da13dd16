#!/usr/bin/env bash
# Session 13: run on the H100 and made the default; "off" below is now the switch set to 0 (the runs pass =1 / =0
# explicitly, so the script measures the same A/B as in its first call).
# smbwd_session.sh DEV OUT — the first device call of session 12's "smbwd" (issue 12), prepared on the CPU (the
# session had no GPU time left): softmax_bwd / log_softmax_bwd on the warp rows (kernels/softmax_warp_bwd.cu: a
# warp or a few per row, y and dy read once into registers, one reduction a row, dx written once), behind
# XDNN_SOFTMAX_BWD_ROWS=1 (off by default: norm.cu's split reduce -> finalize -> apply).  DEV:
# tests/gpu/pack_dev.sh's folder plus dt/difftest_norm.o and dt/diffharness.o compiled where the library was built,
# this script, bench/mem_peer.py, bench/norm_torch.py and tests/gpu/pool12_tables.py copied in.  Run from the root
# of the tree: `bash DEV/smbwd_session.sh DEV OUT` (or tests/gpu/smbwd_session.sh).
# PART=1 (the first call, ~150 s; BUDGET_S, default 155):
#  1. difftest_norm smbwd/ (the new cases: widths 1 / 7 / 31 / 768 / 4096 / 4097 / 8192 / 8193, rows 1 / 3 / 1001,
#     f32 / f16 / bf16, softmax_bwd and log_softmax_bwd, padded rows, unmerged outer dims, axis 0: switch on;
#     smbwd/switch-off/: 1001 rows of 7 / 768 / 4096 / 8192 with XDNN_SOFTMAX_BWD_ROWS=0, the default path);
#     then the sweep's softmax_bwd/ cases with the switch on;
#  2. compute-sanitizer memcheck on --quick smbwd/;
#  3. bench: difftest_norm --bench softmax_bwd/ (bench/s12/: softmax_bwd and log_softmax_bwd bf16 8192 x 8192,
#     softmax_bwd bf16 32768 x 1024, log_softmax_bwd f32 8192 x 4096) with the switch on, then off (the A/B);
#  4. the PyTorch peer of the same rows: bench/mem_peer.py --filter softmax_bwd (eager, copy_, torch.compile);
#  5. with time left: the bench on again (the drift), ncu (--clock-control none) of one k_warp_softmax_bwd launch
#     (bf16 8192 x 8192), the whole difftest_norm sweep with the switch on (a cut-short run lists what ran);
#  6. the table (summary.txt: tests/gpu/pool12_tables.py, the xdnn rows with the switch on beside the peer, then
#     the A/B against the default path, "old" = off), then the correctness counts.
# DRY=1 TESTER=path: the script's own check without a GPU (--dry: CPU reference and plans; no bench, ncu or torch).
#
# EXPECTED (written before the first call).  softmax_bwd bf16 8192 x 8192 moves 3 x 134 MB (y, dy read, dx
# written: a floor of 0.135 ms at 2976 GB/s); the split path reads y and dy twice in three launches: 0.569 ms = 24 %
# of copy (session 12's pool table), 2.03x eager (0.280 ms) / 3.28x torch.compile (0.173 ms); log_softmax_bwd
# 0.601 ms, 23 %, 4.22x eager (0.142 ms: aten's kernel at ~95 % of copy) / 2.96x compile (0.203 ms).  The warp
# rows read each byte once with 16-byte loads, 8 warps a row of 4 chunks (64 registers: 4 blocks, 32 warps an SM,
# 8 loads of 16 bytes in flight a thread before the row's one reduction), the forward softmax's v1 shape (91-92 %
# of copy) with three streams instead of two: ~80-90 % of copy = 0.15-0.17 ms, 3.3-3.8x faster than the split
# path; softmax_bwd ~0.55-0.6x eager and ~0.9-1.0x torch.compile; log_softmax_bwd (an expf a element: issue
# slots, not bandwidth) ~1.05-1.2x eager (behind aten's by 5-20 %) and ~0.75-0.85x compile.  bf16 32768 x 1024
# (2 warps a row, 4 rows a block) ~75-85 %; f32 8192 x 4096 log_softmax_bwd (8 warps of 4 chunks) ~80-90 %.
# Correctness: every smbwd/ case passes (the split path's tolerances: f32 math, dx rounded once), memcheck 0
# errors, the full sweep with the switch on as without (1181 cases, --dry here).
set -uo pipefail
dev=${1:?DEV}; out0=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out0"
out=$out0
dry=${DRY:+--dry}
part=${PART:-1}
budget=${BUDGET_S:-155}
left() { echo $(( budget - (SECONDS - t0) )); }
if [ -n "$dry" ]; then t=${TESTER:?DRY=1 needs TESTER=path of a difftest_norm built here}
else step link; dev_build_testers difftest_norm || exit 1; t=$dev/difftest_norm; fi
# the failures and the counts of a log (a run cut short prints no count of its own)
counts() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -24; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
run_family() { # run_family TAG FILTER LIMIT_S [--quick]
    step "difftest_norm $2 ${4:-} ${SW:-}"
    env ${SW:-} timeout "$3" "$t" $dry ${4:-} "$2" > "$out/$1.log" 2>&1; echo "rc=$? (124: cut short)"; counts "$out/$1.log"
}
bench_run() { # bench_run TAG ENV LIMIT_S LOG: the four softmax_bwd rows of bench/s12/ in one process
    [ "$(left)" -gt $(( $3 + 10 )) ] || { echo "out of time before bench $1"; return 1; }
    step "bench $1 [$2]"
    env ${2/#-/} timeout "$3" "$t" --bench softmax_bwd/ > "$out/$4" 2>&1
    echo "rc=$? ok=$(grep -c '^PASS' "$out/$4") fail=$(grep -c '^FAIL' "$out/$4")"; grep -oE "^ *BENCH [^|]+\| [^|]+\| [^|]+\| median [0-9.]+" "$out/$4"
}

if [ "$part" = 1 ]; then
    run_family smbwd smbwd/ "${SMBWD_S:-60}"
    SW=XDNN_SOFTMAX_BWD_ROWS=1 run_family family softmax_bwd/ 15 # the sweep's softmax_bwd cases on the rows
    if [ -z "$dry" ]; then
        step "memcheck --quick smbwd/"
        timeout "${SAN_S:-25}" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$t" --quick smbwd/ \
            > "$out/memcheck.log" 2>&1
        echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -6
        # on, off (the default path: the A/B); the peer; on again (the drift) only with time left
        bench_run on XDNN_SOFTMAX_BWD_ROWS=1 30 bench_1on.log
        bench_run off XDNN_SOFTMAX_BWD_ROWS=0 30 ab_XDNN_SOFTMAX_BWD_ROWS=0.log
        step "PyTorch: mem_peer.py --filter softmax_bwd (eager, copy_, torch.compile)"
        PYTHONUNBUFFERED=1 timeout "${PEER_S:-40}" python3 "$dev/mem_peer.py" --filter softmax_bwd --compile-budget-s 20 \
            > "$out/peer.log" 2> "$out/peer.err"
        echo "rc=$?"; grep -c '"id"' "$out/peer.log"; tail -2 "$out/peer.err" | cut -c1-200
        bench_run on2 XDNN_SOFTMAX_BWD_ROWS=1 30 bench_2on.log
        if [ "$(left)" -gt 25 ] && command -v ncu > /dev/null; then
            step "ncu k_warp_softmax_bwd (softmax_bwd bf16 8192 x 8192)"
            XDNN_SOFTMAX_BWD_ROWS=1 timeout 20 ncu --clock-control none -k regex:k_warp_softmax_bwd -s 3 -c 1 \
                --section SpeedOfLight --section Occupancy --section LaunchStats "$t" --bench bench/s12/softmax_bwd/bf16/8192 \
                > "$out/ncu.txt" 2>&1
            echo "rc=$?"; grep -E "^\s*(Duration|DRAM Throughput|Registers Per Thread|Achieved Occupancy|Grid Size)\s" \
                "$out/ncu.txt" | head -6
        fi
    else
        run_family smbwd_quick smbwd/ 30 --quick
    fi
    # the rest of the norm family with the switch on, in what is left (a cut-short run lists what ran)
    [ "$(left)" -gt 20 ] && SW=XDNN_SOFTMAX_BWD_ROWS=1 run_family sweep "" "$(( $(left) - 8 ))"
fi

# the table: pool12_tables.py (xdnn rows from bench_*.log, the last "on" run's; the peer's; the A/B from
# ab_*.log, "old" = the default path), the correctness counts after it
counts_all() {
    local n l
    for n in smbwd family smbwd_quick sweep memcheck; do
        l=$out/$n.log; [ -f "$l" ] || continue
        echo "$n: $(grep -c '^PASS' "$l") passed ($(grep -cE '^PASS smbwd/(rows|padded|strided)' "$l") with the switch set), $(grep -c '^FAIL' "$l") failed $(grep -oE 'ERROR SUMMARY: [0-9]+' "$l" | tail -1)"
    done
    grep -hE '^\s*(Duration|DRAM Throughput|Registers Per Thread|Achieved Occupancy)\s' "$out/ncu.txt" 2>/dev/null | sed 's/^ */ncu /'
}
verdict=$(counts_all) # before dev_tables packs the logs away
tables=$dev/pool12_tables.py; [ -f "$tables" ] || tables=tests/gpu/pool12_tables.py
dev_tables "$tables"
{ echo "(the A/B's old = XDNN_SOFTMAX_BWD_ROWS=0, the default split path; new = the switch on)"
  echo "== correctness"; echo "$verdict"; } | tee -a "$out/summary.txt"
