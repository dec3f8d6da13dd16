#!/usr/bin/env bats
# `xdnn plan` and `xdnn run PLAN.xplan` on the CPU reference: round trip,
# --info, --tune, corrupt / truncated / foreign plans, --replan, exit codes.
load helpers

G="$ROOT/graphs/mlp_gelu.dnn"
SMALL=(--set T=4 --set D=8)
export OMP_NUM_THREADS=1

setup() { export XDNN_CACHE_DIR="$BATS_TEST_TMPDIR/cache"; }

checksums() { python3 -c 'import json,sys; print(" ".join(o["name"] + "=" + o["checksum"] for o in json.load(sys.stdin)["outputs"]))'; }

# Rewrite section TAG of plan $1 into $2 with the text $3 and a fresh checksum
# (the format of man/xdnn-plan.5), so only the content is "foreign".
rewrite_section() {
    python3 - "$@" <<'P'
import struct, sys
src, dst, tag, text = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
b = open(src, "rb").read()
assert b[:8] == b"XDNNPLAN"
n = struct.unpack_from("<I", b, 12)[0]
at, out = 16, bytearray(b[:16])
for _ in range(n):
    t, ln = b[at:at + 4], struct.unpack_from("<Q", b, at + 4)[0]
    body = b[at + 12:at + 12 + ln]
    if t == tag:
        body = text
    out += t + struct.pack("<Q", len(body)) + body
    at += 12 + ln
h = 0xcbf29ce484222325
for c in out:
    h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
out += b"CSUM" + struct.pack("<QQ", 8, h)
open(dst, "wb").write(out)
P
}

@test "plan, then run the plan: same outputs as running the graph; engines and load time printed" {
    run xdnn plan "$G" "${SMALL[@]}" --device cpu -o "$BATS_TEST_TMPDIR/g.xplan"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "plan $BATS_TEST_TMPDIR/g.xplan: graph mlp_gelu, 18 partitions (0 tuned, 0 from the tune cache),"* ]]
    head -c 8 "$BATS_TEST_TMPDIR/g.xplan" | grep -q XDNNPLAN
    want=$(xdnn run "$G" "${SMALL[@]}" --device cpu --format json | checksums)
    got=$(xdnn run "$BATS_TEST_TMPDIR/g.xplan" --device cpu --format json 2>/dev/null | checksums)
    echo "want $want got $got"
    [ -n "$want" ] && [ "$want" = "$got" ]
    run xdnn run "$BATS_TEST_TMPDIR/g.xplan" --device cpu
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "plan $BATS_TEST_TMPDIR/g.xplan: graph mlp_gelu, device cpu; model="* ]]
    [[ "${lines[1]}" == "engines loaded (18): h.0/y.0=cpu_reference h.0=cpu_reference"* ]]
    [[ "${lines[2]}" == "plan load: "*" ms (0 compiled modules)" ]]
    [[ "$output" == *"output y: f16[4, 8] @row"* ]]
    run xdnn run "$BATS_TEST_TMPDIR/g.xplan" --device cpu --set T=8
    [ "$status" -eq 1 ]
    [[ "$output" == *"is a plan, specialized when it was made"* ]]
}

@test "--info describes versions, device, params, partitions, workspace and compiled modules" {
    xdnn plan "$G" "${SMALL[@]}" --device cpu -o "$BATS_TEST_TMPDIR/g.xplan"
    run xdnn plan --info "$BATS_TEST_TMPDIR/g.xplan"
    [ "$status" -eq 0 ]
    [[ "$output" == *"plan format:  1"* ]]
    [[ "$output" == *"xdnn:         0.1.0"* ]]
    [[ "$output" == *"device:       cpu; model="* ]]
    [[ "$output" != *"threads="* ]]
    [[ "$output" == *"graph:        mlp_gelu (23 tensors, 18 nodes; inputs: x: f16[4, 8])"* ]]
    [[ "$output" == *"params:       T=4 D=8 F=32"* ]]
    [[ "$output" == *"h.0/y.0              matmul           cpu_reference     1 candidate, heuristic"* ]]
    [[ "$output" == *"workspace:    0 bytes in 0 buffers"* ]]
    [[ "$output" == *"compiled:     0 modules, 0 bytes"* ]]
    [[ "$output" == *"runs here:    yes"* ]]
    run xdnn plan --info "$BATS_TEST_TMPDIR/g.xplan" --tune
    [ "$status" -eq 1 ]
}

