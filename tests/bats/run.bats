#!/usr/bin/env bats
# `xdnn run` on the CPU reference: every option, its files and its exit codes.
# Small --set sizes keep the whole file well under a minute on 2 cores.
load helpers

G="$ROOT/graphs/mlp_gelu.dnn"
SMALL=(--set T=8 --set D=16)
INPUTS=(x w1 b1 w2 b2)

# checksums of the outputs of a --format json run, space separated, in order
checksums() { python3 -c 'import json,sys; print(" ".join(o["name"] + "=" + o["checksum"] for o in json.load(sys.stdin)["outputs"]))'; }

@test "--format json is one valid JSON object with outputs, ops and checksums" {
    run xdnn run --device cpu "$G" "${SMALL[@]}" --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; d = json.load(sys.stdin); assert d["device"] == "cpu", d; assert [o["name"] for o in d["outputs"]] == ["y", "y_tanh"]; assert d["outputs"][0]["shape"] == [8, 16]; assert len(d["ops"]) > 0' <<< "$output"
}

@test "--set changes the shapes; a derived param follows" {
    run xdnn run --device cpu "$G" --set T=3 --set D=4 --keep h
    [ "$status" -eq 0 ]
    [[ "$output" == *"output y: f16[3, 4] @row"* ]]
    [[ "$output" == *"output h: f32[3, 16] @row"* ]]      # F = 4 * D
}

@test "--seed: same seed gives the same checksum, another seed a different one" {
    a=$(xdnn run --device cpu "$G" "${SMALL[@]}" --seed 5 --format json | checksums)
    b=$(xdnn run --device cpu "$G" "${SMALL[@]}" --seed 5 --format json | checksums)
    c=$(xdnn run --device cpu "$G" "${SMALL[@]}" --seed 6 --format json | checksums)
    echo "a=$a b=$b c=$c"
    [ -n "$a" ]
    [ "$a" = "$b" ]
    [ "$a" != "$c" ]
}

@test "--save writes NAME.npy per output; loading them back with --input reproduces the checksum" {
    # h.0 ([T, F]) is fed back as an input of a second graph that only adds b2 after w2
    xdnn run --device cpu "$G" "${SMALL[@]}" --save "$BATS_TEST_TMPDIR/out" --keep h
    [ -f "$BATS_TEST_TMPDIR/out/y.npy" ]
    [ -f "$BATS_TEST_TMPDIR/out/y_tanh.npy" ]
    [ -f "$BATS_TEST_TMPDIR/out/h.npy" ]
    head -c 6 "$BATS_TEST_TMPDIR/out/y.npy" | grep -q 'NUMPY'
    cat > "$BATS_TEST_TMPDIR/copy.dnn" <<'G2'
dnn 1;
graph copy {
  input t: f16[8, 16];
  y = identity(t);
  output y;
}
G2
    want=$(xdnn run --device cpu "$G" "${SMALL[@]}" --format json | checksums | cut -d' ' -f1)
    got=$(xdnn run --device cpu "$BATS_TEST_TMPDIR/copy.dnn" --input "t=$BATS_TEST_TMPDIR/out/y.npy" --format json | checksums)
    echo "want $want got $got"
    [ "$want" = "$got" ]
    # a '#' in a path is part of it (only FILE.safetensors#KEY takes a key)
    mkdir "$BATS_TEST_TMPDIR/run#2"
    cp "$BATS_TEST_TMPDIR/out/y.npy" "$BATS_TEST_TMPDIR/run#2/"
    got=$(xdnn run --device cpu "$BATS_TEST_TMPDIR/copy.dnn" --input "t=$BATS_TEST_TMPDIR/run#2/y.npy" --format json | checksums)
    [ "$want" = "$got" ]
}

