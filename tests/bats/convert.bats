#!/usr/bin/env bats
# `xdnn convert`: .dnn <-> JSON round trips, --to, --specialize, and JSON
# syntax/semantic errors with line:col.
load helpers

G="$ROOT/graphs/conv_bias_relu.dnn"
T="$BATS_TEST_TMPDIR"

checksums() { python3 -c 'import json,sys; print(" ".join(o["name"] + "=" + o["checksum"] for o in json.load(sys.stdin)["outputs"]))'; }

@test "dnn -> JSON -> JSON is byte-identical, and the JSON is valid with the documented top-level keys" {
    xdnn convert "$G" -o "$T/a.json"
    xdnn convert "$T/a.json" -o "$T/b.json"
    cmp "$T/a.json" "$T/b.json"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "xdnn-graph" and d["version"] == 1, d
assert set(d) <= {"format", "version", "sources", "default_graph", "params", "asserts", "graphs"}, set(d)
g = d["graphs"][0]
assert g["context"]["io"] == "f16" and g["context"]["seed"] == 1, g["context"]
assert g["tensors"]["x"]["layout"] == "nhwc"
assert [n["name"] for n in g["nodes"]] == ["y.0", "y.1", "y"], g["nodes"]
assert [n["op"] for n in g["nodes"]] == ["conv", "add", "relu"]
assert g["tensors"]["y.0"]["kind"] == "virtual"
' "$T/a.json"
}

# The two JSON files are equal once provenance ("loc", "origin", "sources":
# where each thing was written) is removed; else print the first difference.
same_but_provenance() {
    python3 -c '
import json, sys
PROV = ("loc", "origin", "sources")
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in PROV}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
def first_diff(a, b, path):
    if type(a) != type(b):
        return path
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return path + "/" + k
            d = first_diff(a[k], b[k], path + "/" + k)
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return path + " (length)"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, path + "/" + str(i))
            if d:
                return d
        return None
    return None if a == b else path
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
d = first_diff(a, b, "")
if d is not None:
    sys.exit("%s and %s differ beyond provenance at %s" % (sys.argv[1], sys.argv[2], d or "/"))
' "$1" "$2"
}

@test "dnn -> JSON -> dnn -> JSON is a fixed point (up to provenance); dnn text is then stable; all forms run alike" {
    xdnn convert "$G" -o "$T/a.json"
    xdnn convert "$T/a.json" -o "$T/b.dnn"
    xdnn convert "$T/b.dnn" -o "$T/c.json"
    same_but_provenance "$T/a.json" "$T/c.json"
    xdnn convert "$T/c.json" -o "$T/d.dnn"
    cmp "$T/b.dnn" "$T/d.dnn"
    s0=$(xdnn run --device cpu "$G" --set N=1 --set H=4 --set W=4 --format json | checksums)
    s1=$(xdnn run --device cpu "$T/a.json" --set N=1 --set H=4 --set W=4 --format json | checksums)
    s2=$(xdnn run --device cpu "$T/b.dnn" --set N=1 --set H=4 --set W=4 --format json | checksums)
    echo "$s0 / $s1 / $s2"
    [ -n "$s0" ] && [ "$s0" = "$s1" ] && [ "$s0" = "$s2" ]
}

@test "fragments and includes are expanded in the JSON (generated names h.0/y.0)" {
    xdnn convert "$ROOT/graphs/mlp_gelu.dnn" -o "$T/m.json"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [n["name"] for n in d["graphs"][0]["nodes"]]
assert "h.0/y.0" in names, names
assert any(s.endswith("lib/layers.dnn") for s in d["sources"]), d["sources"]
' "$T/m.json"
}

@test "--to picks the form when the output is stdout" {
    run xdnn convert "$G" -o - --to dnn
    [ "$status" -eq 0 ]
    [[ "$output" == "dnn 1;"* ]]
    [[ "$output" == *"graph conv_bias_relu(io=f16"* ]]
    run xdnn convert "$G" -o - --to json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; json.load(sys.stdin)' <<< "$output"
    run xdnn convert "$G" -o -
    [ "$status" -eq 1 ]
}

@test "--specialize replaces a param value in the output" {
    xdnn convert "$G" -o "$T/s.json" --specialize N=3 --specialize H=5
    python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["params"]
assert p["N"]["value"] == 3 and p["H"]["value"] == 5 and p["C"]["value"] == 64, p
' "$T/s.json"
    run xdnn check "$T/s.json"
    [ "$status" -eq 0 ]
    [[ "$output" == *"input   x            f16[3, 64, 5, 28] @nhwc"* ]]
    run xdnn convert "$G" -o "$T/s2.json" --specialize NOPE=1
    [ "$status" -ne 0 ]
    [[ "$output" == *"NOPE"* ]]
}

@test "a JSON syntax error is exit 2 with file:line:col" {
    printf '{\n  "format": "xdnn-graph",\n  "version": 1,\n  "graphs": [ , ]\n}\n' > "$T/bad.json"
    run xdnn convert "$T/bad.json" -o "$T/out.dnn"
    echo "$output"
    [ "$status" -eq 2 ]
    [[ "$output" == *"bad.json:4:15: error: JSON syntax error"* ]]
    [ ! -e "$T/out.dnn" ]
}

@test "an unknown JSON key is an error naming the JSON pointer; x- keys are allowed" {
    echo '{"format":"xdnn-graph","version":1,"graphs":[{"name":"g","context":{},"tensors":{},"nodes":[],"bogus":1}]}' > "$T/k.json"
    run xdnn convert "$T/k.json" -o "$T/k.dnn"
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"/graphs/0/bogus: error: unknown key \"bogus\""* ]]
    xdnn convert "$G" -o "$T/a.json"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); d["x-note"] = "mine"; d["graphs"][0]["x-owner"] = 1
json.dump(d, open(sys.argv[2], "w"))
' "$T/a.json" "$T/x.json"
    run xdnn check "$T/x.json"
    [ "$status" -eq 0 ]
}

@test "a .dnn syntax error is exit 2 with line:col and a caret" {
    printf 'dnn 1;\ngraph g {\n  input x: f32[2];\n  y = relu(x)\n  output y;\n}\n' > "$T/s.dnn"
    run xdnn convert "$T/s.dnn" -o "$T/s.json"
    echo "$output"
    [ "$status" -eq 2 ]
    [[ "$output" =~ s\.dnn:5:[0-9]+:\ error: ]]
    [[ "$output" == *"^"* ]]
    [ ! -e "$T/s.json" ]
}

@test "identity graphs (perm/strides layouts, fragments, split, checks, scalars) survive dnn -> JSON -> dnn and still pass" {
    for g in "$ROOT"/tests/identities/*.dnn; do
        b=$(basename "$g" .dnn)
        xdnn convert "$g" -o "$T/$b.json"
        xdnn convert "$T/$b.json" -o "$T/$b.dnn"
        xdnn convert "$T/$b.dnn" -o "$T/$b.2.json"
        same_but_provenance "$T/$b.json" "$T/$b.2.json" || { echo "$b"; false; }
        run xdnn run --device cpu "$T/$b.dnn"
        [ "$status" -eq 0 ] || { echo "$b.dnn: $output"; false; }
    done
}
