#!/usr/bin/env bash
# regress.sh — a worked example of how a user's CI guards a graph with xdnn:
#
#   1. correctness: run each graph and compare its outputs with goldens saved
#      earlier (`xdnn run --expect DIR`; exit 6 on a mismatch);
#   2. performance: time the suite (`xdnn bench --batch`) and compare it with a
#      baseline run (`xdnn compare`; exit 6 when a case got slower).
#
# usage: tests/regress/regress.sh [--bless] [--device cpu|gpu]
#   --bless   (re)write the goldens and the timing baseline instead of checking
# Environment: XDNN (the binary, default build/xdnn), REGRESS_DIR (where goldens
# and baselines live, default tests/regress/out), THRESHOLD (percent, default 25).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
XDNN=${XDNN:-$root/build/xdnn}
DIR=${REGRESS_DIR:-$here/out}
THRESHOLD=${THRESHOLD:-25}
device=cpu
bless=0
while [ $# -gt 0 ]; do
    case $1 in
    --bless) bless=1 ;;
    --device) device=$2; shift ;;
    *) echo "usage: $0 [--bless] [--device cpu|gpu]" >&2; exit 1 ;;
    esac
    shift
done
mkdir -p "$DIR"

# graph | param overrides: the goldens to keep
goldens=(
    "$root/graphs/mlp_gelu.dnn|--set T=16 --set D=16"
    "$root/graphs/conv_bias_relu.dnn|--set N=1 --set C=4 --set K=4 --set H=8 --set W=8"
)
status=0
for g in "${goldens[@]}"; do
    file=${g%%|*}
    read -r -a sets <<< "${g#*|}"
    name=$(basename "$file" .dnn)
    if [ $bless = 1 ]; then
        "$XDNN" run "$file" "${sets[@]}" --device "$device" --save "$DIR/golden-$name" > /dev/null
        echo "blessed $DIR/golden-$name"
    elif ! "$XDNN" run "$file" "${sets[@]}" --device "$device" --expect "$DIR/golden-$name" > "$DIR/$name.log"; then
        echo "FAIL: $name differs from its goldens (see $DIR/$name.log)"
        status=6
    else
        echo "ok: $name matches its goldens"
    fi
done

# performance: the baseline is a bench run kept from an earlier (blessed) build
if [ $bless = 1 ]; then
    "$XDNN" bench --batch "$here/suite.txt" --device "$device" --iters 10 --format jsonl -o "$DIR/baseline.jsonl"
else
    "$XDNN" bench --batch "$here/suite.txt" --device "$device" --iters 10 --format jsonl -o "$DIR/current.jsonl"
    if ! "$XDNN" compare "$DIR/baseline.jsonl" "$DIR/current.jsonl" --threshold "$THRESHOLD"; then
        echo "FAIL: performance regression against $DIR/baseline.jsonl"
        status=6
    fi
fi
exit $status