@test "--save-inputs, then every input given by --input, reproduces the outputs (even under another seed)" {
    a=$(xdnn run --device cpu "$G" "${SMALL[@]}" --save-inputs "$BATS_TEST_TMPDIR/in" --format json | checksums)
    args=()
    for t in "${INPUTS[@]}"; do
        [ -f "$BATS_TEST_TMPDIR/in/$t.npy" ]
        args+=(--input "$t=$BATS_TEST_TMPDIR/in/$t.npy")
    done
    b=$(xdnn run --device cpu "$G" "${SMALL[@]}" --seed 1234 "${args[@]}" --format json | checksums)
    echo "a=$a b=$b"
    [ -n "$a" ]
    [ "$a" = "$b" ]
}

@test "--expect: a golden passes; a golden with one changed element fails (6) naming its coordinates" {
    xdnn run --device cpu "$G" "${SMALL[@]}" --save "$BATS_TEST_TMPDIR/gold" >/dev/null
    run xdnn run --device cpu "$G" "${SMALL[@]}" --expect "$BATS_TEST_TMPDIR/gold"
    [ "$status" -eq 0 ]
    [[ "$output" == *"expect y: ok"* ]]
    [[ "$output" == *"expect y_tanh: ok"* ]]
    python3 - "$BATS_TEST_TMPDIR/gold/y.npy" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
assert b[:6] == b'\x93NUMPY'
hlen = struct.unpack('<H', b[8:10])[0]
head = b[10:10 + hlen].decode()
assert "'<f2'" in head and '(8, 16)' in head, head
off = 10 + hlen + 2 * (3 * 16 + 5)          # element [3, 5] of an f16 [8, 16]
b[off:off + 2] = struct.pack('<e', 7.0)
open(p, 'wb').write(b)
PY
    run xdnn run --device cpu "$G" "${SMALL[@]}" --expect "$BATS_TEST_TMPDIR/gold"
    echo "$output"
    [ "$status" -eq 6 ]
    [[ "$output" == *"expect y: FAILED"* ]]
    [[ "$output" == *"at [3, 5]:"*"expected 7"* ]]
    [[ "$output" == *"expect y_tanh: ok"* ]]
}

@test "--keep reports intermediate tensors; an unknown name is a usage error; --print-full prints every value" {
    run xdnn run --device cpu "$G" "${SMALL[@]}" --keep h,h.0
    [ "$status" -eq 0 ]
    [[ "$output" == *"output h: f32[8, 64]"* ]]
    [[ "$output" == *"output h.0: f32[8, 64]"* ]]
    line=$(grep -m1 '^  values' <<< "$output")
    [ "$(tr -cd ',' <<< "$line" | wc -c)" -eq 8 ]     # the first 8 values, then ", ..."
    [[ "$line" == *"..."* ]]
    run xdnn run --device cpu "$G" "${SMALL[@]}" --keep nope
    [ "$status" -eq 1 ]
    [[ "$output" == *"no intermediate tensor 'nope'"* ]]
    run xdnn run --device cpu "$G" "${SMALL[@]}" --print-full
    line=$(grep -m1 '^  values' <<< "$output")
    [ "$(tr -cd ',' <<< "$line" | wc -c)" -eq 127 ]   # 128 values
    [[ "$line" != *"..."* ]]
}

@test "a failing --input leaves no output file behind" {
    xdnn run --device cpu "$G" "${SMALL[@]}" --save-inputs "$BATS_TEST_TMPDIR/in" >/dev/null
    head -c 150 "$BATS_TEST_TMPDIR/in/x.npy" > "$BATS_TEST_TMPDIR/trunc.npy"
    run xdnn run --device cpu "$G" "${SMALL[@]}" --input "x=$BATS_TEST_TMPDIR/trunc.npy" --save "$BATS_TEST_TMPDIR/o"
    echo "$output"
    [ "$status" -eq 5 ]
    [[ "$output" == *"trunc.npy: error: truncated .npy data: expected 256 bytes"* ]]
    [ ! -e "$BATS_TEST_TMPDIR/o/y.npy" ]
    [ ! -e "$BATS_TEST_TMPDIR/o/y_tanh.npy" ]
}