@test "--tune times every node, stores it, and the next plan takes it from the cache" {
    run xdnn plan "$G" "${SMALL[@]}" --device cpu --tune -o "$BATS_TEST_TMPDIR/t.xplan"
    [ "$status" -eq 0 ]
    [[ "$output" == *"tune h (gelu): 1 candidate (the CPU has one engine per op): cpu_reference "*" ms, kept"* ]]
    [[ "$output" == *"18 partitions (18 tuned, 0 from the tune cache)"* ]]
    run xdnn plan "$G" "${SMALL[@]}" --device cpu -o "$BATS_TEST_TMPDIR/c.xplan"
    [[ "$output" == *"18 partitions (0 tuned, 18 from the tune cache)"* ]]
    run xdnn plan --info "$BATS_TEST_TMPDIR/c.xplan"
    [[ "$output" == *"gelu             cpu_reference     1 candidate, cached "*" ms"* ]]
}

@test "truncated and corrupt plans are clear errors (exit 5); a non-plan is named as such" {
    xdnn plan "$G" "${SMALL[@]}" --device cpu -o "$BATS_TEST_TMPDIR/g.xplan"
    size=$(stat -c %s "$BATS_TEST_TMPDIR/g.xplan")
    head -c $((size - 7)) "$BATS_TEST_TMPDIR/g.xplan" > "$BATS_TEST_TMPDIR/trunc.xplan"
    run xdnn run "$BATS_TEST_TMPDIR/trunc.xplan" --device cpu
    [ "$status" -eq 5 ]
    [[ "$output" == *"trunc.xplan: error: corrupt plan: truncated: the checksum trailer is missing ($((size - 7)) bytes)"* ]]
    cp "$BATS_TEST_TMPDIR/g.xplan" "$BATS_TEST_TMPDIR/flip.xplan"
    printf 'Q' | dd of="$BATS_TEST_TMPDIR/flip.xplan" bs=1 seek=300 conv=notrunc 2>/dev/null
    run xdnn plan --info "$BATS_TEST_TMPDIR/flip.xplan"
    [ "$status" -eq 5 ]
    [[ "$output" == *"corrupt plan: checksum mismatch (stored "* ]]
    echo "hello" > "$BATS_TEST_TMPDIR/not.xplan"
    run xdnn run "$BATS_TEST_TMPDIR/not.xplan" --device cpu
    [ "$status" -eq 5 ]
    [[ "$output" == *"not an xdnn plan (no XDNNPLAN magic"* ]]
    # a consistent checksum over a broken section is still caught
    rewrite_section "$BATS_TEST_TMPDIR/g.xplan" "$BATS_TEST_TMPDIR/parts.xplan" PART '{"x": 1}'
    run xdnn run "$BATS_TEST_TMPDIR/parts.xplan" --device cpu
    [ "$status" -eq 5 ]
    [[ "$output" == *"corrupt plan: the PART section is not a JSON array"* ]]
}

@test "--info --format json: versions, device, the tensors to bind and every partition with its candidates" {
    xdnn plan "$G" "${SMALL[@]}" --device cpu -o "$BATS_TEST_TMPDIR/g.xplan"
    run xdnn plan --info "$BATS_TEST_TMPDIR/g.xplan" --format json
    [ "$status" -eq 0 ]
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["xdnn"] == "0.1.0" and d["backend"] == "cpu" and d["runs_here"] is True and d["graph"] == "mlp_gelu", d
t = {x["name"]: x for x in d["tensors"]}
assert t["x"]["kind"] == "input" and t["x"]["dims"] == [4, 8] and t["y"]["kind"] == "output", t
assert len(d["partitions"]) == 18 and all(p["engine"] == "cpu_reference" for p in d["partitions"])
assert d["partitions"][0]["candidates"][0]["chosen"] is True' "$output"
    run xdnn plan "$G" --format json -o "$BATS_TEST_TMPDIR/h.xplan"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--format json describes a plan: it goes with --info"* ]]
}

