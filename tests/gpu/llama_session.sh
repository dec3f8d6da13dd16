#!/usr/bin/env bash
# llama_session.sh DEV OUT — session 11 (llama), one call: the Llama block step by partition with the matmul
# changes on (default) and off (XDNN_MATMUL_NO_ADDEND=1 XDNN_MATMUL_NO_ROWFOLD=1), beside PyTorch eager and
# torch.compile (bench/network_peer.py --cases llama, torch.profiler's costliest kernels of each mode); before the
# timing: difftest matmul/ in full (the addend/rowfold cases are new) and `xdnn run --check` on the Llama block at its reduced size (both ways) and graphs/transformer_block.dnn; memcheck on --quick matmul/addend last, in what time is left.
#
# EXPECTED (written before the call): the plan has the same 33 partitions; what changes inside three of them:
#   - r = x + attn @ w_o, y = r + m @ w_down, dh2 = dgt @ w_gate^T + dup @ w_up^T ran as GEMM into 64 MiB of scratch
#     + a generated add kernel (reads scratch and the addend, writes the sum: 192 MiB, ~70 us each at ~2.7 TB/s);
#     now cuBLASLt reads the addend as C with beta = 1 (64 MiB more read inside a compute-bound GEMM): ~-0.2 ms;
#   - every [B, S, K] @ [K, N] ran as B = 2 GEMMs of 4096 rows looped on the host (the weight broadcast along B
#     kept cuBLASLt's strided batch out); now one GEMM of 8192 rows (15 GEMMs: one launch each, a fuller last wave):
#     0 to -0.2 ms over the 14.9 ms of GEMMs.
#   Step 18.93 -> ~18.6 ms (0.97-0.98x torch.compile's 19.09); sum of the 15 matmul partitions -0.2 to -0.4 ms.
# OUTCOME (call 1, 3ee268f): step 18.859 ms against 19.287 with both switches on; torch.compile 19.306.  But the
#   bf16 residual C drops the product's rounding the graph asks for (intermediate=bf16): 2 difftest bf16 cases and
#   1 of 262144 elements of the Llama check off.  So the addend is exact-only by default (XDNN_MATMUL_ADDEND=1: the
#   Llama form too), and call 2 measures the default (row fold on, the Llama addend off) and the addend on,
#   torch.compile only:
#   RUNS="new addend:XDNN_MATMUL_ADDEND=1" CHECKS=new PEER_MODES=compile (the fold off = call 1's old: no time left)
#   PEER_ARGS="--iters 10"
# EXPECTED (call 2): the default = call 1's old within the spread (19.0-19.3 ms: the fold alone moved no GEMM by
#   more than +-0.05 ms); the addend on -0.1 to -0.4 ms; difftest matmul/ all pass by default.
# OUTCOME (call 2): difftest matmul/ 184/185 (a bf16 two-GEMM case of bf16 products, on the kernel path: the case,
#   since fixed), the checks pass; the step timings did not come back (limit reached in the peer, the JSON past the
#   file count). bench/RESULTS-networks.md, session 11 (llama).
set -uo pipefail
source tests/gpu/dev_env.sh "$@" > /dev/null
sum=$out/summary.txt
say() { echo "$*" | tee -a "$sum"; }
L=graphs/llama_block_train.dnn
LREAL=(--set B=2 --set S=4096 --set HQ=32 --set HK=8 --set HD=128 --set I=14336)
LSMALL=(--set S=256 --set HQ=8 --set HK=2 --set HD=128 --set I=512)
OLD=(XDNN_MATMUL_NO_ADDEND=1 XDNN_MATMUL_NO_ROWFOLD=1)
w=$out/w; mkdir -p "$w"
cat "$dev/COMMIT" >> "$sum" 2>/dev/null
# torch.compile's first compile in the background while the GPU does correctness work only
PYTHONUNBUFFERED=1 timeout "${WARM_S:-80}" python3 bench/network_peer.py --modes compile --cases llama --iters 1 \
    --warmup 0 > "$w/peer_warm.log" 2>&1 &
warm=$!
dev_build_testers difftest || exit 1
dev_link_cli || exit 1
say "== difftest matmul/ ($((SECONDS - t0)) s)"
timeout "${DT_S:-30}" "$dev/difftest" matmul/ > "$w/difftest_matmul.log" 2>&1
say "rc=$? $(grep -E 'passed,' "$w/difftest_matmul.log" | tail -1)"
grep -E "^FAIL" "$w/difftest_matmul.log" | cut -c1-240 | head -8 | tee -a "$sum"
say "== --check ($((SECONDS - t0)) s)"
for v in ${CHECKS:-new old}; do
    e=(); [ $v = old ] && e=("${OLD[@]}")
    say "llama S=256 ($v): $(env "${e[@]}" timeout 40 "$dev/xdnn" run --device gpu --check --iters 1 --warmup 0 $L \
        "${LSMALL[@]}" 2>&1 | tee "$w/check_llama_$v.log" | grep -E '^total|error|FAILED' | head -3 | tr '\n' ' ')"
done
say "transformer_block: $(timeout 40 "$dev/xdnn" run --device gpu --check graphs/transformer_block.dnn 2>&1 |
    tee "$w/check_tb.log" | grep -E '^total|error|FAILED' | head -3 | tr '\n' ' ')"
say "== waiting for the compile warm-up ($((SECONDS - t0)) s)"
wait $warm; say "warm rc=$?"
# RUNS: TAG[:VAR=VALUE,...] each; the first is run_llama.json, the others run_llama-TAG.json
for r in ${RUNS:-new old:XDNN_MATMUL_NO_ADDEND=1,XDNN_MATMUL_NO_ROWFOLD=1}; do
    v=${r%%:*}; e=(); [[ $r == *:* ]] && IFS=, read -ra e <<< "${r#*:}"
    say "== xdnn llama step ($v: ${e[*]}) ($((SECONDS - t0)) s)"
    f=run_llama; [ -f "$w/run_llama.json" ] && f=run_llama-$v
    env "${e[@]}" timeout "${RUN_S:-50}" "$dev/xdnn" run --device gpu --format json --iters 10 --warmup 2 $L \
        "${LREAL[@]}" > "$w/$f.json" 2> "$w/$f.err"
    say "rc=$? $(tail -1 "$w/$f.err")"
done
python3 "$dev/llama_tables.py" "$w" 2>&1 | head -45 | tee -a "$sum" # before the peer: a call cut there keeps them
say "== peer ($((SECONDS - t0)) s)"
PYTHONUNBUFFERED=1 timeout "${PEER_S:-75}" python3 bench/network_peer.py --cases llama --modes "${PEER_MODES:-eager,compile}" \
    ${PEER_ARGS:---profile 25} > "$w/peer.log" 2>&1
say "rc=$?"
python3 "$dev/llama_tables.py" "$w" 2>&1 | tee -a "$sum"
python3 bench/network_peer.py --report "$w" > "$out/report.md" 2>&1
say "== memcheck --quick matmul/addend ($((SECONDS - t0)) s)"
timeout "${MC_S:-20}" compute-sanitizer --tool memcheck --error-exitcode 9 "$dev/difftest" --quick matmul/addend \
    > "$w/memcheck.log" 2>&1
say "rc=$? $(grep -E 'ERROR SUMMARY|passed,' "$w/memcheck.log" | tr '\n' ' ')"
say "== done ($((SECONDS - t0)) s)"
(cd "$out" && tar czf logs.tgz --remove-files w device.txt link.log 2>/dev/null; ls)
