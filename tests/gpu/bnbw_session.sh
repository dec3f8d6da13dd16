#!/usr/bin/env bash
# bnbw_session.sh DEV OUT — the device call of the channels-last batchnorm
# kernels' bandwidth work (issue 12: kernels/norm_cl.cu variants v0 / v1,
# XDNN_NORM_CL_V; XDNN_NORM_CL_WAVES sizes the grid in waves; XDNN_NORM_CL_PDL=0
# launches the finalize and apply plainly).  A setting: v<variant>, then w2 for two
# waves, np for no dependent launches (v0np: the kernels before this work).  DEV is what
# tests/gpu/pack_dev.sh packs plus dt/difftest_norm.o and dt/diffharness.o
# compiled where the library was built; the CLI is linked here from DEV/cli.
#  1. (unless SKIP_CL) difftest_norm CL_FILTER (default batchnorm: batchnorm-cl/, net/ ...) and genstats/
#     against the CPU reference, for each variant in CHECK_V (default "1");
#  2. (unless SKIP_BENCH) difftest_norm --bench bench/batchnorm for each setting in
#     BENCH_AB (default "v0np v1np v1");
#  3. (SWEEP=1) the whole difftest_norm sweep; (SAN=1) compute-sanitizer memcheck on
#     the --quick batchnorm-cl cases;
#  4. (unless SKIP_STEP) the ResNet-50 N=256 training step for each setting in STEP_AB
#     (default "v1 v0np"): step time and norm_welford's partition sum.
# SWEEP_S, SAN_S, RUN_S are time limits; logs under OUT, a summary on stdout.
# Packing DEV: as in bnfuse_session.sh's header (the same tester objects), copying this script.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_norm || exit 1
dev_link_cli || exit 1
dt=$dev/difftest_norm
# the environment of a setting (see the header)
ab_env() {
    local w=1 p=1
    case $1 in *w2*) w=2 ;; esac
    case $1 in *np*) p=0 ;; esac
    echo "XDNN_NORM_CL_V=${1:1:1} XDNN_NORM_CL_WAVES=$w XDNN_NORM_CL_PDL=$p"
}
if [ -z "${SKIP_CL:-}" ]; then
    for v in ${CHECK_V:-1}; do
        step "batchnorm + genstats cases, v$v"
        XDNN_NORM_CL_V=$v timeout 40 "$dt" "${CL_FILTER:-batchnorm}" > "$out/cl_v$v.log" 2>&1
        echo "batchnorm rc=$?"; grep -E "^FAIL" -A8 "$out/cl_v$v.log" | cut -c1-300 | head -30
        grep -E "passed," "$out/cl_v$v.log"
        XDNN_NORM_CL_V=$v timeout 30 "$dt" genstats/ >> "$out/cl_v$v.log" 2>&1
        echo "genstats rc=$?"; grep -E "^FAIL|passed," "$out/cl_v$v.log" | tail -3 | cut -c1-300
    done
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    for ab in ${BENCH_AB:-v0np v1np v1}; do
        step "bench/batchnorm, $ab"
        env $(ab_env $ab) timeout 60 "$dt" --bench bench/batchnorm \
            > "$out/bench_$ab.log" 2>&1
        echo "rc=$?"
        grep -E "BENCH" "$out/bench_$ab.log" | sed -E 's/^ *BENCH bench\///; s/\| [^|]*$//' | cut -c1-160
    done
fi
if [ -n "${SWEEP:-}" ]; then
    step "difftest_norm sweep"
    timeout "${SWEEP_S:-60}" "$dt" > "$out/sweep.log" 2>&1
    echo "sweep rc=$?"; grep -E "^FAIL" -A8 "$out/sweep.log" | cut -c1-300 | head -30
    grep -E "passed," "$out/sweep.log"
fi
if [ -n "${SAN:-}" ]; then
    step "compute-sanitizer memcheck (--quick batchnorm-cl)"
    timeout "${SAN_S:-40}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick batchnorm-cl \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
fi
if [ -z "${SKIP_STEP:-}" ]; then
    for v in ${STEP_AB:-v1 v0np}; do
        step "resnet256 step, $v"
        env $(ab_env $v) timeout "${RUN_S:-75}" "$dev/xdnn" run --device gpu --format json --iters 10 --warmup 2 \
            graphs/resnet50_train_step.dnn --set N=256 --set HW=224 --set WID=64 --set NCLS=1000 \
            > "$out/run_$v.json" 2> "$out/run_$v.err"
        echo "rc=$? $(tail -2 "$out/run_$v.err")"
        # the step and norm_welford's partitions (their count, ms, GB/s)
        python3 -c 'import json, sys; g = json.load(open(sys.argv[1]))["gpu"]; n = [p for p in g["partitions"] if p["engine"] == "norm_welford"]; t = sum(p["ms_median"] for p in n); print("step %.3f ms; norm_welford: %d partitions %.3f ms %.0f GB/s" % (g["total_ms"], len(n), t, sum(p["bytes"] for p in n) / t / 1e6))' "$out/run_$v.json" 2>&1 | tail -2
    done
fi
step done
