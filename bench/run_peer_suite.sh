#!/usr/bin/env bash
# run_peer_suite.sh BUILD OUTDIR [peer.py suite options...]
#
# The H100 peer suite in one command, on the GPU machine: every case of
# bench/suite.txt through xdnn (`xdnn run --device gpu --iters --format json`,
# inputs and outputs saved) and through the PyTorch peer (bench/peer.py: the
# same graph rebuilt from xdnn's JSON form, on xdnn's saved inputs, outputs
# compared with xdnn's, timed with CUDA events), then the table (case, xdnn ms,
# peer ms, ratio, % of roofline) on stdout, in OUTDIR/RESULTS-section.md and
# appended to bench/RESULTS.md with the date, the device and the commit.
#
#   BUILD    a CUDA build folder holding xdnn (make BUILD=...)
#   OUTDIR   per-case logs (xdnn.json, xdnn.err, graph.json), suite.json
# Environment:
#   XDNN_COMMIT       the commit to record (the tree on the GPU machine may have
#                     no .git, or an older one; default: BUILD/COMMIT, written by
#                     tests/gpu/pack_dev.sh, else git rev-parse --short HEAD)
#   XDNN_CARRY_LIBS   folder with libraries the machine lacks (libcjson.so.1);
#                     added to LD_LIBRARY_PATH
#   SUITE_BUDGET_S    start no case after this many seconds (default 420)
# Extra arguments go to `peer.py suite`, e.g. --filter 'gemm|sdpa' --keep-data.
# Exit status: 0 when every case that ran agrees with its peer, 1 otherwise,
# 2 on usage errors.
set -u -o pipefail

if [ $# -lt 2 ]; then
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
build=$1
out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
xdnn=$(cd "$build" 2>/dev/null && pwd)/xdnn
if [ ! -x "$xdnn" ]; then
    echo "run_peer_suite.sh: no xdnn binary in '$build' (build it with make BUILD=$build)" >&2
    exit 2
fi
if [ -n "${XDNN_CARRY_LIBS:-}" ]; then
    export LD_LIBRARY_PATH="$XDNN_CARRY_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    echo "run_peer_suite.sh: python3 with torch (and a CUDA device) is needed for the peer" >&2
    exit 2
fi
if [ -z "${XDNN_COMMIT:-}" ] && [ -s "$build/COMMIT" ]; then
    XDNN_COMMIT=$(cat "$build/COMMIT"); export XDNN_COMMIT
fi
out=$(mkdir -p "$out" && cd "$out" && pwd) || exit 2
# graphs are named repo-relative in suite.txt
cd "$root" || exit 2
python3 "$here/peer.py" suite --xdnn "$xdnn" --out "$out" --suite "$here/suite.txt" \
    --results "$here/RESULTS.md" --budget-s "${SUITE_BUDGET_S:-420}" "$@"
