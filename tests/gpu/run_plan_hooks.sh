#!/usr/bin/env bash
# run_plan_hooks.sh XDNN — the GPU side of plans and --tune (src/gpu/plan_hooks.c)
# on a real device, through the CLI: the device fingerprint in a plan, --tune
# timing every engine x knob variant, "PART=ENGINE:KNOBS" forcing (and its
# errors), a plan carrying its NVRTC modules and `xdnn run PLAN` loading them
# (nothing compiled), and bench reporting p90 on the GPU.  One line per check,
# then "N passed, N failed"; exit 1 when one failed.
set -u -o pipefail
xdnn=${1:?usage: run_plan_hooks.sh XDNN}
tmp=$(mktemp -d)
export XDNN_CACHE_DIR=$tmp/cache   # a cold kernel cache: the plan must carry what it compiled
pass=0 fail=0
check() { # NAME CONDITION-COMMAND...
    local name=$1; shift
    if "$@" >/dev/null 2>&1; then echo "PASS $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
has() { grep -qE -- "$2" "$1"; }
g=graphs/mlp_gelu.dnn

"$xdnn" plan "$g" --device gpu --tune -o "$tmp/t.xplan" > "$tmp/tune.out" 2>&1
rc=$?
head -60 "$tmp/tune.out"
check "plan --tune exits 0" test $rc -eq 0
check "tune ranks matmul algo variants" has "$tmp/tune.out" "matmul_cublaslt:algo=[0-9]"
check "tune ranks pointwise block variants" has "$tmp/tune.out" "pointwise_nvrtc:block=(64|128|256)"
"$xdnn" plan --info "$tmp/t.xplan" > "$tmp/info.out" 2>&1
cat "$tmp/info.out" | head -40
check "plan carries the device fingerprint" has "$tmp/info.out" "gpu; name=.*; sm=[0-9]+; cc=[0-9]+\.[0-9]+; driver=[0-9]+"
check "plan carries compiled modules" has "$tmp/info.out" "[0-9a-f]{16}\.(cubin|ptx)"

# a fresh process with an empty kernel cache: everything comes from the plan
export XDNN_CACHE_DIR=$tmp/cache2
"$xdnn" run "$tmp/t.xplan" --device gpu -v > "$tmp/run.out" 2>&1
rc=$?
grep -E "compiled|plan|engine|loaded" "$tmp/run.out" | head -20
check "run PLAN exits 0" test $rc -eq 0
check "run PLAN compiles nothing" has "$tmp/run.out" "gpu: 0 kernels compiled"

# forcing knobs by hand
"$xdnn" run "$g" --device gpu --engine "matmul=matmul_cublaslt:algo=1" -v > "$tmp/k1.out" 2>&1
rc=$?
check "--engine OP=ENGINE:algo=1 runs" test $rc -eq 0
check "-v shows the forced knob" has "$tmp/k1.out" "chosen +matmul_cublaslt:algo=1"
"$xdnn" run "$g" --device gpu --engine "matmul=matmul_cublaslt:tile=1" > /dev/null 2> "$tmp/k2.err"
rc=$?
cat "$tmp/k2.err"
check "an unknown knob is a usage error (exit 1)" test $rc -eq 1
check "  ... naming the knob text" has "$tmp/k2.err" "'tile=1'"

# bench on the GPU reports p90
"$xdnn" bench "$g" --device gpu --iters 10 --format jsonl --no-progress > "$tmp/b.jsonl" 2> "$tmp/b.err"
rc=$?
head -3 "$tmp/b.jsonl"
check "bench --device gpu exits 0" test $rc -eq 0
check "bench reports a GPU p90" has "$tmp/b.jsonl" '"p90_ms": *[0-9]'
"$xdnn" bench "$g" --device gpu --engine all --iters 5 --no-progress > "$tmp/all.out" 2>&1
rc=$?
tail -12 "$tmp/all.out"
check "bench --engine all exits 0" test $rc -eq 0

echo "$pass passed, $fail failed"
rm -rf "$tmp"
[ $fail -eq 0 ]
