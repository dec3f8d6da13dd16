#!/usr/bin/env bash
# stem7_session.sh DEV OUT — the device call of conv_im2col_gemm (the C < 8
# stem, fwd and wgrad, on a per-filter-row im2col + cuBLASLt; session 7).
# DEV: what tests/gpu/pack_dev.sh packs, plus dt/ (difftest_conv's objects),
# dtq/ (difftest_quant's) and conv_peer.py, all made where the library was
# built (commands at the end of this header), so the call builds nothing
# from the tree it runs in.  Logs under OUT; a summary on stdout.
#  1. new: difftest_conv's "im2c" cases (forced, against the CPU reference);
#  2. bench: the stem (N = 32, 256; f16, bf16; fwd and wgrad as planned;
#     BENCH_FILTERS, comma-separated, adds "_im2col n" (forced on this engine)
#     or "_mma n" (wgrad forced on conv_wgrad_mma)) beside cuDNN
#     (conv_peer.py stem): OUT/table.txt;
#  3. the chunk knobs on the bf16 stem: XDNN_IM2COL_ROWS, XDNN_IM2COL_SPLIT;
#  4. compute-sanitizer memcheck on the --quick im2c cases;
#  5. regression: REG (difftest_conv filters, default none) and difftest_quant's
#     cuBLASLt engines (sconv/, smm: gpu_lt_lowp_gemm now goes through
#     gpu_lt_gemm_plan).
# Limits: NEW_S BENCH_S SWEEP_S PEER_S SAN_S REG_S QREG_S; SKIP_X leaves step X out.
# Packing DEV (here, at the commit to test):
#   tests/gpu/pack_dev.sh build-stem /work/main/build-stem-dev
#   for t in difftest_conv:dt difftest_quant:dtq; do mkdir -p DEV/${t#*:}; for f in ${t%:*} diffharness; do
#     gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc \
#       -I/usr/local/cuda/include -c tests/gpu/$f.c -o DEV/${t#*:}/$f.o; done; done
#   cp tests/gpu/dev_env.sh tests/gpu/stem7_session.sh bench/conv_peer.py DEV/
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
dev_link_tester difftest_conv || exit 1
gcc -o "$dev/difftest_quant" "$dev"/dtq/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp \
    -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -ldl -lpthread -lrt >> "$out/link.log" 2>&1
dt=$dev/difftest_conv
if [ -z "${SKIP_NEW:-}" ]; then
    step "new im2c cases"
    timeout "${NEW_S:-40}" "$dt" im2c > "$out/new.log" 2>&1; echo "rc=$?"
    grep -E "^FAIL" -A12 "$out/new.log" | cut -c1-400 | head -40
    grep -E "^(PASS|FAIL)" "$out/new.log" | sed 's/ (dry.*//' | cut -c1-150
    grep -E "passed," "$out/new.log"
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    step "bench: the stem beside cuDNN"
    : > "$out/bench.log"
    IFS=, read -ra bf <<<"${BENCH_FILTERS:-_nhwc n32c3h224k64r7,_nhwc n256c3h224k64r7}"
    for f in "${bf[@]}"; do
        timeout "${BENCH_S:-20}" "$dt" --bench "$f" >> "$out/bench.log" 2>&1; echo "bench '$f' rc=$?"
    done
    timeout "${PEER_S:-30}" python3 "$dev/conv_peer.py" stem > "$out/peer.log" 2>&1; echo "peer rc=$?"
    awk '/^PEER/ {peer[$2" "$3] = $4} /^BENCH/ {b[++n] = $2" "$3; e[n] = $4; ms[n] = $5}
        END {for (i = 1; i <= n; i++) { p = peer[b[i]]; printf "%-48s %-18s %8.4f %8.4f %6.2f\n", b[i], e[i], ms[i],
             p, (p > 0 ? ms[i] / p : 0) } }' "$out/peer.log" "$out/bench.log" | tee "$out/table.txt"
    grep -E "^PEER" "$out/peer.log"
    grep -E "^BENCH" "$out/bench.log" | grep -o "TFLOP/s.*" | cut -c1-200 | sort -u | head -8
fi
if [ -z "${SKIP_SWEEP:-}" ]; then
    step "chunk knobs (bf16 stem)"
    for r in ${ROWS:-16384 1048576}; do
        XDNN_IM2COL_ROWS=$r timeout "${SWEEP_S:-12}" "$dt" --bench "bf16_nhwc_im2col n256" > "$out/rows$r.log" 2>&1
        XDNN_IM2COL_ROWS=$r timeout "${SWEEP_S:-12}" "$dt" --bench "wgrad_bf16_nhwc n256" >> "$out/rows$r.log" 2>&1
        grep -E "^BENCH" "$out/rows$r.log" | awk -v r=$r '{print "rows=" r, $2, $3, $5}'
    done
    for s in ${SPLITS:-8 128}; do
        XDNN_IM2COL_SPLIT=$s timeout "${SWEEP_S:-12}" "$dt" --bench "wgrad_bf16_nhwc n256" > "$out/split$s.log" 2>&1
        grep -E "^BENCH" "$out/split$s.log" | awk -v s=$s '{print "split=" s, $2, $3, $5}'
    done
fi
if [ -z "${SKIP_SAN:-}" ]; then
    step "compute-sanitizer memcheck (--quick im2c)"
    timeout "${SAN_S:-35}" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 "$dt" --quick im2c \
        > "$out/memcheck.log" 2>&1
    echo "memcheck rc=$?"
    grep -E "ERROR SUMMARY|passed,|^FAIL|Invalid" "$out/memcheck.log" | head -12
fi
if [ -z "${SKIP_REG:-}" ]; then
    step "regression: difftest_conv ${REG:-(none)}, difftest_quant sconv/ smm"
    : > "$out/reg.log"
    for f in ${REG:-}; do timeout "${REG_S:-60}" "$dt" "$f" >> "$out/reg.log" 2>&1; echo "$f rc=$?"; done
    for f in sconv/ smm; do timeout "${QREG_S:-30}" "$dev/difftest_quant" "$f" >> "$out/reg.log" 2>&1; echo "quant $f rc=$?"; done
    grep -E "^FAIL" "$out/reg.log" | cut -c1-300 | head -20
    grep -E "passed," "$out/reg.log"
fi
step done
