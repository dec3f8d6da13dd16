# dev_env.sh — sourced by a device-call script run as `SCRIPT DEV OUT` from
# the root of the tree whose library DEV holds (DEV: what tests/gpu/pack_dev.sh
# packs, plus dt/*.o, a tester's objects compiled where the library was
# built).  Sets dev, out (created), t0 and LD_LIBRARY_PATH / XDNN_CACHE_DIR,
# defines step (a heading with the seconds since t0) and dev_link_tester NAME
# (links DEV/NAME from DEV/dt/*.o and the unpacked library; 1 on failure, the
# log in OUT/link.log), dev_link_cli (DEV/xdnn from DEV/cli/*.o), and writes the device's name to OUT/device.txt.
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
cat "$dev/COMMIT" 2>/dev/null
# tl S: a step's timeout, S seconds or what is left before DEADLINE (seconds after t0; a script sets its default
# as DEADLINE=${DEADLINE:-N}) when less, at least 1.  counts LOG: the first failures and the PASS / FAIL counts.
tl() { local l=$((${DEADLINE:-150} - (SECONDS - t0))); if [ "$l" -lt "$1" ]; then echo $((l > 1 ? l : 1)); else echo "$1"; fi; }
counts() { grep -E "^FAIL" -A6 "$1" | cut -c1-300 | head -18; echo "$(grep -c "^PASS" "$1") passed, $(grep -c "^FAIL" "$1") failed"; }
dev_link_tester() {
    local cuda=/usr/local/cuda
    [ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
    gcc -o "$dev/$1" "$dev"/dt/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" \
        -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link.log" 2>&1
    [ -x "$dev/$1" ] || { echo "link failed"; tail -20 "$out/link.log"; return 1; }
}
dev_link_cli() {
    gcc -o "$dev/xdnn" "$dev"/cli/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L/usr/local/cuda/lib64 \
        -lcudart_static -lstdc++ -ldl -lpthread -lrt >> "$out/link.log" 2>&1 || { echo "CLI link failed"; return 1; }
}
# dev_build_testers NAME... — DEV/NAME for several testers: from DEV/dt/NAME.o and DEV/dt/diffharness.o when
# DEV has them (compiled where the library was built: a branch's tester sources, when this tree is another
# checkout), else compiled here from this tree's tests/gpu/NAME.c.  1 on failure, the log in OUT/link.log.
dev_build_testers() {
    local cuda=/usr/local/cuda t
    local L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
    local CF=(-std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$cuda/include")
    [ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
    [ -f "$dev/dt/diffharness.o" ] || gcc "${CF[@]}" -c tests/gpu/diffharness.c -o "$out/diffharness.o" >> "$out/link.log" 2>&1
    for t in "$@"; do
        if [ -f "$dev/dt/diffharness.o" ]; then
            gcc -o "$dev/$t" "$dev/dt/$t.o" "$dev/dt/diffharness.o" "${L[@]}" >> "$out/link.log" 2>&1
        else
            gcc "${CF[@]}" -o "$dev/$t" "tests/gpu/$t.c" "$out/diffharness.o" "${L[@]}" >> "$out/link.log" 2>&1
        fi || { echo "link of $t failed"; tail -20 "$out/link.log"; return 1; }
    done
}
# dev_bench_peer TESTER FILTER SET BENCH_S PEER_S — TESTER --bench FILTER into OUT/bench.log (BENCH_S seconds at
# most), then DEV/conv_peer.py SET (bench/conv_peer.py: the cuDNN side, same names) into OUT/peer.log (PEER_S);
# prints the rc of each, the count of ok rows and the first failures.
dev_bench_peer() {
    step "bench: $1 --bench $2"
    timeout "$4" "$1" --bench "$2" > "$out/bench.log" 2>&1; echo "rc=$?"
    grep -c "^BENCH.* ok " "$out/bench.log"; grep -E "^BENCH.*FAILED" "$out/bench.log" | cut -c1-200 | head -5
    step "peer: bench/conv_peer.py $3"
    PYTHONUNBUFFERED=1 timeout "$5" python3 "$dev/conv_peer.py" "$3" > "$out/peer.log" 2>&1
    echo "rc=$?"; head -1 "$out/peer.log"
}
# dev_step TAG LIMIT_S [VAR=VALUE...] [-- XDNN_RUN_ARGS...] — the ResNet-50 N = 256 training step through DEV/xdnn
# (dev_link_cli first) with the given environment, into OUT/step_TAG.json (and .err): `xdnn run --device gpu
# --format json` and the arguments (default --iters 10).
dev_step() {
    local tag=$1 lim=$2 env=() args=(--iters 10); shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=("$1"); shift; done
    [ "${1:-}" = -- ] && { shift; args=("$@"); }
    step "ResNet-50 step N=256 ($tag: ${env[*]})"
    env "${env[@]}" timeout "$lim" "$dev/xdnn" run --device gpu --format json "${args[@]}" \
        graphs/resnet50_train_step.dnn --set N=256 --set HW=224 --set WID=64 --set NCLS=1000 \
        > "$out/step_$tag.json" 2> "$out/step_$tag.err"
    echo "rc=$?"; tail -2 "$out/step_$tag.err"
}
# dev_tables SCRIPT — SCRIPT OUT's summary into OUT/summary.txt (printed), then every other file of OUT into
# OUT/logs.tgz (a call brings back at most 8 files).
dev_tables() {
    step "tables"
    python3 "$1" "$out" > "$out/summary.txt" 2>&1
    cat "$out/summary.txt"
    step done
    (cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
}
# dev_sweep TESTER SECONDS — the tester's full sweep (every case) within SECONDS, the log in OUT/sweep.log; the
# failures, how many cases ran of how many, and the tester's count on stdout.
dev_sweep() {
    timeout "$2" "$1" > "$out/sweep.log" 2>&1
    echo "rc=$? (124: cut short; the cases listed ran)"
    grep -E "^FAIL" "$out/sweep.log" | cut -c1-300 | head -20
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/sweep.log") of $("$1" --list | wc -l) cases"
    grep -E "passed," "$out/sweep.log"
}
# dev_memcheck TESTER FILTER SECONDS — compute-sanitizer memcheck on TESTER --quick FILTER (small shapes only), the
# log in OUT/memcheck_<FILTER with / as _>.log; its rc and error summary on stdout.
dev_memcheck() {
    local log="$out/memcheck_${2//\//_}.log"
    step "memcheck --quick $2"
    timeout "$3" compute-sanitizer --tool memcheck --print-limit 10 --error-exitcode 3 "$1" --quick "$2" > "$log" 2>&1
    echo "memcheck rc=$? (124: cut short, the cases listed ran)"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$log" | head -6
}
# dev_ab_table PEER ON OFF — one row per "BENCH name shape engine ms ok ..." line of ON (difftest --bench): its
# engine, the time in OFF (the same rows with an A/B switch set), in ON, off/on, the peer's (PEER: "PEER name shape
# ms" lines, conv_peer.py's), on/peer and ON's TF/s.  0 where a side is missing.
dev_ab_table() {
    awk -v P="$1" -v ON="$2" 'FILENAME == P {if (/^PEER/) p[$2" "$3] = $4; next}
         /^BENCH/ && $6 == "ok" {k = $2" "$3; if (FILENAME == ON) {on[k] = $5; eng[k] = $4; tf[k] = $14; ord[++n] = k}
                                  else off[k] = $5}
         END {printf "%-50s %-18s %8s %8s %6s %8s %6s %6s\n", "row", "engine", "off", "on", "off/on", "cuDNN",
                     "on/cuD", "TF/s";
              for (i = 1; i <= n; i++) {k = ord[i]; q = p[k]; b = off[k];
                  printf "%-50s %-18s %8.4f %8.4f %6.2f %8.4f %6.2f %6s\n", k, eng[k], b, on[k],
                         (on[k] > 0 && b > 0 ? b / on[k] : 0), q, (q > 0 ? on[k] / q : 0), tf[k]}}' "$1" "$2" "$3"
}

# dev_bench_runs TESTER RUNS — TESTER --bench for each "ENV=V,ENV=V|FILTER|TAG|SECONDS" of RUNS (';'-separated;
# ENV "-": none) into OUT/bench.log under "### TAG [ENV]" (DIFFTEST_ITERS=ITERS, default 10), the rc and the
# PASS / FAIL counts of each on stdout.
dev_bench_runs() {
    local r envs filt tag lim x runs
    IFS=';' read -ra runs <<< "$2"
    for r in "${runs[@]}"; do
        IFS='|' read -r envs filt tag lim <<< "$r"
        echo "--- $tag [$envs] $filt ($((SECONDS - t0)) s)"
        x=${envs/#-/} # "-": no variables (env - would empty the environment)
        env ${x//,/ } DIFFTEST_ITERS="${ITERS:-10}" timeout "${lim:-60}" "$1" --bench "$filt" > "$out/bench.tmp" 2>&1
        echo "rc=$? ok=$(grep -c '^PASS' "$out/bench.tmp") fail=$(grep -c '^FAIL' "$out/bench.tmp")"
        { echo "### $tag [$envs]"; cat "$out/bench.tmp"; } >> "$out/bench.log"
    done
    rm -f "$out/bench.tmp"
}
