#!/usr/bin/env bats
# The language reference proved by identities: every graph in tests/identities/
# computes the same quantity two ways (an op and its definition written with
# smaller ops) and ends in `check` statements, so `xdnn run --device cpu`
# exits 0 only if the identity holds.  A deliberately broken identity must
# fail with exit code 6.
load helpers

ID="$ROOT/tests/identities"

run_identity() {
    run xdnn run --device cpu "$ID/$1"
    echo "$output"
    [ "$status" -eq 0 ]
    # every check ran and passed; none failed
    [[ "$output" == *"check "*": ok"* ]]
    ! grep -q 'FAILED' <<< "$output"
}

@test "softmax rows sum to 1; log_softmax == log(softmax)" { run_identity softmax_rows_sum_to_one.dnn; }
@test "layernorm output has row mean 0 and variance 1; stats are mean and 1/sqrt(var+eps)" {
    run_identity layernorm_moments.dnn
}
@test "1x1 conv == matmul after permute/reshape" { run_identity conv1x1_is_matmul.dnn; }
@test "an output other ops read is a rounded copy: they read its unrounded value" { run_identity output_mark_keeps_value.dnn; }
@test "causal sdpa == softmax(QKᵀ·scale + mask)·V" { run_identity sdpa_causal_explicit.dnn; }
@test "batchnorm_infer with the batch stats == batchnorm training output" {
    run_identity batchnorm_infer_matches_train.dnn
}
@test "one LSTM step == its gate equations" { run_identity lstm_one_step.dnn; }
@test "gather, gather_bwd, cross_entropy(+_bwd), argmax, batchnorm_infer_var == one_hot and older ops" {
    run_identity index_ops_explicit.dnn
}
@test "scaled_matmul's requantized c and amax == quantize and amax of its f32 result (bit-exact)" {
    run_identity scaled_matmul_requantize.dnn
}
@test "a requantized scaled_matmul with its amax plans on cuBLASLt's int8 and fp8 engines" {
    printf '%s\n' 'graph q(seed=1) {' '  input a: i8[32, 64];' '  input b: i8[16, 64];' \
        '  input a8: fp8_e4m3[32, 64];' '  input b8: fp8_e4m3[16, 64];' '  weight s: f32[1] = fill(0.5);' \
        '  c, m = scaled_matmul(a, b, s, s, s, trans_b=true, dtype=i8);' \
        '  c8, m8 = scaled_matmul(a8, b8, s, s, s, trans_b=true, dtype=fp8_e4m3);' '  output c, m, c8, m8;' '}' \
        > "$BATS_TEST_TMPDIR/q.dnn"
    run xdnn plan --explain --device-model h100 "$BATS_TEST_TMPDIR/q.dnn"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"partition 0  c  (scaled_matmul)"*"chosen    matmul_i8_cublaslt"* ]]
    [[ "$output" == *"partition 1  c8  (scaled_matmul)"*"chosen    matmul_fp8_cublaslt"* ]]
}
@test "@nchw, @nhwc, @perm, padded @strides and @col give the same logical result" {
    run_identity layouts_same_logical.dnn
}

@test "fp8 sdpa == quantize(its exact O, o_scale); amax_s, amax_o; within 5e-2 of the dequantized attention" {
    run_identity sdpa_fp8_scales.dnn
}

@test "a broken fp8 identity fails with exit 6 (s_scale so small that P saturates)" {
    run xdnn run --device cpu "$ID/sdpa_fp8_scales.dnn" --set SS=1e-4
    echo "$output"
    [ "$status" -eq 6 ]
    [[ "$output" == *"check rel: FAILED"* && "$output" == *"check exact: ok"* ]]
}

@test "ragged (THD) sdpa + sdpa_bwd training step == the dense step on each sequence, bit for bit" {
    run_identity sdpa_ragged_train_step.dnn
    [ "$(grep -c 'check err_[a-z]*: ok  0 of 1 elements differ (rtol 0, atol 0)' <<< "$output")" -eq 5 ]
}

