#!/usr/bin/env bats
# Large graphs stay linear: name lookups are hashed (src/core/strmap.c) and JSON
# locations come from a line table (src/lang/json_read.c), so size is never
# quadratic.  Before, a 40k-node chain took 19 s to check, a 40k-param file
# 4.3 s and a JSON graph with 80k "values" 106 s; here 200k nodes, 100k params
# and 80k values each take about a second.  The time bounds are generous, for a
# loaded 2-core CI machine: a quadratic path blows through them by minutes.
load helpers

@test "a 200k-node chain checks in linear time" {
    python3 - "$BATS_TEST_TMPDIR/chain.dnn" <<'PY'
import sys
n = 200000
with open(sys.argv[1], "w") as f:
    f.write("dnn 1;\ngraph chain {\n  input x: f32[4, 4];\n  t0 = relu(x);\n")
    f.writelines(f"  t{i} = relu(t{i - 1});\n" for i in range(1, n))
    f.write(f"  output t{n - 1};\n}}\n")
PY
    run timeout 30 "$XDNN" check "$BATS_TEST_TMPDIR/chain.dnn"
    [ "$status" -eq 0 ]
    [[ "$output" == *"t199999 = relu(t199998"* ]]
}

@test "100k params and a graph that uses the last one check in linear time" {
    python3 - "$BATS_TEST_TMPDIR/params.dnn" <<'PY'
import sys
n = 100000
with open(sys.argv[1], "w") as f:
    f.write("dnn 1;\n")
    f.writelines(f"param P{i} = {i % 5 + 1};\n" for i in range(n))
    f.write(f"graph g {{\n  param Q{n} = P{n - 1} * 2;\n  input x: f32[Q{n}, P0];\n  y = relu(x);\n  output y;\n}}\n")
PY
    run timeout 30 "$XDNN" check "$BATS_TEST_TMPDIR/params.dnn" --set P99998=3
    [ "$status" -eq 0 ]
    [[ "$output" == *"f32[10, 1]"* ]]
}

@test "a JSON graph with 80k values is read in linear time, and still locates errors" {
    python3 - "$BATS_TEST_TMPDIR/values.dnn" <<'PY'
import sys
n = 80000
vals = ", ".join(str(i % 7 - 3) for i in range(n))
with open(sys.argv[1], "w") as f:
    f.write(f"dnn 1;\ngraph g {{\n  input x: f32[{n}];\n  weight b: f32[{n}] = values([{vals}]);\n"
            "  y = x + b;\n  output y;\n}\n")
PY
    xdnn convert "$BATS_TEST_TMPDIR/values.dnn" -o "$BATS_TEST_TMPDIR/values.json"
    # one value per line: 80k located items
    [ "$(wc -l < "$BATS_TEST_TMPDIR/values.json")" -gt 80000 ]
    run timeout 20 "$XDNN" check "$BATS_TEST_TMPDIR/values.json"
    [ "$status" -eq 0 ]
    # an error near the end is still located by line and column
    lineno=$(python3 - "$BATS_TEST_TMPDIR/values.json" "$BATS_TEST_TMPDIR/bad.json" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
k = max(i for i, l in enumerate(lines) if l.strip() == "-3,")
lines[k] = lines[k].replace("-3", '{"a": 1}')
open(sys.argv[2], "w").write("\n".join(lines))
print(k + 1)
PY
)
    run timeout 20 "$XDNN" check "$BATS_TEST_TMPDIR/bad.json"
    [ "$status" -ne 0 ]
    [[ "${lines[0]}" == *"bad.json:$lineno:16: /graphs/0/tensors/b/init/data/79996/a: error: unknown key"* ]]
}