@test "a CPU plan runs under another OMP_NUM_THREADS (threads are a run-time choice) with the same outputs" {
    OMP_NUM_THREADS=1 xdnn plan "$G" "${SMALL[@]}" --device cpu -o "$BATS_TEST_TMPDIR/t1.xplan"
    want=$(OMP_NUM_THREADS=1 xdnn run "$BATS_TEST_TMPDIR/t1.xplan" --device cpu --format json | checksums)
    got=$(OMP_NUM_THREADS=2 xdnn run "$BATS_TEST_TMPDIR/t1.xplan" --device cpu --format json 2>/dev/null | checksums)
    [ -n "$want" ] && [ "$got" = "$want" ]
}

@test "a plan from another device or xdnn version is refused naming both; --replan rebuilds it" {
    xdnn plan "$G" "${SMALL[@]}" --device cpu -o "$BATS_TEST_TMPDIR/g.xplan"
    rewrite_section "$BATS_TEST_TMPDIR/g.xplan" "$BATS_TEST_TMPDIR/dev.xplan" DEVI "cpu; model=Imaginary 9000; threads=64"
    run xdnn run "$BATS_TEST_TMPDIR/dev.xplan" --device cpu
    [ "$status" -eq 4 ]
    [[ "$output" == *"plan refused: it was made for device 'cpu; model=Imaginary 9000; threads=64', this device is 'cpu; model="*"'"* ]]
    [[ "$output" == *"xdnn plan --replan"* ]]
    run xdnn plan --info "$BATS_TEST_TMPDIR/dev.xplan"
    [ "$status" -eq 0 ]
    [[ "$output" == *"runs here:    no (another device or xdnn version: use --replan)"* ]]
    rewrite_section "$BATS_TEST_TMPDIR/g.xplan" "$BATS_TEST_TMPDIR/ver.xplan" VERS "0.0.9"
    run xdnn run "$BATS_TEST_TMPDIR/ver.xplan" --device cpu
    [ "$status" -eq 4 ]
    [[ "$output" == *"plan refused: it was made by xdnn 0.0.9, this is xdnn 0.1.0"* ]]
    run xdnn plan --replan "$BATS_TEST_TMPDIR/dev.xplan" --device cpu -o "$BATS_TEST_TMPDIR/re.xplan"
    [ "$status" -eq 0 ]
    [[ "$output" == *"replanning"*"made by xdnn 0.1.0 for 'cpu; model=Imaginary 9000; threads=64'"* ]]
    want=$(xdnn run "$G" "${SMALL[@]}" --device cpu --format json | checksums)
    got=$(xdnn run "$BATS_TEST_TMPDIR/re.xplan" --device cpu --format json 2>/dev/null | checksums)
    [ "$want" = "$got" ]
}

@test "plan usage errors: missing -o, unknown options, --replan with --set, no GPU" {
    run xdnn plan "$G" --device cpu
    [ "$status" -eq 1 ]; [[ "$output" == *"missing -o OUT.xplan"* ]]
    run xdnn plan "$G" --device cpu --bogus -o x.xplan
    [ "$status" -eq 1 ]; [[ "$output" == *"unknown option '--bogus'"* ]]
    run xdnn plan --replan "$G" --set T=2 -o x.xplan
    [ "$status" -eq 1 ]
    run xdnn plan "$G" --device gpu -o "$BATS_TEST_TMPDIR/x.xplan"
    [ "$status" -eq 7 ]
    [ ! -e "$BATS_TEST_TMPDIR/x.xplan" ]
    run xdnn plan "$G" --set T=0 --device cpu -o "$BATS_TEST_TMPDIR/x.xplan"
    [ "$status" -eq 3 ]
    [ ! -e "$BATS_TEST_TMPDIR/x.xplan" ]
}

