#!/usr/bin/env bash
# bnfast_session.sh DEV OUT — the device call of the persistent channels-last
# batchnorm (issue 12, kernels/norm_cl1.cu; XDNN_NORM_CL1=0 the three launches of
# norm_cl.cu, =all the persistent launch at every size).  DEV is what
# tests/gpu/pack_dev.sh packs plus dt/difftest_norm.o and dt/diffharness.o compiled
# where the library was built, this script, dev_env.sh, bench/bn_peer.py and
# bench/norm_torch.py.  Steps, each cut to what is left of LIMIT_S (default 185 s):
#  1. difftest_norm for each filter in CHECK (default "batchnorm genstats/": batchnorm-cl/,
#     batchnorm-cl1/, the three-launch/ and cl1-held0/3 reruns, fuse/ and net/ batchnorms;
#     "all": the whole sweep, "none": nothing);
#  2. (STEP=1) the ResNet-50 N=256 training step for each setting in STEP_AB (default
#     "def 0"): step time and the partitions' times by engine;
#  3. (unless SKIP_BENCH) difftest_norm --bench for each filter in BENCH_F (default
#     bench/rn50: ResNet-50 N=256's shapes, forward + relu and backward; the inputs'
#     fill on the CPU takes ~10 s a 100 M elements) and each setting in BENCH_AB
#     (default "0 all": XDNN_NORM_CL1's value; "def" = unset);
#  4. (unless SKIP_PEER) bench/bn_peer.py --resnet (PyTorch, the same shapes);
#  5. (unless SKIP_SAN) compute-sanitizer memcheck on --quick batchnorm-cl1/ (held whole, at
#     and past a limit) and cl1-held3/batchnorm-cl/ (3 rows held a block).
# Logs under OUT, a summary on stdout.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_norm || exit 1
dt=$dev/difftest_norm
limit=${LIMIT_S:-185}
left() { local l=$((limit - (SECONDS - t0))); [ "$l" -lt 1 ] && l=1; [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
setting() { [ "$1" = def ] && echo "XDNN_NORM_CL1_UNSET=1" || echo "XDNN_NORM_CL1=$1"; }
for f in ${CHECK:-batchnorm genstats/}; do
    [ "$f" = none ] && continue
    step "difftest_norm $f"
    timeout "$(left 90)" "$dt" $([ "$f" = all ] || echo "$f") > "$out/check_${f//\//}.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL" -A8 "$out/check_${f//\//}.log" | cut -c1-300 | head -30
    grep -E "passed," "$out/check_${f//\//}.log"
done
if [ -n "${STEP:-}" ]; then
    dev_link_cli || exit 1
    for v in ${STEP_AB:-def 0}; do
        step "resnet256 step, XDNN_NORM_CL1=$v"
        env $(setting $v) timeout "$(left 75)" "$dev/xdnn" run --device gpu --format json --iters 10 --warmup 2 \
            graphs/resnet50_train_step.dnn --set N=256 --set HW=224 --set WID=64 --set NCLS=1000 \
            > "$out/run_$v.json" 2> "$out/run_$v.err"
        echo "rc=$? $(tail -2 "$out/run_$v.err")"
        python3 tests/gpu/step_by_engine.py "$out/run_$v.json" 2>&1 | tail -2
    done
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    for f in ${BENCH_F:-bench/rn50}; do
        for ab in ${BENCH_AB:-0 all}; do
            step "$f, XDNN_NORM_CL1=$ab"
            env $(setting $ab) timeout "$(left 50)" "$dt" --bench "$f" >> "$out/bench_$ab.log" 2>&1
            echo "rc=$?"
            grep -E "BENCH $f" "$out/bench_$ab.log" | sed -E 's/^ *BENCH bench\/rn50\/bf16\///; s/\| [^|]*\| median/| median/' |
                cut -c1-150
        done
    done
fi
if [ -z "${SKIP_PEER:-}" ]; then
    step "PyTorch peer (bn_peer.py --resnet)"
    (cd "$dev" && PYTHONUNBUFFERED=1 timeout "$(left 50)" python3 bn_peer.py --resnet) > "$out/peer.log" 2>&1
    echo "rc=$?"; cut -c1-120 "$out/peer.log"
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "compute-sanitizer memcheck (batchnorm-cl1/, --quick cl1-held3/batchnorm-cl/)"
    for f in batchnorm-cl1/ cl1-held3/batchnorm-cl/; do
        timeout "$(left 40)" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick "$f" \
            >> "$out/memcheck.log" 2>&1
        echo "memcheck $f rc=$?"
    done
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
fi
step done
