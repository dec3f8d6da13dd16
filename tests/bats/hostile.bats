#!/usr/bin/env bats
# Hostile inputs (tests/fuzz findings): inputs that used to crash xdnn or make
# it read forever must end, quickly, with a diagnostic and the exit code of
# their class (2 syntax, 3 semantic, 5 file I/O) — never a signal (exit 139)
# or a hang.  Every call runs under `timeout 10`, so a regression fails (124)
# instead of hanging the suite.  The big inputs are generated here, not kept.
load helpers

# `xdnn ...` under a time limit; sets $status and $output like `run`.  In the
# valgrind mode (XDNN_VALGRIND=1) memcheck runs it, with more time.
run_limited() {
    if [ -n "${XDNN_VALGRIND:-}" ]; then
        run timeout 120 valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
            --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$XDNN" "$@"
    else
        run timeout 10 "$XDNN" "$@"
    fi
}

chain() { # chain N TERM: "TERM + TERM + ..." with N terms, 20 to a line
    python3 -c "import sys; n, t = int(sys.argv[1]), sys.argv[2]
print(' +\n'.join(' + '.join([t] * min(20, n - i)) for i in range(0, n, 20)))" "$1" "$2"
}

@test "a 100000-term tensor chain is a syntax error, not a stack overflow" {
    f=$BATS_TEST_TMPDIR/chain.dnn
    { echo 'graph g {'; echo ' input x: f32[2];'; echo " y = $(chain 100000 x);"; echo ' output y;'; echo '}'; } > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "$output" == *"chain.dnn:52:79: error: expression nests too deeply (more than 1000 levels)"* ]]
    [ "$(grep -c 'error:' <<< "$output")" -eq 1 ]
}

@test "a long chain with a compile-time tail, and a deep param chain, are refused" {
    f=$BATS_TEST_TMPDIR/tail.dnn
    { echo 'graph g {'; echo ' input x: f32[2];'; echo " y = relu(x) + $(chain 100000 1);"; echo ' output y;'; echo '}'; } > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "$output" == *"error: expression nests too deeply (more than 1000 levels)"* ]]
    f=$BATS_TEST_TMPDIR/param.dnn
    { echo "param P = $(chain 400000 1);"; echo 'graph g { input x: f32[P]; output x; }'; } > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "$output" == *"param.dnn:50:79: error: expression nests too deeply (more than 1000 levels)"* ]]
    run_limited convert "$f" -o "$BATS_TEST_TMPDIR/param.json"
    [ "$status" -eq 2 ]
    [ ! -e "$BATS_TEST_TMPDIR/param.json" ]
}

@test "right-nested input stops at the depth limit too" {
    f=$BATS_TEST_TMPDIR/neg.dnn
    python3 -c "print('graph g { input x: f32[2]; y = ' + '-' * 5000 + 'x; output y; }')" > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "$output" == *"neg.dnn:1:4032: error: expression nests too deeply (more than 1000 levels)"* ]]
    python3 -c "print('graph g { input x: f32[2]; y = ' + 'relu(' * 3000 + 'x' + ')' * 3000 + '; output y; }')" > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "$output" == *"error: expression nests too deeply (more than 1000 levels)"* ]]
}

@test "an expression string in JSON is bounded by the same limit" {
    f=$BATS_TEST_TMPDIR/deep.json
    python3 -c "import json; print(json.dumps({'format': 'xdnn-graph', 'version': 1,
        'params': {'P': {'expr': ' + '.join(['1'] * 5000)}}, 'graphs': []}))" > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "$output" == *"error: expression nests too deeply (more than 1000 levels)"* ]]
}

@test "params that refer to params 6000 deep fold to an error, not a stack overflow" {
    f=$BATS_TEST_TMPDIR/refs.dnn
    python3 -c "
print('param P0 = 1;')
for i in range(1, 6000): print('param P%d = P%d;' % (i, i - 1))
print('graph g { input x: f32[P5999]; output x; }')" > "$f"
    run_limited check "$f"
    [ "$status" -eq 3 ]
    [[ "$output" == *"refs.dnn:1001:15: error: expression nests too deeply to fold (more than 5000 levels, counting the params it refers to)"* ]]
    [ "$(grep -c 'error:' <<< "$output")" -eq 1 ]
}