# --explain: the host-side planner, through the public API, for a described GPU
needs_cuda_build() { xdnn engines | grep -q "built without CUDA" && skip "built without CUDA" || true; }

@test "--explain --device-model h100 plans the transformer block on a machine without a GPU" {
    needs_cuda_build
    run xdnn plan --explain --device-model h100 "$ROOT/graphs/transformer_block.dnn"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "plan of graph transformer_block for gpu; model=h100 (cuda backend, selection only: not executable here): "*" partitions, workspace "*" bytes" ]]
    [[ "$output" == *"(layernorm)"$'\n'"  chosen    norm_welford"* ]]
    [[ "$output" == *"(matmul)"$'\n'"  chosen    matmul_cublaslt"* ]]
    [[ "$output" == *"(sdpa)"$'\n'"  chosen    sdpa_"* ]]
    [[ "$output" == *"other engines declined; -v says why)"* ]]
    [[ "$output" != *"declined  "* ]]
}

@test "--explain -v: the engines of the partition's op class that declined, with their reason; no others" {
    needs_cuda_build
    run xdnn plan --explain --device-model a100 -v "$ROOT/graphs/conv_bias_relu.dnn"
    [ "$status" -eq 0 ]
    # the bias add and the relu are the conv's fused epilogue: one partition
    [[ "$output" == *"1 partition, "* ]]
    [[ "$output" == *"partition 0  y.0+y.1+y  (conv+add+relu)"$'\n'"  chosen    conv_igemm "*"  candidate conv_direct "* ]]
    [[ "$output" == *"  declined  conv_wgrad_mma       "*"conv_wgrad"* ]]
    [[ "$output" == *"  declined  conv_dw              conv_dw needs depthwise groups == C == K, got groups=1, C=64, K=64"* ]]
    # engines of other op classes are not asked: no matmul, sdpa or norm engine for a conv
    [[ "$output" != *"matmul_cublaslt"* && "$output" != *"sdpa_"* && "$output" != *"norm_welford"* ]]
    # the class each engine serves is listed by `xdnn engines`
    run xdnn engines
    [[ "$output" == *"conv_igemm         conv "* && "$output" == *"norm_welford       reduce,norm "* ]]
}

@test "--explain -v: a ragged (seq_offsets) bf16 training step plans on sdpa_flash_wgmma and sdpa_bwd_wgmma (the mma.sync pair next); the others say why not" {
    needs_cuda_build
    cat > "$BATS_TEST_TMPDIR/ragged.dnn" <<'EOF'
dnn 1;
graph g(seed=1) {
  input q: bf16[41, 4, 64];
  input k: bf16[50, 2, 64];
  input v: bf16[50, 2, 64];
  input do: bf16[41, 4, 64];
  input oq: i32[4] = values(data=[0, 7, 8, 41]);
  input okv: i32[4] = values(data=[0, 9, 10, 50]);
  o, stats = sdpa(q, k, v, seq_offsets_q=oq, seq_offsets_kv=okv, causal=true);
  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, seq_offsets_q=oq, seq_offsets_kv=okv, causal=true);
  output dq, dk, dv;
}
EOF
    run xdnn plan --explain --device-model h100 -v "$BATS_TEST_TMPDIR/ragged.dnn"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"partition 0  o  (sdpa)"$'\n'"  chosen    sdpa_flash_wgmma "*$'\n'"  candidate sdpa_flash "* ]]
    [[ "$output" == *"partition 1  dq  (sdpa_bwd)"$'\n'"  chosen    sdpa_bwd_wgmma "*$'\n'"  candidate sdpa_bwd_flash "* ]]
    [[ "$output" == *"declined  sdpa_naive           o: seq_offsets_q (ragged attention) runs on sdpa_flash_wgmma, sdpa_flash and sdpa_splitkv only"* ]]
    [[ "$output" == *"declined  sdpa_bwd             dq: seq_offsets_q (ragged attention backward) runs on sdpa_bwd_wgmma and sdpa_bwd_flash only"* ]]
}

