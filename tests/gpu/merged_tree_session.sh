#!/usr/bin/env bash
# merged_tree_session.sh DEV OUT — the lead's calls on a merged tree (DEV packed by tests/gpu/pack_dev.sh with
# DEV/dt/*.o; sessions 10 and 11), picked by PART:
#   check: the GPU unit tests; the full sweep of difftest_conv's conv/ family, the --quick sweeps of difftest_seq
#          sdpa and difftest_norm, then the session's own cases in full (CONV_FILTERS, SEQ_FILTERS, NORM_FILTERS,
#          CORE_FILTERS: space-separated filters of difftest_conv, difftest_seq, difftest_norm and difftest, e.g. the new branches' case
#          prefixes), and `xdnn run --check` on every shipped graph; each with its own limit;
#   net:   network_dev.sh (ResNet-50 N=256 and the Llama block beside PyTorch eager and torch.compile), then the
#          ResNet step under each A/B switch of the session's new defaults (AB: space-separated VAR=VALUE).
# Everything lands in OUT/logs.tgz but summary.txt (a call brings back at most 8 files).
set -uo pipefail
source "$(dirname "$0")/dev_env.sh" "$@" > /dev/null
[ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
cuda=/usr/local/cuda
L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
CF=(-std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$dev/gen" -I"$cuda/include")
sum=$out/summary.txt
say() { echo "$*" | tee -a "$sum"; }
# run TAG LIMIT CMD... — CMD into OUT/TAG.log within LIMIT seconds; its rc, failures and pass count summarized
run() {
    local tag=$1 lim=$2; shift 2
    say "== $tag ($((SECONDS - t0)) s)"
    timeout "$lim" "$@" > "$out/$tag.log" 2>&1
    say "rc=$? (124: cut short)"
    grep -E "^FAIL|FAILED" "$out/$tag.log" | cut -c1-240 | head -8 | tee -a "$sum"
    say "ran $(grep -cE '^(PASS|FAIL)' "$out/$tag.log"); $(grep -E 'passed,' "$out/$tag.log" | tail -1)"
}
case ${PART:-check} in
check)
    dev_build_testers difftest difftest_conv difftest_seq difftest_norm || exit 1
    dev_link_cli || exit 1
    mkdir -p "$dev/tests"
    unit_lib=$(ls tests/unit/*.c | grep -v '/test_')
    for t in tests/unit/test_gpu_*.c tests/unit/test_plan_exec.c; do
        gcc "${CF[@]}" -fopenmp -o "$dev/tests/$(basename "$t" .c)" "$t" $unit_lib "${L[@]}" >> "$out/link.log" 2>&1 &
    done
    wait
    say "== unit ($((SECONDS - t0)) s)"
    for t in "$dev"/tests/test_*; do say "$(basename "$t"): $(timeout 60 "$t" 2>&1 | tail -1)"; done
    run conv_full "${CONV_S:-150}" "$dev/difftest_conv" conv/
    run seq_quick "${SEQ_S:-100}" "$dev/difftest_seq" --quick sdpa
    run norm_quick "${NORM_S:-50}" "$dev/difftest_norm" --quick
    for f in ${CONV_FILTERS:-}; do run "conv_${f//[^a-z0-9]/_}" "${CONVF_S:-60}" "$dev/difftest_conv" "$f"; done
    for f in ${SEQ_FILTERS:-}; do run "seq_${f//[^a-z0-9]/_}" "${SEQF_S:-60}" "$dev/difftest_seq" "$f"; done
    for f in ${CORE_FILTERS:-}; do run "core_${f//[^a-z0-9]/_}" "${COREF_S:-60}" "$dev/difftest" "$f"; done
    for f in ${NORM_FILTERS:-}; do run "norm_${f//[^a-z0-9]/_}" "${NORMF_S:-60}" "$dev/difftest_norm" "$f"; done
    say "== graphs ($((SECONDS - t0)) s)"
    for g in graphs/*.dnn; do
        say "$g: $(timeout 60 "$dev/xdnn" run --device gpu --check "$g" 2>&1 | grep -E '^total|error|FAILED' | head -2 | tr '\n' ' ')"
    done
    ;;
net)
    PEER_ARGS=${PEER_ARGS:-} CASES=${CASES:-resnet256 llama} tests/gpu/network_dev.sh "$dev" "$out/net" 2>&1 |
        tail -30 | tee -a "$sum"
    for ab in ${AB:-XDNN_CONV_WGMMA_NO_TMA=1 XDNN_WGRAD_X_NO_TMA=1}; do
        say "== resnet256 with $ab ($((SECONDS - t0)) s)"
        dev_step "${ab%%=*}" "${RUN_S:-120}" "$ab" > /dev/null
        python3 tests/gpu/step_by_engine.py "$out/step_${ab%%=*}.json" 2>&1 | head -14 | tee -a "$sum"
    done
    ;;
esac
say "== done ($((SECONDS - t0)) s)"
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$' -e '^summary.txt$'))