@test "fragments that nest deep expressions are refused, not a stack overflow" {
    f=$BATS_TEST_TMPDIR/frag.dnn
    python3 -c "
print('fragment fr0(x) -> (y) { y = relu(x); }')
for i in range(1, 60): print('fragment fr%d(x) -> (y) { y = fr%d(x)%s; }' % (i, i - 1, ' + x' * 900))
print('graph g { input x: f32[2]; y = fr59(x); output y; }')" > "$f"
    run_limited check "$f"
    [ "$status" -eq 3 ]
    [[ "$output" == *"error: expressions nest too deeply (more than 10000 levels, counting the fragments they call)"* ]]
    [ "$(grep -c 'error:' <<< "$output")" -eq 1 ]
    python3 -c "
print('fragment fr0(x, k: int) -> (y) { y = reshape(x, [k]); }')
for i in range(1, 60): print('fragment fr%d(x, k: int) -> (y) { y = fr%d(x, k=k%s); }' % (i, i - 1, ' + 0' * 900))
print('graph g { input x: f32[2]; y = fr59(x, k=2); output y; }')" > "$f"
    run_limited check "$f"
    [ "$status" -eq 3 ]
    [[ "$output" == *"frag.dnn:59:447: error: expression nests too deeply (more than 1000 levels) once fragment arguments are substituted"* ]]
}

@test "devices and directories are refused instead of read forever" {
    run_limited check /dev/zero
    [ "$status" -eq 5 ]
    [ "$output" = "/dev/zero: error: '/dev/zero' is not a regular file" ]
    run_limited check "$BATS_TEST_TMPDIR"
    [ "$status" -eq 5 ]
    [ "$output" = "$BATS_TEST_TMPDIR: error: '$BATS_TEST_TMPDIR' is a directory" ]
    run timeout 10 "$XDNN" check - < /dev/zero
    [ "$status" -eq 5 ]
    [ "$output" = "-: error: stdin is not a regular file" ]
}

@test "include of a device or a directory: an error at the include statement" {
    cd "$BATS_TEST_TMPDIR"
    mkdir -p sub
    printf 'graph g { input x: f32[4]; output x; }\ninclude "/dev/urandom";\n' > dev.dnn
    run_limited check dev.dnn
    [ "$status" -eq 5 ]
    [[ "${lines[0]}" == "dev.dnn:2:9: error: '/dev/urandom' is not a regular file" ]]
    printf 'include "sub";\n' > dir.dnn
    run_limited check dir.dnn
    [ "$status" -eq 5 ]
    [ "${lines[0]}" = "dir.dnn:1:9: error: 'sub' is a directory" ]
}

@test "load() from a device is refused; raw data from a FIFO is read only as far as needed" {
    cd "$BATS_TEST_TMPDIR"
    for fmt in raw npy safetensors; do
        printf 'graph g { input x: f32[4] = load(path="/dev/zero", format="%s"); output x; }\n' "$fmt" > z.dnn
        run_limited run --device cpu z.dnn
        [ "$status" -eq 5 ] || { echo "$fmt: $status"; false; }
        [[ "$output" == *"/dev/zero: error: '/dev/zero' is not a regular file"* ]]
    done
    # A FIFO fed forever: raw reads 16 bytes + 1 and stops.
    mkfifo endless
    printf 'graph g { input x: f32[4] = load(path="endless", format="raw"); output x; }\n' > f.dnn
    timeout 10 cat /dev/zero > endless 2>/dev/null 3>&- &
    feeder=$!
    run_limited run --device cpu f.dnn
    kill "$feeder" 2>/dev/null || true
    wait "$feeder" 2>/dev/null || true
    [ "$status" -eq 5 ]
    [[ "$output" == *"endless: error: raw file has over 16 bytes, but f32[4] needs exactly 16 bytes"* ]]
}