@test "--explain --engine forces an engine; one that cannot run the partition is refused with its reason" {
    needs_cuda_build
    run xdnn plan --explain --device-model h100 --engine conv=conv_direct "$ROOT/graphs/conv_bias_relu.dnn"
    [ "$status" -eq 0 ]
    [[ "$output" == *"(conv+add+relu)"$'\n'"  chosen    conv_direct "* ]]
    run xdnn plan --explain --device-model h100 --engine conv=matmul_cublaslt "$ROOT/graphs/conv_bias_relu.dnn"
    [ "$status" -eq 4 ]
    [[ "$output" == *"forced engine matmul_cublaslt cannot run partition y.0+y.1+y: needs a matmul partition, got single"* ]]
}

@test "--explain -v: the fp8 form at D = 24 runs on no engine: sdpa_fp8_wgmma names the head dim, the others the scale port" {
    needs_cuda_build
    run xdnn plan --explain --device-model h100 -v "$ROOT/tests/identities/sdpa_fp8_scales.dnn"
    echo "$output"
    [ "$status" -eq 4 ]
    [[ "$output" == *"no GPU engine can run partition o8 (op sdpa)"* ]]
    for e in sdpa_flash_wgmma sdpa_splitkv sdpa_flash sdpa_flash_tf32 sdpa_naive; do
        [[ "$output" == *"$e: "*"o8: q_scale (fp8 attention) runs on sdpa_fp8_wgmma only"* ]] || { echo "$e"; false; }
    done
    [[ "$output" == *"sdpa_fp8_wgmma: sdpa: sdpa_fp8_wgmma needs head dim 128, got q with 24"* ]]
    # the port is named before anything else: not the fp8 dtype that sdpa_naive would also refuse
    [[ "$output" != *"o8 (op sdpa): "*"dtype fp8_e4m3"*"partition o64"* ]]
}

@test "--explain: sdpa_fwd_bwd's forward (o an f32 intermediate) runs on sdpa_flash_wgmma on the H100" {
    needs_cuda_build
    run xdnn plan --explain --device-model h100 "$ROOT/graphs/sdpa_fwd_bwd.dnn"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"partition 0  o  (sdpa)"*"chosen    sdpa_flash_wgmma"*"(sdpa_bwd)"* ]]
}

@test "a saved CPU plan of the fp8 sdpa identity (scale ports, a discarded stats, amax results) runs and passes" {
    run xdnn plan "$ROOT/tests/identities/sdpa_fp8_scales.dnn" --device cpu -o "$BATS_TEST_TMPDIR/fp8.xplan"
    [ "$status" -eq 0 ]
    run xdnn run "$BATS_TEST_TMPDIR/fp8.xplan" --device cpu
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c '^check .*: ok' <<<"$output")" -eq 4 ]
}