@test "--save where a file cannot be created is an I/O error (5), and no half-written file remains" {
    touch "$BATS_TEST_TMPDIR/blocker"
    run xdnn run --device cpu "$G" "${SMALL[@]}" --save "$BATS_TEST_TMPDIR/blocker"
    [ "$status" -eq 5 ]
    [[ "$output" == *"blocker/y.npy: error: cannot create"* ]]
    # y.npy can be written, y_tanh.npy cannot: what exists must be complete
    mkdir -p "$BATS_TEST_TMPDIR/o/y_tanh.npy"
    run xdnn run --device cpu "$G" "${SMALL[@]}" --save "$BATS_TEST_TMPDIR/o"
    [ "$status" -eq 5 ]
    [[ "$output" == *"y_tanh.npy: error: cannot write"* ]]
    for f in "$BATS_TEST_TMPDIR"/o/*; do
        [ -d "$f" ] && continue
        [[ "$f" == *.npy ]] || { echo "stray file $f"; false; }
        [ "$(stat -c %s "$f")" -eq $((128 + 2 * 8 * 16)) ]
    done
}

@test "a truncated .npy via --input is exit 5 with a clear message" {
    printf '\x93NUMPY\x01\x00' > "$BATS_TEST_TMPDIR/short.npy"
    run xdnn run --device cpu "$G" "${SMALL[@]}" --input "x=$BATS_TEST_TMPDIR/short.npy"
    echo "$output"
    [ "$status" -eq 5 ]
    [[ "$output" == *"short.npy: error:"* ]]
}

@test "--device gpu without a usable GPU exits 7 with 'no usable GPU'" {
    if nvidia-smi >/dev/null 2>&1; then skip "this machine has a GPU"; fi
    run xdnn run --device gpu "$G" "${SMALL[@]}"
    [ "$status" -eq 7 ]
    [[ "$output" == *"no usable GPU"* ]]
}

@test "--device auto without a GPU falls back to the CPU reference with a note" {
    if nvidia-smi >/dev/null 2>&1; then skip "this machine has a GPU"; fi
    run xdnn run "$G" "${SMALL[@]}" --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; t = sys.stdin.read(); d = json.loads(t[t.index("{"):]); assert d["device"] == "cpu"' <<< "$output"
}

@test "a graph that cannot fit in host memory is refused before anything runs (exit 8); check says what it needs" {
    printf 'graph big {\n  input x: f32[100000, 1000000];\n  y = relu(x);\n  output y;\n}\n' > "$BATS_TEST_TMPDIR/big.dnn"
    run xdnn check "$BATS_TEST_TMPDIR/big.dnn"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "memory: the CPU reference needs 745.1 GiB of tensors + 1.5 TiB of scratch" ]
    run xdnn run "$BATS_TEST_TMPDIR/big.dnn" --device cpu --max-memory 64G
    [ "$status" -eq 8 ]
    [ "${lines[0]}" = "xdnn run: graph 'big' needs 2.2 TiB of host memory on the CPU reference (tensors 745.1 GiB + scratch 1.5 TiB), over the limit of 64.0 GiB (--max-memory); nothing was run" ]
    run xdnn run "$G" --device cpu "${SMALL[@]}" --max-memory 1K
    [ "$status" -eq 8 ]
    [[ "${lines[0]}" == *"over the limit of 1.0 KiB (--max-memory); nothing was run" ]]
    run xdnn run "$G" --device cpu "${SMALL[@]}" --max-memory 1G
    [ "$status" -eq 0 ]
    run xdnn run "$G" --device cpu "${SMALL[@]}" --max-memory 12Q
    [ "$status" -eq 1 ]
}

@test "--format json tells nan, inf and -inf apart (as strings; JSON has no such numbers)" {
    printf 'graph g {\n  input x: f32[4] = uniform(lo=0.5, hi=1);\n  n = log(x - 2);\n  p = x / 0.0;\n  m = neg(x) / 0.0;\n  output n, p, m;\n}\n' > "$BATS_TEST_TMPDIR/nf.dnn"
    run xdnn run "$BATS_TEST_TMPDIR/nf.dnn" --device cpu --format json
    [ "$status" -eq 0 ]
    python3 -c '
import json, sys
o = {t["name"]: t for t in json.loads(sys.argv[1])["outputs"]}
assert o["n"]["values"] == ["nan"] * 4 and o["n"]["nan"] == 4, o["n"]
assert o["p"]["values"] == ["inf"] * 4 and o["m"]["values"] == ["-inf"] * 4, (o["p"], o["m"])' "$output"
}

@test "--input takes as many files as a training step has weights (300 here)" {
    cd "$BATS_TEST_TMPDIR"
    python3 - <<'P'
n = 300
lines = ["graph many {"] + ["  input x%d: f32[2];" % i for i in range(n)]
lines += ["  y = " + " + ".join("x%d" % i for i in range(n)) + ";", "  output y;", "}"]
open("many.dnn", "w").write("\n".join(lines) + "\n")
import struct
for i in range(n):
    open("x%d.raw" % i, "wb").write(struct.pack("<2f", 1, 2))
P
    args=()
    for i in $(seq 0 299); do args+=(--input "x$i=x$i.raw"); done
    run xdnn run many.dnn --device cpu "${args[@]}" --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; v = json.loads(sys.argv[1])["outputs"][0]["values"]; assert v == [300, 600], v' "$output"
}

@test "--save FILE.safetensors: every output in one file in its own dtype; --save-inputs too, and they load back" {
    xdnn run --device cpu "$G" "${SMALL[@]}" --save "$BATS_TEST_TMPDIR/o.safetensors" --save-inputs "$BATS_TEST_TMPDIR/i.safetensors" > /dev/null
    python3 - "$BATS_TEST_TMPDIR" <<'P'
import json, struct, sys
for f, names in (("o", {"y", "y_tanh"}), ("i", {"x", "w1", "b1", "w2", "b2"})):
    b = open(sys.argv[1] + "/%s.safetensors" % f, "rb").read()
    h = json.loads(b[8:8 + struct.unpack("<Q", b[:8])[0]])
    h.pop("__metadata__", None)
    assert set(h) == names and all(v["dtype"] == "F16" for v in h.values()), h
P
    want=$(xdnn run --device cpu "$G" "${SMALL[@]}" --format json | checksums)
    args=()
    for t in "${INPUTS[@]}"; do args+=(--input "$t=$BATS_TEST_TMPDIR/i.safetensors"); done
    got=$(xdnn run --device cpu "$G" "${SMALL[@]}" "${args[@]}" --seed 99 --format json | checksums)
    [ "$want" = "$got" ]
}

@test "inf and nan are predefined names in expressions, as dnn(5) says, in .dnn and through JSON" {
    printf 'graph g {\n  input x: f32[2] = uniform(lo=0.5, hi=1);\n  y = x + inf;\n  z = x * nan;\n  w = x - inf;\n  output y, z, w;\n}\n' > "$BATS_TEST_TMPDIR/names.dnn"
    xdnn convert "$BATS_TEST_TMPDIR/names.dnn" -o "$BATS_TEST_TMPDIR/names.json"
    for f in names.dnn names.json; do
        run xdnn run "$BATS_TEST_TMPDIR/$f" --device cpu --format json
        [ "$status" -eq 0 ] || { echo "$f: $output"; false; }
        python3 -c 'import json,sys; o = {t["name"]: t["values"] for t in json.loads(sys.argv[1])["outputs"]}; assert o == {"y": ["inf"] * 2, "z": ["nan"] * 2, "w": ["-inf"] * 2}, o' "$output"
    done
}

@test "a .npy of untyped bytes (|V1) takes the declared fp8 type: e5m2 bytes are not decoded as e4m3" {
    cd "$BATS_TEST_TMPDIR"
    python3 -c "
import struct
h = \"{'descr': '|V1', 'fortran_order': False, 'shape': (4,), }\"
h += ' ' * (63 - (10 + len(h)) % 64) + '\n'
open('v1.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + bytes([0x3c, 0x40, 0xbc, 0x7c]))"
    printf 'graph g {\n  input x: fp8_e5m2[4];\n  y = cast(x, dtype=f32);\n  output y;\n}\n' > e5.dnn
    printf 'graph g {\n  input x: fp8_e5m2[4] = load(path="v1.npy");\n  y = cast(x, dtype=f32);\n  output y;\n}\n' > e5load.dnn
    for args in "e5.dnn --input x=v1.npy" "e5load.dnn"; do
        run xdnn run $args --device cpu --format json
        [ "$status" -eq 0 ]
        python3 -c 'import json,sys; v = json.loads(sys.argv[1])["outputs"][0]["values"]; assert v == [1, 2, -1, "inf"], v' "$output"
    done
}

@test "--input FILE.npz (np.savez): an array by the input's name or FILE.npz#KEY (the last of a name written twice, as np.load); compressed and missing arrays are clear errors" {
    cd "$BATS_TEST_TMPDIR"
    python3 - <<'P'
import struct, zipfile
def npy(shape, values):
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ("%d," % shape[0] if len(shape) == 1 else ", ".join(map(str, shape)))
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack("<%df" % len(values), *values)
for name, method in (("a.npz", zipfile.ZIP_STORED), ("z.npz", zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile(name, "w", method) as z:  # what np.savez / np.savez_compressed write
        z.writestr("x.npy", npy((4,), [1, -2, 3, -4]))
        z.writestr("other.npy", npy((4,), [5, 6, 7, 8]))
import warnings
warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
with zipfile.ZipFile("dup.npz", "w") as z:  # a name written twice: zipfile (and np.load) read the last
    z.writestr("x.npy", npy((4,), [9, 9, 9, 9]))
    z.writestr("x.npy", npy((4,), [1, 2, -3, 4]))
assert zipfile.ZipFile("dup.npz").read("x.npy")[-4:] == struct.pack("<f", 4)
P
    printf 'graph g {\n  input x: f32[4];\n  y = relu(x);\n  output y;\n}\n' > r.dnn
    run xdnn run r.dnn --device cpu --input x=a.npz --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; v = json.loads(sys.argv[1])["outputs"][0]["values"]; assert v == [1, 0, 3, 0], v' "$output"
    run xdnn run r.dnn --device cpu --input x=a.npz#other --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; v = json.loads(sys.argv[1])["outputs"][0]["values"]; assert v == [5, 6, 7, 8], v' "$output"
    run xdnn run r.dnn --device cpu --input x=dup.npz --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; v = json.loads(sys.argv[1])["outputs"][0]["values"]; assert v == [1, 2, 0, 4], v' "$output"
    run xdnn run r.dnn --device cpu --input x=a.npz#nope
    [ "$status" -eq 5 ]
    [[ "$output" == *"a.npz: error: no array 'nope' in this .npz (2 entries)"* ]]
    run xdnn run r.dnn --device cpu --input x=z.npz
    [ "$status" -eq 5 ]
    [[ "$output" == *"'x.npy' in this .npz is compressed (np.savez_compressed); save it with np.savez"* ]]
    head -c 100 a.npz > cut.npz
    run xdnn run r.dnn --device cpu --input x=cut.npz
    [ "$status" -eq 5 ]
    [[ "$output" == *"not a readable .npz"* ]]
}

# one output's checksum, by name, from a --format json run
checksum_of() { python3 -c 'import json,sys; print([o["checksum"] + " " + o["dtype"] for o in json.load(sys.stdin)["outputs"] if o["name"] == sys.argv[1]][0])' "$1"; }

@test "marking a tensor output changes no other result: its consumers read the unrounded value (text, JSON, plan)" {
    cd "$BATS_TEST_TMPDIR"
    # y is f16 when marked (io=f16) and f32 when virtual: z must not see the difference
    printf 'graph g(io=f16, seed=3) {\n  input x: f16[4, 8] = randn();\n  y = x * 1.001;\n  z = reduce(y, op="sum", axes=[1]);\n  output y: bf16, z;\n}\n' > mark.dnn
    sed 's/output y: bf16, z;/output z;/' mark.dnn > nomark.dnn
    sed 's/output y: bf16, z;/output y, z;/' mark.dnn > plain.dnn
    want=$(xdnn run nomark.dnn --device cpu --format json | checksum_of z)
    [ "$(xdnn run mark.dnn --device cpu --format json | checksum_of z)" = "$want" ]
    [ "$(xdnn run plain.dnn --device cpu --format json | checksum_of z)" = "$want" ]
    # the output itself is the rounded copy, in its declared dtype
    [[ "$(xdnn run mark.dnn --device cpu --format json | checksum_of y)" == *" bf16" ]]
    # the output's own annotation survives JSON and text round trips, apart from a target's
    xdnn convert mark.dnn -o mark.json
    grep -q '"output_dtype":[[:space:]]*"bf16"' mark.json
    [ "$(xdnn run mark.json --device cpu --format json | checksum_of z)" = "$want" ]
    xdnn convert mark.json -o back.dnn
    grep -q 'output y: bf16, z;' back.dnn
    # a plan runs what run runs
    xdnn plan mark.dnn --device cpu -o mark.xplan
    [ "$(xdnn run mark.xplan --device cpu --format json | checksum_of z)" = "$want" ]
    # an annotation on the assignment's target types the value itself: z changes (the test can fail)
    sed 's/  y = x/  y: f16 = x/' nomark.dnn > typed.dnn
    [ "$(xdnn run typed.dnn --device cpu --format json | checksum_of z)" != "$want" ]
}

# f32 .npy file SRC rewritten to DST with each value v[i] replaced by python expression EXPR(v, i)
perturb_npy() {
    python3 - "$1" "$2" "$3" <<'P'
import os, random, struct, sys
src, dst, expr = sys.argv[1:]
b = open(src, "rb").read()
off = 10 + struct.unpack("<H", b[8:10])[0]
assert "'<f4'" in b[:off].decode("latin1")
v = struct.unpack("<%df" % ((len(b) - off) // 4), b[off:])
random.seed(1)
out = [eval(expr, {"random": random, "nan": float("nan")}, {"v": x, "i": i}) for i, x in enumerate(v)]
os.makedirs(os.path.dirname(dst), exist_ok=True)
open(dst, "wb").write(b[:off] + struct.pack("<%df" % len(out), *out))
P
}

@test "--norm: --expect passes by relative norm where element-wise fails, and fails when the norm is too large" {
    cd "$BATS_TEST_TMPDIR"
    printf 'graph g(seed=2) {\n  input x: f32[16, 32] = randn();\n  weight w: f32[32, 8] = randn();\n  y = matmul(x, w);\n  output y;\n}\n' > n.dnn
    xdnn run n.dnn --device cpu --save gold > /dev/null
    # every element off by up to 1e-3 relative: the norm is about 5.8e-4
    perturb_npy gold/y.npy off/y.npy 'v * (1 + random.uniform(-1e-3, 1e-3))'
    run xdnn run n.dnn --device cpu --expect off
    [ "$status" -eq 6 ]
    [[ "$output" == *"expect y: FAILED  "*" elements differ (rtol 0.0001, atol 1e-05)"* ]]
    run xdnn run n.dnn --device cpu --expect off --norm=1e-3
    [ "$status" -eq 0 ]
    [[ "$output" == *"expect y: ok  rel norm 0.000"*" <= 0.001 (norm mode); element-wise "*" of 128 differ"* ]]
    # the mode can fail: a tighter bound, and the default (f32 matmul: 1e-4)
    run xdnn run n.dnn --device cpu --expect off --norm=1e-4
    [ "$status" -eq 6 ]
    [[ "$output" == *"expect y: FAILED  rel norm 0.000"*" > 0.0001 (norm mode)"* ]]
    run xdnn run n.dnn --device cpu --expect off --norm
    [ "$status" -eq 6 ]
    # the exact goldens pass; a NaN where the reference has a number fails whatever the bound
    run xdnn run n.dnn --device cpu --expect gold --norm
    [ "$status" -eq 0 ]
    perturb_npy gold/y.npy nan/y.npy 'nan if i == 3 else v'
    run xdnn run n.dnn --device cpu --expect nan --norm=1
    [ "$status" -eq 6 ]
    [[ "$output" == *"NaN or Inf at different places"* ]]
    # JSON says which mode judged
    xdnn run n.dnn --device cpu --expect off --norm=1e-3 --format json |
        python3 -c 'import json,sys; c = json.load(sys.stdin)["checks"][0]; assert c["mode"] == "norm" and c["ok"] and c["rtol"] == 1e-3, c'
}

@test "--norm and --check=norm: usage errors name what is wrong" {
    cd "$BATS_TEST_TMPDIR"
    run xdnn run "$G" --device cpu "${SMALL[@]}" --norm
    [ "$status" -eq 1 ]
    [[ "$output" == *"--norm sets how --check and --expect compare; give one of them"* ]]
    run xdnn run "$G" --device cpu --expect x --norm=0
    [ "$status" -eq 1 ]
    [[ "$output" == *"the relative-norm tolerance must be a positive number, got '0'"* ]]
    run xdnn run "$G" --device cpu --check=normal
    [ "$status" -eq 1 ]
    [[ "$output" == *"--check takes no value or norm[:RTOL], got 'normal'"* ]]
    run xdnn run "$G" --device cpu --check=norm:1e-2
    [ "$status" -eq 1 ]
    [[ "$output" == *"--check compares the GPU with the CPU reference; it needs --device gpu"* ]]
}

@test "the timing table widens its name column for long node names and shortens the longest in the middle" {
    cd "$BATS_TEST_TMPDIR"
    long=frag/inner/a_name_well_beyond_any_sensible_column_width_of_a_table_row
    printf 'graph g {\n  input x: f32[4];\n  a_rather_long_node_name_for_the_table = relu(x);\n  y = exp(a_rather_long_node_name_for_the_table);\n  `%s` = neg(y);\n  output `%s`;\n}\n' $long $long > long.dnn
    xdnn run long.dnn --device cpu | sed -n '/^time/,$p' > table
    cat table
    # every row's time ends at the same column
    [ "$(tail -n +2 table | awk '{ print length($0) }' | sort -u | wc -l)" -eq 1 ]
    grep -q '^  a_rather_long_node_name_for_the_table  *relu  ' table
    grep -q '^  frag/inner/a_name_well\.\.\.mn_width_of_a_table_row neg  ' table
}

@test "a CPU plan whose partitions list no considered engines runs (its candidate lists were leaked: valgrind suite)" {
    cd "$BATS_TEST_TMPDIR"
    printf 'graph g {\n  input x: f32[4] = arange(start=-2);\n  y = abs(x);\n  output y;\n}\n' > a.dnn
    xdnn plan a.dnn --device cpu -o a.xplan
    # every partition's "considered" emptied, the checksum made again (man/xdnn-plan.5: FNV-1a over the bytes)
    python3 - <<'P'
import json, struct
b = open("a.xplan", "rb").read()
n = struct.unpack_from("<I", b, 12)[0]
at, out = 16, bytearray(b[:16])
for _ in range(n):
    t, ln = b[at:at + 4], struct.unpack_from("<Q", b, at + 4)[0]
    body = b[at + 12:at + 12 + ln]
    if t == b"PART":
        parts = json.loads(body)
        for p in parts:
            p["considered"] = []
        body = json.dumps(parts).encode()
    out += t + struct.pack("<Q", len(body)) + body
    at += 12 + ln
h = 0xcbf29ce484222325
for c in out:
    h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
open("e.xplan", "wb").write(out + b"CSUM" + struct.pack("<QQ", 8, h))
P
    out=$(xdnn run e.xplan --device cpu --format json 2> /dev/null)
    python3 -c 'import json,sys; v = json.loads(sys.argv[1])["outputs"][0]["values"]; assert v == [2, 1, 0, 1], v' "$out"
}