@test "a FIFO with no writer is given up on after XDNN_FIFO_TIMEOUT (include, input, load), not waited on forever" {
    cd "$BATS_TEST_TMPDIR"
    mkfifo nobody
    printf 'include "nobody";\ngraph g { input x: f32[4]; output x; }\n' > inc.dnn
    printf 'graph g { input x: f32[4] = load(path="nobody", format="raw"); output x; }\n' > load.dnn
    printf 'graph g { input x: f32[4]; y = relu(x); output y; }\n' > in.dnn
    export XDNN_FIFO_TIMEOUT=1
    SECONDS=0
    run_limited check inc.dnn
    [ "$status" -eq 5 ]
    [ "${lines[0]}" = "inc.dnn:1:9: error: 'nobody' is a FIFO and no writer sent anything in 1 s (XDNN_FIFO_TIMEOUT)" ]
    run_limited run --device cpu load.dnn
    [ "$status" -eq 5 ]
    [[ "$output" == *"'nobody' is a FIFO and no writer sent anything in 1 s"* ]]
    run_limited run --device cpu in.dnn --input x=nobody
    [ "$status" -eq 5 ]
    [[ "$output" == *"'nobody' is a FIFO and no writer sent anything in 1 s"* ]]
    [ "$SECONDS" -lt 9 ]
}

@test "a .npy file from a FIFO is read; one followed by endless bytes stops at its header's size" {
    cd "$BATS_TEST_TMPDIR"
    python3 -c "
import struct, sys
h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\"
h += ' ' * (63 - (10 + len(h)) % 64) + '\n'
sys.stdout.buffer.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + struct.pack('<4f', 1, -2, 3, 4))" > x.npy
    mkfifo pipe.npy
    printf 'graph g { input x: f32[4] = load(path="pipe.npy"); y = relu(x); output y; }\n' > p.dnn
    timeout 10 cat x.npy > pipe.npy 2>/dev/null 3>&- &
    feeder=$!
    run_limited run --device cpu p.dnn
    wait "$feeder" 2>/dev/null || true
    [ "$status" -eq 0 ]
    [[ "$output" == *"values [1, 0, 3, 4]"* ]]
    # The same file, then zeros forever: the reader takes the 80 bytes the
    # header announces plus one, reports the trailing byte and stops.
    timeout 10 cat x.npy /dev/zero > pipe.npy 2>/dev/null 3>&- &
    feeder=$!
    run_limited run --device cpu p.dnn
    kill "$feeder" 2>/dev/null || true
    wait "$feeder" 2>/dev/null || true
    [ "$status" -eq 5 ]
    [[ "$output" == *"pipe.npy: error: trailing bytes after .npy data: expected 16 bytes (4 elements of 4 bytes), file has 17"* ]]
}

@test "20000 nested includes stop at the include-depth limit (64), not a stack overflow" {
    d=$BATS_TEST_TMPDIR/inc
    mkdir -p "$d"
    python3 - "$d" <<'PY'
import sys
d, n = sys.argv[1], 20000
for i in range(n):
    with open(f"{d}/f{i}.dnn", "w") as f:
        f.write(f'include "f{i + 1}.dnn";\n' if i < n - 1 else "param P = 4;\n")
with open(f"{d}/main.dnn", "w") as f:
    f.write('include "f0.dnn";\ngraph g {\n  input x: f32[P];\n  y = relu(x);\n  output y;\n}\n')
PY
    run_limited check "$d/main.dnn"
    [ "$status" -eq 3 ]
    [[ "${lines[0]}" == *"f62.dnn:1:9: error: includes nest deeper than 64 files (including 'f63.dnn')" ]]
    # exactly at the limit: main.dnn and 63 nested includes are fine
    printf 'param P = 4;\n' > "$d/f62.dnn"
    run_limited check "$d/main.dnn"
    [ "$status" -eq 0 ]
}