@test "a ragged step with one token moved to the next sequence fails with exit 6" {
    sed 's/off_q:  i32\[4\] = values(\[0, 7, 8, 41\])/off_q:  i32[4] = values([0, 6, 8, 41])/' \
        "$ID/sdpa_ragged_train_step.dnn" > "$BATS_TEST_TMPDIR/moved.dnn"
    ! cmp -s "$ID/sdpa_ragged_train_step.dnn" "$BATS_TEST_TMPDIR/moved.dnn"
    run xdnn run --device cpu "$BATS_TEST_TMPDIR/moved.dnn"
    echo "$output"
    [ "$status" -eq 6 ]
    [[ "$output" == *"check err_dq: FAILED"* && "$output" == *"check err_dk: FAILED"* ]]
}

@test "scaled_conv (i8 and fp8, per-channel w_scale, bias, requantized i8/e4m3) == the f64 conv of the dequantized operands, to the bit" {
    run_identity scaled_conv_is_dequantized_conv.dnn
}
@test "the scaled_conv identity fails (exit 6) when one side drops the bias" {
    sed 's/y = scaled_conv(qx, qw, sx, sw, b, stride/y = scaled_conv(qx, qw, sx, sw, stride/' \
        "$ID/scaled_conv_is_dequantized_conv.dnn" > "$BATS_TEST_TMPDIR/no_bias.dnn"
    ! cmp -s "$ID/scaled_conv_is_dequantized_conv.dnn" "$BATS_TEST_TMPDIR/no_bias.dnn"
    run xdnn run --device cpu "$BATS_TEST_TMPDIR/no_bias.dnn"
    echo "$output"
    [ "$status" -eq 6 ]
    [[ "$output" == *"check err_f32: FAILED"* ]]
}

@test "every identity graph has checks and converts through JSON unchanged in meaning" {
    for g in "$ID"/*.dnn; do
        grep -q '^ *check ' "$g"
        b=$(basename "$g" .dnn)
        xdnn convert "$g" -o "$BATS_TEST_TMPDIR/$b.json"
        run xdnn run --device cpu "$BATS_TEST_TMPDIR/$b.json"
        [ "$status" -eq 0 ] || { echo "$b.json: $output"; false; }
    done
}

@test "a broken identity fails with exit 6 (sdpa without the causal mask)" {
    run xdnn run --device cpu "$ID/sdpa_causal_explicit.dnn" --set CAUSAL=false
    echo "$output"
    [ "$status" -eq 6 ]
    [[ "$output" == *"check err: FAILED"* ]]
}

@test "a too-tight tolerance fails with exit 6" {
    sed 's/atol=1e-5, rtol=0;/atol=0, rtol=0;/' "$ID/batchnorm_infer_matches_train.dnn" > "$BATS_TEST_TMPDIR/tight.dnn"
    run xdnn run --device cpu "$BATS_TEST_TMPDIR/tight.dnn"
    echo "$output"
    [ "$status" -eq 6 ]
    [[ "$output" == *"FAILED"* ]]
}

@test "the same graph with an @nhwc input instead of @nchw gives the same checksum (two runs)" {
    g="$ROOT/graphs/conv_bias_relu.dnn"
    grep -q '@nhwc' "$g"
    sed 's/@nhwc/@nchw/g' "$g" > "$BATS_TEST_TMPDIR/nchw.dnn"
    a=$(xdnn run --device cpu --set N=1 --set H=6 --set W=6 "$g" --format json)
    b=$(xdnn run --device cpu --set N=1 --set H=6 --set W=6 "$BATS_TEST_TMPDIR/nchw.dnn" --format json)
    sums() { python3 -c 'import json,sys; print(" ".join(o["checksum"] for o in json.load(sys.stdin)["outputs"]))'; }
    ca=$(sums <<< "$a"); cb=$(sums <<< "$b")
    echo "nhwc: $ca / nchw: $cb"
    [ -n "$ca" ]
    [ "$ca" = "$cb" ]
}

@test "3x3 conv (and dilated 2x2) == sum over taps of shifted channel matmuls" {
    run_identity conv3x3_shifted_matmuls.dnn
}
