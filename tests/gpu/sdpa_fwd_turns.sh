# sdpa_fwd_turns.sh — sourced by the sdpa_flash_wgmma forward session scripts (fwd176_session.sh,
# fwdexp_session.sh) after tests/gpu/dev_env.sh, with dt (the difftest_seq binary) and budget (seconds left)
# defined: the PyTorch peer on the bench shapes, and the bench's variants taking turns per shape.
# sdpa_fwd_peer SECONDS — bench/sdpa_peer.py (DEV/py) forward only, flash and cuDNN, the four bench shapes
sdpa_fwd_peer() {
    step "PyTorch flash and cuDNN, forward"
    PYTHONUNBUFFERED=1 SDPA_PEER_FWD_ONLY=1 \
        SDPA_PEER_SHAPES=b4h16k16s4096d128,b16h16k16s1024d64,b1h32k32s16384d128,b2h32k8s4096d128 \
        timeout "$1" python3 "$dev/py/sdpa_peer.py" > "$out/peer.log" 2>&1
    echo "peer rc=$?"; grep -v Warning "$out/peer.log" | grep -E '"sdpa_fwd|torch' | sed 's/"peer": //' | cut -c1-140
}
# sdpa_fwd_bench_turns RUNS — dev_bench_runs on each of RUNS ("ENV|FILTER|TAG|SECONDS;...") while more than 14 s
# of the budget are left, into OUT/bench.log, then one line per timed row: id, tag, median, min, max, TF/s
sdpa_fwd_bench_turns() {
    local r rl
    step "forward bench (xdnn), the variants in turn per shape"
    : > "$out/bench.log"
    IFS=';' read -ra rl <<< "${1%;}"
    for r in "${rl[@]}"; do
        [ "$(budget)" -gt 14 ] || { echo "bench cut short: $r and after not run"; break; }
        dev_bench_runs "$dt" "$r" | grep -v "ok=1 fail=0"
    done
    awk '/^###/ {h = $2} /^(PASS|FAIL)/ {id = $2} /^FAIL/ {print "FAIL", h, id}
         /TIME/ {print id, h, "median", $5, "min", $8, "max", $10 + 0, $11, "TF/s"}' "$out/bench.log" |
        sed 's|bench/wgmma/sdpa_fwd_bf16||'
}