@test "NUL bytes inside strings, quoted names and include paths are refused where they are" {
    f=$BATS_TEST_TMPDIR/nul.dnn
    printf 'include "lib\0.dnn";\ngraph g {\n  input x: f32[4];\n  y = relu(x);\n  output y;\n}\n' > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "${lines[0]}" == *"nul.dnn:1:13: error: NUL byte inside a string (names, strings and paths cannot hold one)" ]]
    printf 'graph g {\n  input `x\0y`: f32[4];\n  y = relu(x);\n  output y;\n}\n' > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "${lines[0]}" == *"nul.dnn:2:11: error: NUL byte inside a quoted name"* ]]
    printf 'graph g {\n  input x: f32[4];\n  y = relu(x);\n  assert 1 == 1, "fine\0not shown";\n  output y;\n}\n' > "$f"
    run_limited check "$f"
    [ "$status" -eq 2 ]
    [[ "${lines[0]}" == *"nul.dnn:4:23: error: NUL byte inside a string"* ]]
}

@test "JSON \\u0000 in a name, a key or a path is refused with its line and column" {
    cd "$ROOT"
    sed 's/"name": "mlp_gelu"/"name": "mlp\\u0000gelu"/' graphs/json/mlp_gelu.json > "$BATS_TEST_TMPDIR/a.json"
    grep -q 'u0000' "$BATS_TEST_TMPDIR/a.json"
    run_limited check "$BATS_TEST_TMPDIR/a.json"
    [ "$status" -eq 2 ]
    [[ "${lines[0]}" == *"a.json:"*": error: JSON syntax error: \\u0000 in a string: names, strings and paths cannot hold a NUL character" ]]
    sed 's/"x": {/"x\\u0000y": {/' graphs/json/mlp_gelu.json > "$BATS_TEST_TMPDIR/b.json"
    run_limited check "$BATS_TEST_TMPDIR/b.json"
    [ "$status" -eq 2 ]
    [[ "$output" == *"\\u0000 in a string"* ]]
}

@test "SIGTERM while --save writes leaves no temp file behind (and the process still dies of the signal)" {
    cd "$BATS_TEST_TMPDIR"
    printf 'param N = 8388608;\ngraph g {\n  input x: f32[N] = uniform(lo=-1, hi=1);\n  y = relu(x);\n  z = neg(x);\n  output y;\n  output z;\n}\n' > big.dnn
    # Catch the save in the act (a *.tmp* file exists), then signal it; a few tries in case a run slips by.
    for try in 1 2 3; do
        rm -rf out
        "$XDNN" run --device cpu big.dnn --save out > /dev/null 2>&1 &
        pid=$! caught=0
        while kill -0 "$pid" 2>/dev/null; do
            if compgen -G "out/*.tmp*" > /dev/null; then kill -TERM "$pid"; caught=1; break; fi
            sleep 0.005
        done
        rc=0; wait "$pid" || rc=$?
        [ "$caught" = 1 ] && break
    done
    [ "$caught" = 1 ] || { echo "never caught a save in progress"; false; }
    [ "$rc" -eq 143 ] # killed by SIGTERM, as without the handler
    run compgen -G "out/*.tmp*"
    [ "$status" -ne 0 ] || { echo "left behind: $output"; false; }
}

@test "a host allocation that fails names the tensor and the size (exit 8), it does not exit silently" {
    [ -z "${XDNN_SAN:-}" ] || skip "AddressSanitizer reserves more address space than ulimit -v allows"
    cd "$BATS_TEST_TMPDIR"
    printf 'graph g {\n  input x: f32[150000000] = uniform(lo=-1, hi=1);\n  y = relu(x);\n  output y;\n}\n' > mid.dnn
    # 1.6 GB of address space: the binary (~70 MB, static) and the 600 MB tensor fit, its 1.2 GB of
    # double scratch does not (the margin leaves room for a larger binary)
    run bash -c "ulimit -v 1600000; OMP_NUM_THREADS=1 '$XDNN' run mid.dnn --device cpu --max-memory 1T"
    [ "$status" -eq 8 ]
    [[ "$output" == *"mid.dnn:2:9: error: cannot allocate 1200000000 bytes of scratch to initialize 'x'"* ]]
}

