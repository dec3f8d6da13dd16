# helpers.bash — shared by the bats suites: where the binary is, and a
# valgrind mode (XDNN_VALGRIND=1, `make valgrind`) that runs every xdnn call
# under memcheck and fails on any leak or error.
XDNN=${XDNN:-$BATS_TEST_DIRNAME/../../build/xdnn}
ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# Tests write only inside their own temporary folders: the tune and kernel
# caches too (a suite may point XDNN_CACHE_DIR at a test's own folder).
export XDNN_CACHE_DIR="${BATS_FILE_TMPDIR:?bats 1.4 or newer}/xdnn-cache"

xdnn() {
    if [ -n "${XDNN_VALGRIND:-}" ]; then
        valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --show-possibly-lost=no --errors-for-leak-kinds=definite,indirect \
            --error-exitcode=99 "$XDNN" "$@"
    else
        "$XDNN" "$@"
    fi
}

# The example graph of man/dnn.5 between the lines `.\" $1-begin` and
# `.\" $1-end`, as .dnn text (groff's \- unescaped), written to $2.
man_example() {
    sed -n '/^\.\\" '"$1"'-begin$/,/^\.\\" '"$1"'-end$/p' "$ROOT/man/dnn.5" | sed '1d;$d' | sed 's/\\-/-/g' > "$2"
}
