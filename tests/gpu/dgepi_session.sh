#!/usr/bin/env bash
# dgepi_session.sh DEV OUT — the device call of the fused dgrad + relu_bwd
# mask (partition.c fuse_dgrad_masks, conv_epi.cuh KEPI_RELU_BWD), sized for
# calls of <= 180 s.  DEV: tests/gpu/pack_dev.sh's folder plus dt/difftest_conv.o
# and dt/diffharness.o compiled where the library was built (nothing is built
# here but two links).  MODE=check (default):
#  1. difftest_conv "conv/dgrad": every dgrad case (the regression of the
#     phase lowering the epilogue now rides on) and the new
#     conv/dgrad+relu_bwd ones (odd N*H*W, C/K 8/24/136, 3x3 and 1x1,
#     stride 1 and 2, folded and launched zero phases, split-K, conv_igemm,
#     conv_direct, leaky/clipped, a dx read twice that must not fuse);
#  2. the fused forward epilogue regression ("fwd+epi", "-epi-");
#  3. compute-sanitizer memcheck on the --quick dgrad+relu_bwd cases;
#  4. the ResNet-50 N=256 training step, fused (RUN_S).
# MODE=ab: the step with XDNN_NO_DGRAD_EPI=1 (before) then fused (after), one
# process each, and the per-partition times of the dgrad / relu_bwd ones.
# MODE=all (one call for everything): the new cases, their memcheck, A/B,
# then conv/dgrad/ and --quick fwd+epi as the time limits allow.
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
R="graphs/resnet50_train_step.dnn --set N=256 --set HW=224 --set WID=64 --set NCLS=1000"
link_cli() {
    [ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
    gcc -o "$dev/xdnn" "$dev"/cli/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L/usr/local/cuda/lib64 \
        -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link_cli.log" 2>&1 || { tail "$out/link_cli.log"; return 1; }
}
# step time, plan time, and the dgrad / relu_bwd partitions' summed medians
summary() {
    python3 - "$1" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))['gpu']
ps = g['partitions']
def ms(p):
    for k in ('ms_median', 'ms', 'median_ms'):
        if k in p: return p[k]
    return 0.0
name = lambda p: p.get('name', '')
rb = [p for p in ps if ('/d1z' in name(p) or '/d2z' in name(p)) and '/d1+' not in name(p) and '/d2+' not in name(p)]
fused = [p for p in ps if '+' in name(p) and ('/d1z' in name(p) or '/d2z' in name(p))]
dg = [p for p in ps if name(p).endswith('/d1') or name(p).endswith('/d2')]
print('step %.3f ms, plan %.0f ms, %d partitions; relu_bwd d1z/d2z alone: %d, %.3f ms; dgrad d1/d2 alone: %d, '
      '%.3f ms; fused dgrad+relu_bwd: %d, %.3f ms' % (g['total_ms'], g.get('plan_ms', 0), len(ps), len(rb),
      sum(map(ms, rb)), len(dg), sum(map(ms, dg)), len(fused), sum(map(ms, fused))))
PY
}
run_step() { # TAG [ENV=...]
    local tag=$1; shift
    step "ResNet-50 N=256 step: $tag"
    env "$@" timeout "${RUN_S:-75}" "$dev/xdnn" run --device gpu --format json --iters 10 $R \
        > "$out/run_$tag.json" 2> "$out/run_$tag.err"
    echo "rc=$?"; tail -2 "$out/run_$tag.err" | cut -c1-200
    summary "$out/run_$tag.json" 2>&1 | tail -1
}
if [ "${MODE:-check}" = all ]; then # one call: the new cases, memcheck, A/B, then the regressions as time allows
    dev_link_tester difftest_conv || exit 1
    dt=$dev/difftest_conv
    step "difftest_conv dgrad+relu_bwd"
    timeout "${NEW_S:-20}" "$dt" dgrad+relu_bwd > "$out/dgrad.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL" -A14 "$out/dgrad.log" | cut -c1-300 | head -30; grep -E "passed," "$out/dgrad.log"
    step "memcheck --quick dgrad+relu_bwd"
    timeout "${SAN_S:-25}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick dgrad+relu_bwd \
        > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    link_cli || exit 1
    run_step before XDNN_NO_DGRAD_EPI=1
    run_step after XDNN_NO_DGRAD_EPI=0
    step "regressions: conv/dgrad/ and the forward epilogues"
    { timeout "${EPI_S:-15}" "$dt" --quick fwd+epi; timeout "${SWEEP_S:-30}" "$dt" conv/dgrad/; } > "$out/regr.log" 2>&1
    echo "rc=$? (124: cut short)"; grep -E "^FAIL" -A8 "$out/regr.log" | cut -c1-300 | head -24
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/regr.log") of $("$dt" --list conv/dgrad/ | wc -l) dgrad +" \
        "$("$dt" --list --quick fwd+epi | wc -l) fwd+epi"; grep -E "passed," "$out/regr.log"
elif [ "${MODE:-check}" = check ]; then
    dev_link_tester difftest_conv || exit 1
    dt=$dev/difftest_conv
    step "difftest_conv conv/dgrad (new: conv/dgrad+relu_bwd)"
    timeout "${SWEEP_S:-60}" "$dt" conv/dgrad > "$out/dgrad.log" 2>&1
    echo "rc=$? (124: cut short)"
    grep -E "^FAIL" -A14 "$out/dgrad.log" | cut -c1-300 | head -40
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/dgrad.log") of $("$dt" --list conv/dgrad | wc -l);" \
        "dgrad+relu_bwd: $(grep -E '^PASS' "$out/dgrad.log" | grep -c relu_bwd) passed," \
        "$(grep -E '^FAIL' "$out/dgrad.log" | grep -c relu_bwd) failed"
    grep -E "passed," "$out/dgrad.log"
    step "fused forward epilogue regression"
    { timeout "${EPI_S:-35}" "$dt" fwd+epi; timeout 15 "$dt" -epi-; } > "$out/fwdepi.log" 2>&1
    echo "rc=$?"; grep -E "^FAIL" -A6 "$out/fwdepi.log" | cut -c1-300 | head -20; grep -E "passed," "$out/fwdepi.log"
    step "memcheck --quick dgrad+relu_bwd"
    timeout "${SAN_S:-40}" compute-sanitizer --tool memcheck --print-limit 10 "$dt" --quick dgrad+relu_bwd \
        > "$out/memcheck.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -8
    if [ -z "${SKIP_RUN:-}" ]; then
        link_cli || exit 1
        run_step after
    fi
else
    link_cli || exit 1
    run_step before XDNN_NO_DGRAD_EPI=1
    run_step after XDNN_NO_DGRAD_EPI=0
fi
# at most 8 files come back from a call: the links' and runs' stderr (their tails printed above) stay behind
rm -f "$out/link.log" "$out/link_cli.log" "$out"/run_*.err
step done