@test "--explain: scaled_conv runs on scaled_conv_im2col (groups 1, any layout); grouped ones and the conv engines are refused" {
    needs_cuda_build
    man_example scaled-conv-example "$BATS_TEST_TMPDIR/int8.dnn" # the int8 conv block of man/dnn.5 (NCHW)
    run xdnn plan --explain --device-model h100 -v "$BATS_TEST_TMPDIR/int8.dnn"
    echo "$output"
    [ "$status" -eq 0 ]
    # both scaled_conv partitions (3x3 requantized to i8 with bias; 1x1 to bf16) take the im2col engine
    [ "$(grep -c '^  chosen    scaled_conv_im2col ' <<<"$output")" -eq 2 ]
    [[ "$output" == *"partition 8  h  (scaled_conv)"$'\n'"  chosen    scaled_conv_im2col "* ]]
    [[ "$output" == *"partition 10  y  (scaled_conv)"$'\n'"  chosen    scaled_conv_im2col "* ]]
    # the conv engines do not serve the quant class, and refuse it when forced
    for e in conv_direct conv_igemm conv_igemm_wgmma conv_wgrad_mma conv_dw; do
        run xdnn plan --explain --device-model h100 --engine "h=$e" "$BATS_TEST_TMPDIR/int8.dnn"
        echo "$e: $output"
        [ "$status" -eq 4 ]
        [[ "$output" == *"forced engine $e cannot run partition h: runs conv ops only, not scaled_conv"* ]]
    done
    # groups > 1 (the identity graph's four convs) is refused with the reason
    run xdnn plan --explain --device-model h100 "$ROOT/tests/identities/scaled_conv_is_dequantized_conv.dnn"
    echo "$output"
    [[ "$output" == *"no GPU engine can run partition yq (op scaled_conv): "*"scaled_conv_im2col: scaled_conv: groups=2 (grouped and depthwise int8 convs are not one GEMM; this engine runs groups 1 only)"* ]]
    [ "$(grep -c 'scaled_conv_im2col: scaled_conv: groups=2' <<<"$output")" -eq 4 ]
    # fp8 needs one e4m3 operand; an i8 window of 2^17 products could overflow int32
    cat > "$BATS_TEST_TMPDIR/refuse.dnn" <<'EOF'
dnn 1;
graph r(seed=1) {
  input x5: fp8_e5m2[1, 16, 8, 8] @nhwc;
  weight w5: fp8_e5m2[16, 16, 3, 3] @nhwc;
  input xb: i8[1, 131072, 1, 1] @nhwc;
  weight wb: i8[16, 131072, 1, 1] @nhwc;
  weight s: f32[1] = fill(0.5);
  y5 = scaled_conv(x5, w5, s, s, pad=1);
  yb = scaled_conv(xb, wb, s, s);
  output y5, yb;
}
EOF
    run xdnn plan --explain --device-model h100 "$BATS_TEST_TMPDIR/refuse.dnn"
    echo "$output"
    [ "$status" -eq 4 ]
    [[ "$output" == *"partition y5 (op scaled_conv): "*"scaled_conv_im2col: scaled_conv: fp8_e5m2 x fp8_e5m2 has no Hopper fp8 kernel (one of x, w must be fp8_e4m3)"* ]]
    [[ "$output" == *"partition yb (op scaled_conv): "*"scaled_conv_im2col: scaled_conv: i8 sums of C * window = 131072 products could overflow the int32 accumulator (must be below 131072)"* ]]
}

@test "--explain on the CPU backend: one cpu_reference per node" {
    run xdnn plan --explain --device cpu "$G" "${SMALL[@]}"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "plan of graph mlp_gelu for cpu; "*" (cpu backend): 18 partitions, workspace 0 bytes" ]]
    [ "$(grep -c '  chosen    cpu_reference' <<<"$output")" -eq 18 ]
}

@test "--device-model: unknown models, the CPU and missing --explain are usage errors" {
    run xdnn plan --explain --device-model z80 "$G"
    if xdnn engines | grep -q "built without CUDA"; then
        [ "$status" -eq 7 ] # no GPU planner in this build: a device error, said as such
        [[ "$output" == *"xdnn was built without CUDA"* ]]
    else
        [ "$status" -eq 1 ]
        [[ "$output" == *"unknown device model 'z80' (known: h100, h200, a100)"* ]]
    fi
    run xdnn plan --explain --device-model h100 --device cpu "$G"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--device-model describes a GPU: it does not go with --device cpu"* ]]
    run xdnn plan --device-model h100 "$G" -o "$BATS_TEST_TMPDIR/x.xplan"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--device-model, --engine and -v go with --explain"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/x.xplan" ]
}