@test "--sandbox: includes and load() stay under the graph's folder and -I; absolute, '..' and symlink escapes are refused unread" {
    cd "$BATS_TEST_TMPDIR"
    mkdir -p g lib other
    echo 'secret line one' > other/secret.txt
    printf '\0\0\0\0\0\0\0\0' > other/x.raw
    ln -s ../other g/link
    printf 'param K = 2;\n' > lib/k.dnn
    printf 'include "%s";\ngraph g { input x: f32[2]; output x; }\n' "$BATS_TEST_TMPDIR/other/secret.txt" > g/abs.dnn
    printf 'include "../other/secret.txt";\ngraph g { input x: f32[2]; output x; }\n' > g/up.dnn
    printf 'include "link/secret.txt";\ngraph g { input x: f32[2]; output x; }\n' > g/sym.dnn
    printf 'graph g { input x: f32[2] = load(path="../other/x.raw", format="raw"); output x; }\n' > g/load.dnn
    printf 'include "k.dnn";\ngraph g { input x: f32[K]; output x; }\n' > g/ok.dnn
    for f in abs up sym; do
        run_limited check --sandbox "g/$f.dnn"
        [ "$status" -eq 5 ] || { echo "$f: $status $output"; false; }
        [[ "${lines[0]}" == *"is refused in a confined graph (--sandbox): it "* ]]
        [[ "$output" != *"secret line"* ]] # never read, never quoted
    done
    run_limited run --sandbox --device cpu g/load.dnn
    [ "$status" -eq 5 ]
    [[ "${lines[0]}" == *"load: '../other/x.raw' for x: f32[2] is refused in a confined graph (--sandbox): it leads outside"* ]]
    run_limited check --sandbox -I lib g/ok.dnn
    [ "$status" -eq 0 ]
    export XDNN_PATH="$BATS_TEST_TMPDIR/lib"
    run_limited check g/ok.dnn # found through $XDNN_PATH...
    [ "$status" -eq 0 ]
    run_limited check --sandbox g/ok.dnn # ...which a confined graph does not search
    [ "$status" -eq 5 ]
    unset XDNN_PATH
    # without --sandbox the same files are read as before
    run_limited run --device cpu g/load.dnn
    [ "$status" -eq 0 ]
}

@test "a plan's graph is always confined: its load()s stay in the plan's folder, without --sandbox" {
    cd "$BATS_TEST_TMPDIR"
    mkdir -p g other
    printf '\0\0\200\77\0\0\0\300' > other/x.raw # 1, -2 as f32
    cp other/x.raw g/x.raw
    printf 'graph g { input x: f32[2] = load(path="x.raw", format="raw"); y = relu(x); output y; }\n' > g/in.dnn
    printf 'graph g { input x: f32[2] = load(path="../other/x.raw", format="raw"); y = relu(x); output y; }\n' > g/up.dnn
    printf 'graph g { input x: f32[2] = load(path="%s", format="raw"); y = relu(x); output y; }\n' \
        "$BATS_TEST_TMPDIR/other/x.raw" > g/abs.dnn
    for f in in up abs; do
        run_limited run --device cpu "g/$f.dnn" # the graph itself, trusted: every file is read
        [ "$status" -eq 0 ] || { echo "$f: $output"; false; }
        run_limited plan --device cpu "g/$f.dnn" -o "g/$f.xplan"
        [ "$status" -eq 0 ]
    done
    run_limited run --device cpu g/in.xplan
    [ "$status" -eq 0 ]
    [[ "$output" == *"values [1, 0]"* ]]
    run_limited run --device cpu g/up.xplan
    [ "$status" -eq 5 ]
    [[ "$output" == *"load: '../other/x.raw' for x: f32[2] is refused in a confined graph (a plan's graph always is): it leads outside the plan's folder"* ]]
    run_limited run --device cpu g/abs.xplan
    [ "$status" -eq 5 ]
    [[ "$output" == *"is refused in a confined graph (a plan's graph always is): it is an absolute path"* ]]
}

@test "an included file that is not a graph is reported but never quoted (include \"secret.txt\")" {
    cd "$BATS_TEST_TMPDIR"
    echo 'secret line one' > secret.txt
    printf 'include "secret.txt";\ngraph g { input x: f32[2]; output x; }\n' > g.dnn
    run_limited check g.dnn
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "secret.txt:1:1: error: syntax error, unexpected identifier" ]
    [[ "$output" != *"secret line"* ]]
    [[ "$output" == *"g.dnn:1:1: note: in file included from here"* ]]
}
