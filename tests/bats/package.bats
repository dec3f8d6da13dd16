#!/usr/bin/env bats
# The package: `make install` into a staging folder (DESTDIR, PREFIX=/usr),
# the examples built against that install with nothing but pkg-config (shared
# and static links) and run on the CPU, only xdnn_ symbols exported from
# libxdnn.so, and include/xdnn.h standalone in C99 and C++11.
load helpers

# The build folder under test is the one of $XDNN (make test-bats sets it).
BUILD_DIR=$(cd "$(dirname "$XDNN")" && pwd)
BUILD_REL=${BUILD_DIR#"$ROOT"/}
STAGE=$BATS_FILE_TMPDIR/stage
VERSION=$(sed -n 's/^#define XDNN_VERSION_STRING "\(.*\)"/\1/p' "$ROOT/include/xdnn.h")

# pkg-config on the staged xdnn.pc: its prefix says /usr, the files are under $STAGE
xpkg() { PKG_CONFIG_PATH="$STAGE/usr/lib/pkgconfig" PKG_CONFIG_LIBDIR=/nonexistent pkg-config --define-variable=prefix="$STAGE/usr" "$@"; }

setup_file() {
    make -C "$ROOT" -s BUILD="$BUILD_REL" install DESTDIR="$STAGE" PREFIX=/usr >&2
    # the examples, built as an application would: pkg-config and the installed files only
    for link in shared static; do
        PKG_CONFIG_PATH="$STAGE/usr/lib/pkgconfig" PKG_CONFIG_LIBDIR=/nonexistent \
            make -C "$ROOT/examples" -s O="$BATS_FILE_TMPDIR/$link" STATIC=$([ $link = static ] && echo 1 || echo 0) \
            PKG_CONFIG="pkg-config --define-variable=prefix=$STAGE/usr" >&2
    done
}

# Run example $1 ($2: shared|static) with the staged library and OpenMP pinned.
example() {
    local bin=$BATS_FILE_TMPDIR/$2/$1
    shift 2
    LD_LIBRARY_PATH="$STAGE/usr/lib" OMP_NUM_THREADS=2 "$bin" "$@"
}

@test "make install stages the libraries, header, command, man pages and xdnn.pc" {
    cd "$STAGE/usr"
    [ -f "lib/libxdnn.so.$VERSION" ] && [ -f lib/libxdnn.a ] && [ -f include/xdnn.h ] && [ -x bin/xdnn ]
    [ "$(readlink lib/libxdnn.so.0)" = "libxdnn.so.$VERSION" ]
    [ "$(readlink lib/libxdnn.so)" = libxdnn.so.0 ]
    readelf -d "lib/libxdnn.so.$VERSION" | grep -q 'SONAME.*\[libxdnn\.so\.0\]'
    cmp include/xdnn.h "$ROOT/include/xdnn.h"
    for page in "$ROOT"/man/*.[15]; do
        name=$(basename "$page")
        cmp "$page" "share/man/man${name##*.}/$name"
    done
    [ -f share/man/man1/xdnn.1 ] && [ -f share/man/man5/dnn.5 ]
    grep -qx 'prefix=/usr' lib/pkgconfig/xdnn.pc
    run bin/xdnn ops relu
    [ "$status" -eq 0 ] && [[ "$output" == "relu(x) -> y"* ]]
}

@test "make uninstall removes what install put there" {
    cp -a "$STAGE" "$BATS_TEST_TMPDIR/stage"
    make -C "$ROOT" -s BUILD="$BUILD_REL" uninstall DESTDIR="$BATS_TEST_TMPDIR/stage" PREFIX=/usr
    left=$(find "$BATS_TEST_TMPDIR/stage" -not -type d)
    [ -z "$left" ] || { echo "left behind: $left"; false; }
}

@test "pkg-config reads the staged xdnn.pc: version, flags, static link libraries" {
    [ "$(xpkg --modversion xdnn)" = "$VERSION" ]
    [ "$(echo $(xpkg --cflags xdnn))" = "-I$STAGE/usr/include" ]   # echo: pkgconf ends with a space
    [ "$(echo $(xpkg --libs xdnn))" = "-L$STAGE/usr/lib -lxdnn" ]
    libs=" $(xpkg --static --libs xdnn) "
    for want in -lxdnn -lcjson -lm -fopenmp; do
        [[ "$libs" == *" $want "* ]] || { echo "--static --libs lacks $want: $libs"; false; }
    done
    if [ -d "$BUILD_DIR/obj/kernels" ]; then   # a CUDA build: cudart is static inside libxdnn
        for want in -lcudart_static -lstdc++ -ldl -lpthread -lrt -Wl,-rpath,; do
            [[ "$libs" == *" $want"* ]] || { echo "--static --libs lacks $want: $libs"; false; }
        done
    fi
}

@test "libxdnn.so exports only xdnn_ symbols" {
    syms=$(nm -D --defined-only "$BUILD_DIR/libxdnn.so" | awk '{print $3}')
    [ -n "$syms" ]
    bad=$(grep -v '^xdnn_' <<< "$syms" || true)
    [ -z "$bad" ] || { echo "exported, but not xdnn_:"; echo "$bad"; false; }
}

@test "libxdnn.so exports every function xdnn.h declares, and nothing it does not" {
    declared=$(grep -o 'XDNN_API[^(]*(' "$ROOT/include/xdnn.h" | sed 's/($//' | grep -o 'xdnn_[a-z0-9_]*$' | sort -u)
    exported=$(nm -D --defined-only "$BUILD_DIR/libxdnn.so" | awk '{print $3}' | sort -u)
    [ "$(wc -l <<< "$declared")" -gt 50 ]
    diff <(echo "$declared") <(echo "$exported") || { echo "(<: declared, not exported; >: exported, not declared)"; false; }
}

@test "xdnn.h compiles alone as C99 (-pedantic -Werror) and as C++11" {
    printf '#include <xdnn.h>\nint main(void) { return xdnn_dtype_size(XDNN_F32) == 4 ? 0 : 1; }\n' > "$BATS_TEST_TMPDIR/h.c"
    cc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$STAGE/usr/include" "$BATS_TEST_TMPDIR/h.c"
    cc -std=c99 -pedantic -Wall -Werror -fsyntax-only -x c "$STAGE/usr/include/xdnn.h"
    command -v g++ >/dev/null || skip "no C++ compiler"
    g++ -std=c++11 -pedantic -Wall -Wextra -Werror -fsyntax-only -x c++ -I"$STAGE/usr/include" "$BATS_TEST_TMPDIR/h.c"
}

@test "cli/ is a client of xdnn.h only: no header from src/, no library function that is not xdnn_" {
    cd "$ROOT/cli"
    # quoted includes name xdnn.h or a header of cli/ itself
    bad=""
    for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' *.c *.h | sort -u); do
        [ "$h" = xdnn.h ] || { [[ $h != */* ]] && [ -f "$h" ]; } || bad+=" \"$h\""
    done
    # angle-bracket ones are system headers, never a module reached through -Isrc
    for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' *.c *.h | sort -u); do
        [ ! -e "$ROOT/src/$h" ] && [ ! -e "$ROOT/include/$h" ] || bad+=" <$h>"
    done
    [ -z "$bad" ] || { echo "cli/ includes internal headers:$bad"; false; }
    # every file compiles with the public header alone (no -Isrc)
    for f in *.c; do
        cc -std=c11 -D_GNU_SOURCE -DXDNN_HAVE_CUDA=0 -fsyntax-only -I"$ROOT/include" "$f" ||
            { echo "cli/$f does not compile against include/ alone"; false; }
    done
    # and the objects call nothing of the library's but xdnn_ functions
    [ -f "$BUILD_DIR/libxdnn.a" ] && ls "$BUILD_DIR"/obj/cli/*.o > /dev/null
    lib=$(nm --defined-only "$BUILD_DIR/libxdnn.a" 2>/dev/null | awk '$2 ~ /^[TDBRW]$/ {print $3}' | sort -u)
    used=$(nm -u "$BUILD_DIR"/obj/cli/*.o | awk '{print $NF}' | sort -u)
    [ "$(wc -l <<< "$lib")" -gt 100 ]
    internal=$(comm -12 <(echo "$lib") <(echo "$used") | grep -v '^xdnn_' || true)
    [ -z "$internal" ] || { echo "cli/ calls internal functions:"; echo "$internal"; false; }
}

@test "the examples link the staged shared library" {
    for ex in mlp_infer conv_bn_relu_train; do
        run env LD_LIBRARY_PATH="$STAGE/usr/lib" ldd "$BATS_FILE_TMPDIR/shared/$ex"
        [[ "$output" == *"libxdnn.so.0 => $STAGE/usr/lib/libxdnn.so.0"* ]] || { echo "$output"; false; }
        run env LD_LIBRARY_PATH="$STAGE/usr/lib" ldd "$BATS_FILE_TMPDIR/static/$ex"
        [[ "$output" != *libxdnn* ]]
    done
}

# The checksum lines of an example's output (timings left out).
sums() { grep -E '^(iteration|step) ' <<< "$1"; }

@test "mlp_infer: plan once, execute 5 times on the CPU, the same finite checksum every time and run" {
    run example mlp_infer shared --backend cpu
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"backend: cpu"* ]]
    first=$(sums "$output")
    [ "$(wc -l <<< "$first")" -eq 5 ]
    [ "$(sed 's/^iteration [0-9]*: //' <<< "$first" | sort -u | wc -l)" -eq 1 ]
    ! grep -qiE 'nan|inf' <<< "$first"
    run example mlp_infer shared --backend cpu
    [ "$status" -eq 0 ] && [ "$(sums "$output")" = "$first" ]
    run example mlp_infer static --backend cpu
    [ "$status" -eq 0 ] && [ "$(sums "$output")" = "$first" ]
}

@test "conv_bn_relu_train: 4 training steps on the CPU, the loss goes down, the same numbers on every run" {
    run example conv_bn_relu_train shared --backend cpu
    echo "$output"
    [ "$status" -eq 0 ]
    first=$(sums "$output")
    [ "$(wc -l <<< "$first")" -eq 4 ]
    ! grep -qiE 'nan|inf' <<< "$first"
    [[ "$output" == *"loss "*" -> "* ]]
    run example conv_bn_relu_train shared --backend cpu
    [ "$status" -eq 0 ] && [ "$(sums "$output")" = "$first" ]
    run example conv_bn_relu_train static --backend cpu --iters 2
    [ "$status" -eq 0 ] && [ "$(sums "$output")" = "$(head -2 <<< "$first")" ]
}

@test "the examples run with the default backend (auto: the CPU when there is no GPU)" {
    for ex in mlp_infer conv_bn_relu_train; do
        run example $ex shared --iters 2
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == "backend: "* ]]
    done
}

@test "the examples fail with exit 1 and the diagnostics" {
    run example mlp_infer shared --bogus
    [ "$status" -eq 1 ] && [[ "$output" == *"usage: "* ]]
    run example conv_bn_relu_train shared --backend cuda
    if [ "$status" -ne 0 ]; then   # no usable GPU: the plan says why
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"error: "* ]]
        [[ "$output" == *"xdnn_plan_build failed: "* ]]
    fi
}

@test "the README's plan/execute excerpt compiles against the install and runs a graph" {
    code=$(sed -n '/^## Embedding xdnn/,/^## /p' "$ROOT/README.md" | awk '/^```c$/{on=1; next} /^```$/{on=0} on')
    [ -n "$code" ]
    cat > "$BATS_TEST_TMPDIR/excerpt.c" <<CODE
#include <stdlib.h>
#include <xdnn.h>
xdnn_status run_on_cpu(xdnn_graph_t *g, int times, xdnn_diags_t *d);
$code
int main(int argc, char **argv)
{
    (void)argc;
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    xdnn_binding set[] = {{"T", "8"}};
    xdnn_status s = xdnn_module_load(argv[1], NULL, d, &m);
    if (s == XDNN_OK)
        s = xdnn_graph_bind(xdnn_module_find_graph(m, NULL), set, 1, d);
    if (s == XDNN_OK)
        s = run_on_cpu(xdnn_module_find_graph(m, NULL), 3, d);
    xdnn_diags_print(d, stderr);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    return (int)s;
}
CODE
    cc -std=c99 -Wall -Wextra -Werror -o "$BATS_TEST_TMPDIR/excerpt" "$BATS_TEST_TMPDIR/excerpt.c" \
        $(xpkg --cflags --libs xdnn)
    cd "$ROOT/graphs"
    LD_LIBRARY_PATH="$STAGE/usr/lib" OMP_NUM_THREADS=2 "$BATS_TEST_TMPDIR/excerpt" mlp_gelu.dnn
}
