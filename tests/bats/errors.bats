#!/usr/bin/env bats
# The error goldens of tests/errors/ at the command line: `xdnn check` prints
# exactly the golden diagnostics on stderr (nothing on stdout) and exits with
# the class of the error (man xdnn, EXIT STATUS): 2 syntax, 3 semantic or
# shape, 5 file I/O.  tests/unit/test_errors.c pins the same text through the
# library; this file pins what users see, exit codes included.
load helpers

# Goldens whose first error is a syntax error (exit 2) or an I/O error (exit 5);
# every other golden is a semantic or shape error (exit 3).  A new golden
# whose first error is a syntax or I/O error must be added here.
SYNTAX="01-missing-semicolon 02-unexpected-paren 03-dims-without-comma 04-unterminated-string
        05-stray-character 06-integer-literal-overflow 24-keyword-as-name 38-unsupported-version
        39-several-syntax-errors 52-non-ascii 57-unexpected-end-of-file 59-expression-too-deep
        60-param-chain-too-deep"
IO="22-include-missing 62-include-directory 63-include-device"

expected_status() {
    local b=$1
    for s in $SYNTAX; do [ "$s" = "$b" ] && { echo 2; return; }; done
    for s in $IO; do [ "$s" = "$b" ] && { echo 5; return; }; done
    echo 3
}

@test "every error golden: exact stderr, empty stdout, exit code of its class" {
    cd "$ROOT"
    n=0
    for f in tests/errors/*.dnn; do
        b=$(basename "$f" .dnn)
        want=$(expected_status "$b")
        xdnn check "$f" > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" && st=0 || st=$?
        [ "$st" -eq "$want" ] || { echo "$b: exit $st, expected $want"; cat "$BATS_TEST_TMPDIR/err"; false; }
        [ ! -s "$BATS_TEST_TMPDIR/out" ] || { echo "$b: stdout is not empty"; false; }
        diff -u "tests/errors/$b.expected" "$BATS_TEST_TMPDIR/err" || { echo "$b: stderr differs from the golden"; false; }
        n=$((n + 1))
    done
    [ "$n" -ge 40 ]
}

@test "every golden diagnostic starts with file:line:col: error: and shows a caret" {
    cd "$ROOT"
    for e in tests/errors/*.expected; do
        head -1 "$e" | grep -Eq '^tests/errors/[^:]+\.dnn:[0-9]+:[0-9]+: error: ' ||
            { echo "$e: $(head -1 "$e")"; false; }
        grep -q '^ *| *\^' "$e" || { echo "$e: no caret line"; false; }
    done
}

@test "the error goldens run and convert give the same exit codes as check" {
    cd "$ROOT"
    for b in 01-missing-semicolon 12-unknown-tensor 22-include-missing 40-matmul-inner-dims; do
        want=$(expected_status "$b")
        run xdnn run --device cpu "tests/errors/$b.dnn"
        [ "$status" -eq "$want" ] || { echo "run $b: $status"; false; }
    done
    for b in 01-missing-semicolon 12-unknown-tensor 22-include-missing; do
        want=$(expected_status "$b")
        run xdnn convert "tests/errors/$b.dnn" -o "$BATS_TEST_TMPDIR/$b.json"
        [ "$status" -eq "$want" ] || { echo "convert $b: $status"; false; }
        [ ! -e "$BATS_TEST_TMPDIR/$b.json" ]
    done
}

@test "sdpa_bwd checks ragged offsets when it runs: exit 3 naming the entry" {
    g="$BATS_TEST_TMPDIR/offsets.dnn"
    for bad in "0, 4, 3" "1, 4, 5" "0, 4, 4"; do
        cat > "$g" <<G
dnn 1;
graph g(seed=3) {
  input q: f32[5, 2, 4];
  input k: f32[6, 1, 4];
  input do: f32[5, 2, 4];
  weight oq: i32[3] = values([0, 4, 5]);
  weight oq_bad: i32[3] = values([$bad]);
  weight okv: i32[3] = values([0, 2, 6]);
  o, stats = sdpa(q, k, k, seq_offsets_q=oq, seq_offsets_kv=okv);
  dq, dk, dv = sdpa_bwd(q, k, k, o, do, stats, seq_offsets_q=oq_bad, seq_offsets_kv=okv);
  output dq;
}
G
        run xdnn run --device cpu "$g"
        echo "$output"
        [ "$status" -eq 3 ]
        [[ "$output" == *"offsets.dnn:10:16: error: sdpa_bwd: seq_offsets_q["?"] = "?": offsets must be non-decreasing integers from 0 to T = 5"* ]]
    done
    sed -i 's/values(\[0, 4, 4\])/values([0, 4, 5])/' "$g"
    run xdnn run --device cpu "$g"
    [ "$status" -eq 0 ]
}

@test "XDNN_DIAGNOSTICS=json: the same diagnostics as JSON lines, one record each" {
    cd "$ROOT"
    f=tests/errors/01-missing-semicolon.dnn
    run env XDNN_DIAGNOSTICS=json "$XDNN" check "$f"
    [ "$status" -eq 2 ]
    want=$(head -1 tests/errors/01-missing-semicolon.expected)
    python3 - "$output" "$want" "$f" <<'P'
import json, sys
recs = [json.loads(l) for l in sys.argv[1].splitlines()]
r = recs[0]
assert r["severity"] == "error" and r["status"] == "syntax" and r["file"] == sys.argv[3], r
# the text form starts "file:line:col: error: message"
assert sys.argv[2] == "%s:%d:%d: error: %s" % (r["file"], r["line"], r["col"], r["message"]), (sys.argv[2], r)
P
}

@test "a concat of more inputs than an op takes is refused (exit 4), not cut short" {
    {
        echo 'graph g {'
        for i in $(seq 0 39); do echo "  input x$i: f32[2, 1];"; done
        printf '  y = concat(%s, axis=1);\n' "$(seq -s, -f 'x%g' 0 39 | sed 's/,/, /g')"
        echo '  output y;'
        echo '}'
    } > "$BATS_TEST_TMPDIR/cat40.dnn"
    run xdnn run --device cpu "$BATS_TEST_TMPDIR/cat40.dnn"
    echo "$output"
    [ "$status" -eq 4 ]
    [[ "$output" == *"error: concat: 40 inputs, more than the 32 an op takes; apply it in steps"* ]]
    # 32 inputs is the most, and it runs
    sed -i -e '/input x3[2-9]/d' -e 's/, x32.*axis/, axis/' "$BATS_TEST_TMPDIR/cat40.dnn"
    run xdnn run --device cpu "$BATS_TEST_TMPDIR/cat40.dnn"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"output y: f32[2, 32]"* ]]
}
