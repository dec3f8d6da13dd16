#!/usr/bin/env bats
# man/dnn.5: renders without groff warnings, and its generated OP CATALOGUE
# section is what man/gen-ops.sh makes from the current `xdnn ops`.
# man/xdnn.3: renders without warnings, names every function of xdnn.h, and
# its EXAMPLE compiles against the build's libxdnn.a and runs on the CPU.
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

# ---------------------------------------------------------------- man/xdnn.3

LIBPAGE="$ROOT/man/xdnn.3"
# The build folder under test is the one of $XDNN (make test-bats sets it).
BUILD_DIR=$(cd "$(dirname "$XDNN")" && pwd)

@test "man/xdnn.3 renders cleanly (groff -ww warns about nothing)" {
    command -v groff >/dev/null || skip "groff is not installed"
    run groff -man -Tutf8 -ww -z "$LIBPAGE"
    [ "$status" -eq 0 ]
    run bash -c "groff -man -Tutf8 -ww '$LIBPAGE' 2>&1 >/dev/null"
    [ -z "$output" ] || { echo "$output"; false; }
    run bash -c "groff -man -Tascii '$LIBPAGE' | col -bx | tr -s ' '"
    [[ "$output" == *"NAME"*"xdnn - the xdnn C library"* ]]
    for sec in SYNOPSIS DESCRIPTION FUNCTIONS "RETURN VALUE" EXAMPLE FILES "SEE ALSO"; do
        grep -q "^$sec\$" <<< "$output" || { echo "no section $sec"; false; }
    done
    [[ "$output" == *"#include <xdnn.h>"* ]]
    [[ "$output" == *"xdnn(1), xdnn-bench(1), dnn(5), xdnn-plan(5)"* ]]
}

@test "man/xdnn.3 documents every function xdnn.h declares, each with its prototype in bold" {
    declared=$(grep -o 'XDNN_API[^(]*(' "$ROOT/include/xdnn.h" | sed 's/($//' | grep -o 'xdnn_[a-z0-9_]*$' | sort -u)
    [ "$(wc -l <<< "$declared")" -gt 50 ]
    for f in $declared; do
        grep -qE "^\.BI? .*\b$f\(" "$LIBPAGE" || { echo "not documented in man/xdnn.3: $f"; false; }
    done
}

@test "man/xdnn.3 lists the status codes with the CLI's exit codes" {
    exit_codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$ROOT/man/xdnn.1")
    n=0
    while read -r value name; do
        grep -qx "\.B $value $name" "$LIBPAGE" || { echo "RETURN VALUE lacks $value $name"; false; }
        grep -qx "\.B $value" <<< "$exit_codes" || { echo "xdnn(1) EXIT STATUS lacks $value"; false; }
        n=$((n + 1))
    done < <(sed -n '/^typedef enum xdnn_status/,/} xdnn_status;/s/^ *\(XDNN_[A-Z_]*\) = \([0-9]*\).*/\2 \1/p' "$ROOT/include/xdnn.h")
    [ "$n" -eq 10 ]
    [ "$(grep -c '^\.B [0-9] XDNN_' "$LIBPAGE")" -eq "$n" ]
}

# The EXAMPLE program: the roff lines between the example-begin and
# example-end comments, unescaped (\e, \-, \& are the only escapes allowed
# there), into $BATS_TEST_TMPDIR/example.c.
extract_example() {
    sed -n '/^\.\\" example-begin$/,/^\.\\" example-end$/p' "$LIBPAGE" | sed '1d;$d' > "$BATS_TEST_TMPDIR/example.roff"
    [ -s "$BATS_TEST_TMPDIR/example.roff" ] || { echo "no example-begin/example-end in man/xdnn.3"; return 1; }
    bad=$(grep -o '\\.' "$BATS_TEST_TMPDIR/example.roff" | grep -vx '\\[e&-]' || true)
    [ -z "$bad" ] || { echo "escapes the test cannot undo: $bad"; return 1; }
    if grep -q "^[.']" "$BATS_TEST_TMPDIR/example.roff"; then echo "a code line starts with . or '"; return 1; fi
    sed 's/\\-/-/g; s/\\&//g; s/\\e/\\/g' "$BATS_TEST_TMPDIR/example.roff" > "$BATS_TEST_TMPDIR/example.c"
}

@test "the EXAMPLE of man/xdnn.3 renders as the code it holds" {
    command -v groff >/dev/null || skip "groff is not installed"
    extract_example
    groff -man -Tascii "$LIBPAGE" | col -bx | sed -n '/^EXAMPLE$/,/^FILES$/p' |
        sed -n '/#include <stdio.h>/,/^ *Build and run it:$/p' | sed '$d' > "$BATS_TEST_TMPDIR/rendered.c"
    diff -u <(sed 's/^ *//; /^$/d' "$BATS_TEST_TMPDIR/example.c") <(sed 's/^ *//; /^$/d' "$BATS_TEST_TMPDIR/rendered.c")
}

@test "the EXAMPLE of man/xdnn.3 compiles against libxdnn.a and runs on the CPU" {
    [ -f "$BUILD_DIR/libxdnn.a" ] || skip "no $BUILD_DIR/libxdnn.a"
    extract_example
    grep -q 'xdnn_plan_execute' "$BATS_TEST_TMPDIR/example.c"
    # the link libraries of the Makefile's own programs (OpenMP, cJSON, CUDA when built with it)
    san=$(nm "$BUILD_DIR/libxdnn.a" 2>/dev/null | grep -q ' U __asan_' && echo SAN=1 || true)
    ldlibs=$(make -s --no-print-directory -C "$ROOT" -f Makefile -f - BUILD="${BUILD_DIR#"$ROOT"/}" $san \
        xdnn-docs-print-ldlibs <<< 'xdnn-docs-print-ldlibs: ; @echo $(LDLIBS_ALL)')
    [[ " $ldlibs " == *" -lcjson "* ]] || { echo "LDLIBS_ALL: $ldlibs"; false; }
    cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$ROOT/include" -o "$BATS_TEST_TMPDIR/example" \
        "$BATS_TEST_TMPDIR/example.c" "$BUILD_DIR/libxdnn.a" $ldlibs
    cd "$BATS_TEST_TMPDIR"
    export XDNN_CACHE_DIR="$BATS_TEST_TMPDIR/cache" OMP_NUM_THREADS=2
    if [ -n "${XDNN_VALGRIND:-}" ]; then
        run valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --show-possibly-lost=no \
            --errors-for-leak-kinds=definite,indirect --error-exitcode=99 ./example
    else
        run ./example
    fi
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == "y: f32[32, 16] on cpu, sum "* ]]
    ! grep -qiE 'nan|inf|error' <<< "$output"
    first=$output
    run ./example
    [ "$status" -eq 0 ] && [ "$output" = "$first" ]
}

@test "the README's setup line installs the package of every tool the tests call" {
    apt_line=$(grep -m1 'apt-get install' "$ROOT/README.md")
    # tool the tests run -> the Debian package that has it
    for pair in col:bsdextrautils man:man-db groff:groff-base dot:graphviz valgrind:valgrind python3:python3 \
        bats:bats flex:flex bison:bison; do
        tool=${pair%%:*} pkg=${pair#*:}
        grep -rqw -- "$tool" "$ROOT/tests/bats" "$ROOT/Makefile" || continue
        [[ " $apt_line " == *" $pkg "* ]] || { echo "tests use '$tool' but the README does not install $pkg"; false; }
    done
}
