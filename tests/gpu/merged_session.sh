#!/usr/bin/env bash
# merged_session.sh DEV OUT — the device call after several branches merged into main: final_session.sh's
# checks (GPU unit tests, plan API, every differential tester's --quick sweep, `xdnn run --check` on every
# shipped graph; no peer suite), then the full sweeps of the families the merges touched (FAMILIES, default
# "seq:sdpa conv:conv/ norm: quant:"), each with its own time limit (FULL_S).  Logs under OUT.
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }
SKIP_SUITE=1 tests/gpu/final_session.sh "$dev" "$out/final" 2>&1 | tail -45
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
for f in ${FAMILIES:-seq:sdpa conv:conv/ norm: quant:}; do
    fam=${f%%:*}; filter=${f#*:}
    step "full difftest_$fam $filter"
    timeout "${FULL_S:-120}" "$dev/difftest_$fam" $filter > "$out/full_$fam.log" 2>&1
    echo "rc=$? (124: cut short; the cases listed ran)"
    grep -E "^FAIL" "$out/full_$fam.log" | cut -c1-300 | head -12
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/full_$fam.log") cases"; grep -E "passed," "$out/full_$fam.log"
done
step done
