#!/usr/bin/env bash
# seeds.sh NAME XDNN SEEDS — fill the folder SEEDS with starting inputs for the
# libFuzzer harness tests/fuzz/NAME.c (`make fuzz`): files of its format found
# in graphs/ and tests/, plus ones made here for formats the tree ships none
# of (JSON graphs, .npy inputs, plans, safetensors, npz).  XDNN is the fuzz build's
# xdnn.  A harness that starts from nothing spends its whole time budget
# finding the magic bytes, so every harness gets seeds.
set -uo pipefail
name=${1:?NAME}; xdnn=${2:?XDNN}; seeds=${3:?SEEDS}
ext=${name#fuzz_}
export ASAN_OPTIONS=detect_leaks=0
flat() { echo "$1" | tr / _; }
find graphs tests -name "*.$ext" -size -64k -exec cp -t "$seeds" {} + 2>/dev/null
case $ext in
json)
    for g in $(find graphs tests -name '*.dnn'); do
        "$xdnn" convert "$g" -o "$seeds/$(flat "$g").json" >/dev/null 2>&1
    done ;;
npy)
    for g in tests/identities/*.dnn; do
        "$xdnn" run --device cpu "$g" --save-inputs "$seeds/$(basename "$g")" >/dev/null 2>&1
    done
    find "$seeds" -mindepth 2 -name '*.npy' | while read -r f; do mv "$f" "$seeds/$(flat "${f#"$seeds"/}")"; done ;;
plan)
    # small CPU plans of the shipped graphs (parameters at their smallest sizes)
    "$xdnn" plan graphs/mlp_gelu.dnn --device cpu --set T=2 --set D=4 -o "$seeds/mlp_gelu.xplan" >/dev/null 2>&1
    for g in tests/identities/*.dnn; do
        "$xdnn" plan "$g" --device cpu -o "$seeds/$(basename "$g" .dnn).xplan" >/dev/null 2>&1
    done
    # and the plans that once broke the reader (the find above looks for *.plan)
    cp tests/fuzz/regress/*.xplan "$seeds/" 2>/dev/null || true ;;
safetensors)
    # a few well-formed files: one tensor, two tensors ("a" among them), every
    # dtype name the reader knows of, metadata, an empty tensor
    python3 - "$seeds" <<'P'
import json, struct, sys
def write(path, tensors, meta=None):
    header, blob = {}, b""
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    if meta:
        header["__metadata__"] = meta
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + blob)
d = sys.argv[1]
write(d + "/one.safetensors", {"x": ("F32", [2, 3], struct.pack("<6f", 1, -2, 3.5, 0, 1e-3, -7))})
write(d + "/two.safetensors", {"a": ("F16", [4], struct.pack("<4e", 1, 2, -3, 0.5)),
                                "b": ("I32", [2, 2], struct.pack("<4i", 1, -2, 3, 4))}, {"format": "pt"})
sizes = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
         "F8_E4M3": 1, "F8_E5M2": 1}
for dt, n in sizes.items():
    write(d + "/a_%s.safetensors" % dt.lower(), {"a": (dt, [3], bytes(range(1, 3 * n + 1)))})
write(d + "/empty.safetensors", {"a": ("F32", [0, 4], b"")})
P
    ;;
npz)
    # np.savez-like archives (stored entries), one deflated, one with a comment
    python3 - "$seeds" <<'P'
import struct, sys, zipfile
def npy(values):
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack("<%df" % len(values), *values)
d = sys.argv[1]
for name, method, comment in (("one", zipfile.ZIP_STORED, b""), ("deflated", zipfile.ZIP_DEFLATED, b""),
                              ("comment", zipfile.ZIP_STORED, b"an archive comment")):
    with zipfile.ZipFile("%s/%s.npz" % (d, name), "w", method) as z:
        z.comment = comment
        z.writestr("x.npy", npy([1, -2, 3.5]))
        z.writestr("y.npy", npy([4]))
P
    ;;
esac
exit 0
