#!/usr/bin/env bats
# The quantized compute ops at the command line: the scaled_conv example of
# man/dnn.5 runs on the CPU reference with the dtypes it promises.
# (tests/unit/test_quant.c and test_quant_conv.c check the values; the
# identity graph tests/identities/scaled_conv_is_dequantized_conv.dnn checks
# scaled_conv to the bit; plan.bats checks which GPU engine takes it.)
load helpers

@test "the scaled_conv example of man/dnn.5 runs: h is i8 and uses its range, y is bf16, no NaN" {
    man_example scaled-conv-example "$BATS_TEST_TMPDIR/ex.dnn"
    grep -q 'y_scale=s_mid' "$BATS_TEST_TMPDIR/ex.dnn"
    run xdnn run "$BATS_TEST_TMPDIR/ex.dnn" --device cpu --format json
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    python3 -c '
import json, sys
outs = {o["name"]: o for o in json.loads(sys.argv[1])["outputs"]}
h, y = outs["h"], outs["y"]
assert h["dtype"] == "i8" and h["shape"] == [2, 32, 14, 14], (h["dtype"], h["shape"])
assert y["dtype"] == "bf16" and y["shape"] == [2, 32, 14, 14], (y["dtype"], y["shape"])
for o in (h, y):
    assert o["nan"] == 0 and o["std"] > 0, o
assert all(float(v) == int(float(v)) for v in h["values"]), h["values"]
assert 10 < h["max"] <= 127 and -128 <= h["min"] < -10, (h["min"], h["max"])
' "$output"
}