@test "--dynamic: a plan made at one size runs at others with its engines, as a plan made for each; ranges checked" {
    run xdnn plan "$G" "${SMALL[@]}" --device cpu --dynamic T=1:64 --dynamic D=8:32 --const-weights -o "$BATS_TEST_TMPDIR/d.xplan"
    [ "$status" -eq 0 ]
    run xdnn plan --info "$BATS_TEST_TMPDIR/d.xplan"
    [[ "$output" == *"dynamic:      T=1:64 D=8:32 (xdnn_plan_resize: other values without planning again)"* ]]
    [[ "$output" == *"constants:    weights promised constant: 0 partitions computing from them only run once"* ]]
    run xdnn plan --info "$BATS_TEST_TMPDIR/d.xplan" --format json
    [[ "$output" == *'"const_weights":	true'* ]]
    [[ "$output" == *'"param":	"T"'* ]]
    for t in 3 17 64; do
        want=$(xdnn run "$G" --set T=$t --set D=16 --device cpu --format json | checksums)
        got=$(xdnn run "$BATS_TEST_TMPDIR/d.xplan" --set T=$t --set D=16 --device cpu --format json 2>/dev/null | checksums)
        echo "T=$t want $want got $got"
        [ -n "$want" ] && [ "$want" = "$got" ]
    done
    run xdnn run "$BATS_TEST_TMPDIR/d.xplan" --set T=5 --device cpu
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "plan resize: "*" ms (0 kernels compiled, 0 cached)" ]]
    [[ "$output" == *"output y: f16[5, 8] @row"* ]]
    run xdnn run "$BATS_TEST_TMPDIR/d.xplan" --set T=65 --device cpu
    [ "$status" -eq 1 ]
    [[ "$output" == *"xdnn_plan_resize: T=65 is outside the plan's dynamic range 1:64"* ]]
    run xdnn run "$BATS_TEST_TMPDIR/d.xplan" --set F=64 --device cpu
    [ "$status" -eq 1 ]
    [[ "$output" == *"'F' is not a dynamic param of this plan of graph 'mlp_gelu'"* ]]
    run xdnn plan "$G" "${SMALL[@]}" --device cpu --dynamic F=1:64 -o "$BATS_TEST_TMPDIR/f.xplan"
    [ "$status" -eq 1 ]
    [[ "$output" == *"dynamic param 'F=1:64': 'F' is derived from other params"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/f.xplan" ]
    run xdnn plan "$G" "${SMALL[@]}" --device cpu --dynamic T=8:16 -o "$BATS_TEST_TMPDIR/f.xplan"
    [ "$status" -eq 1 ]
    [[ "$output" == *"the graph is bound with T=4, outside 8:16"* ]]
    run xdnn plan "$G" "${SMALL[@]}" --device cpu --dynamic T -o "$BATS_TEST_TMPDIR/f.xplan"
    [ "$status" -eq 1 ]
    [[ "$output" == *"dynamic param 'T': expected P=LO:HI with integers 1 <= LO <= HI"* ]]
    # --replan keeps the ranges and the promise
    xdnn plan --replan "$BATS_TEST_TMPDIR/d.xplan" --device cpu -o "$BATS_TEST_TMPDIR/r.xplan"
    run xdnn plan --info "$BATS_TEST_TMPDIR/r.xplan"
    [[ "$output" == *"dynamic:      T=1:64 D=8:32"* ]]
    [[ "$output" == *"constants:    weights promised constant"* ]]
}

@test "a plan without the options writes no OPTS section (older readers see the same bytes)" {
    xdnn plan "$G" "${SMALL[@]}" --device cpu -o "$BATS_TEST_TMPDIR/a.xplan"
    ! grep -q OPTS "$BATS_TEST_TMPDIR/a.xplan"
    xdnn plan "$G" "${SMALL[@]}" --device cpu --const-weights -o "$BATS_TEST_TMPDIR/b.xplan"
    grep -q OPTS "$BATS_TEST_TMPDIR/b.xplan"
    rewrite_section "$BATS_TEST_TMPDIR/b.xplan" "$BATS_TEST_TMPDIR/c.xplan" OPTS '{"dynamic":[{"param":"T","lo":0,"hi":3}]}'
    run xdnn run "$BATS_TEST_TMPDIR/c.xplan" --device cpu
    [ "$status" -eq 5 ]
    [[ "$output" == *"corrupt plan: dynamic param 0 of the OPTS section is not"* ]]
    run xdnn plan --info "$BATS_TEST_TMPDIR/a.xplan" --const-weights
    [ "$status" -eq 1 ]
}
