#!/usr/bin/env bats
# man/dnn.5: renders without groff warnings, and its generated OP CATALOGUE
# section is what man/gen-ops.sh makes from the current `xdnn ops`.
load helpers

PAGE="$ROOT/man/dnn.5"

@test "the OP CATALOGUE section of man/dnn.5 is current (man/gen-ops.sh XDNN --update man/dnn.5)" {
    # regenerate into a temporary copy and diff
    cp "$PAGE" "$BATS_TEST_TMPDIR/dnn.5"
    "$ROOT/man/gen-ops.sh" "$XDNN" --update "$BATS_TEST_TMPDIR/dnn.5"
    diff -u "$PAGE" "$BATS_TEST_TMPDIR/dnn.5"
}

@test "every op of the catalogue is documented in man/dnn.5" {
    n=0
    for op in $("$XDNN" ops | grep -o '^[a-z_0-9]*(' | tr -d '('); do
        grep -q "^\.B \"$op(" "$PAGE" || { echo "missing: $op"; false; }
        n=$((n + 1))
    done
    [ "$n" -gt 50 ]
}

@test "gen-ops.sh --check notices a stale section" {
    sed '/^\.B "relu(x)/,+1d' "$PAGE" > "$BATS_TEST_TMPDIR/stale.5"
    run "$ROOT/man/gen-ops.sh" "$XDNN" --check "$BATS_TEST_TMPDIR/stale.5"
    [ "$status" -eq 1 ]
    [[ "$output" == *"is stale"* ]]
}

@test "man/dnn.5 renders cleanly (groff -ww warns about nothing)" {
    command -v groff >/dev/null || skip "groff is not installed"
    run groff -man -Tutf8 -ww "$PAGE"
    [ "$status" -eq 0 ]
    run bash -c "groff -man -Tutf8 -ww '$PAGE' 2>&1 >/dev/null"
    [ -z "$output" ] || { echo "$output"; false; }
    run bash -c "groff -man -Tascii '$PAGE' | col -b"
    [[ "$output" == *"NAME"*"dnn - the xdnn graph language"* ]]
    [[ "$output" == *"OP CATALOGUE"*"conv(x, w) -> y"* ]]
}

@test "the EXAMPLES graph of man/dnn.5 checks" {
    command -v groff >/dev/null || skip "groff is not installed"
    mkdir -p "$BATS_TEST_TMPDIR/lib"
    cp "$ROOT/graphs/lib/layers.dnn" "$BATS_TEST_TMPDIR/lib/"
    groff -man -Tascii "$PAGE" | col -b | sed -n '/^EXAMPLES/,/^SEE ALSO/p' |
        sed -n '/^ *dnn 1;$/,/^ *}$/p' > "$BATS_TEST_TMPDIR/example.dnn"
    grep -q 'graph attn' "$BATS_TEST_TMPDIR/example.dnn"
    run xdnn check "$BATS_TEST_TMPDIR/example.dnn"
    echo "$output"
    [ "$status" -eq 0 ]
}
