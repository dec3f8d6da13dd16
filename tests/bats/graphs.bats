#!/usr/bin/env bats
# Every shipped graph checks, runs on the CPU reference, and converts
# text -> JSON -> text -> JSON to a fixed point; the committed JSON form is current.
load helpers

graphs() { ls "$ROOT"/graphs/*.dnn; }

@test "every graph checks" {
    for g in $(graphs); do
        run xdnn check "$g"
        echo "$g: $output" | head -5
        [ "$status" -eq 0 ]
    done
}

@test "every graph runs on the CPU without NaN in its outputs" {
    for g in $(graphs); do
        run xdnn run "$g" --device cpu --format json
        [ "$status" -eq 0 ] || { echo "$g: $output"; false; }
        ! grep -q '"nan":[[:space:]]*[1-9]' <<< "$output" || { echo "$g has NaN outputs"; false; }
    done
}

# Source positions ("loc", "sources", fragment "origin") say where a node came from, so they
# legitimately change when the text is regenerated; everything else must not.
strip_provenance() { sed -E 's/"(loc|origin)": "[^"]*"//g; /"sources":/d' "$1" | tr -d ' \n,'; }

@test "text -> JSON -> text -> JSON is a fixed point" {
    for g in $(graphs); do
        b=$(basename "$g" .dnn)
        xdnn convert "$g" -o "$BATS_TEST_TMPDIR/$b.1.json"
        xdnn convert "$BATS_TEST_TMPDIR/$b.1.json" -o "$BATS_TEST_TMPDIR/$b.2.dnn"
        xdnn convert "$BATS_TEST_TMPDIR/$b.2.dnn" -o "$BATS_TEST_TMPDIR/$b.3.json"
        diff <(strip_provenance "$BATS_TEST_TMPDIR/$b.1.json") <(strip_provenance "$BATS_TEST_TMPDIR/$b.3.json")
    done
}

@test "graphs/json holds the current JSON form of every graph, and it runs" {
    cd "$ROOT"
    for g in $(graphs); do
        b=$(basename "$g" .dnn)
        xdnn convert "graphs/$b.dnn" -o "$BATS_TEST_TMPDIR/$b.json"
        cmp "$BATS_TEST_TMPDIR/$b.json" "$ROOT/graphs/json/$b.json"
        run xdnn check "$ROOT/graphs/json/$b.json"
        [ "$status" -eq 0 ]
    done
}
