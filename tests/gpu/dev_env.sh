# dev_env.sh — sourced by a device-call script run as `SCRIPT DEV OUT` from
# the root of the tree whose library DEV holds (DEV: what tests/gpu/pack_dev.sh
# packs, plus dt/*.o, a tester's objects compiled where the library was
# built).  Sets dev, out (created), t0 and LD_LIBRARY_PATH / XDNN_CACHE_DIR,
# defines step (a heading with the seconds since t0) and dev_link_tester NAME
# (links DEV/NAME from DEV/dt/*.o and the unpacked library; 1 on failure, the
# log in OUT/link.log), dev_link_cli (DEV/xdnn from DEV/cli/*.o), and writes the device's name to OUT/device.txt.
dev=${1:?DEV}; out=${2:?OUT}
mkdir -p "$out"
export LD_LIBRARY_PATH="$(cd "$dev/lib" && pwd):${LD_LIBRARY_PATH:-}"
export XDNN_CACHE_DIR=${XDNN_CACHE_DIR:-/tmp/xdnn-cache}
t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
cat "$dev/COMMIT" 2>/dev/null
dev_link_tester() {
    local cuda=/usr/local/cuda
    [ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
    gcc -o "$dev/$1" "$dev"/dt/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" \
        -lcudart_static -lstdc++ -ldl -lpthread -lrt > "$out/link.log" 2>&1
    [ -x "$dev/$1" ] || { echo "link failed"; tail -20 "$out/link.log"; return 1; }
}
dev_link_cli() {
    gcc -o "$dev/xdnn" "$dev"/cli/*.o "$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L/usr/local/cuda/lib64 \
        -lcudart_static -lstdc++ -ldl -lpthread -lrt >> "$out/link.log" 2>&1 || { echo "CLI link failed"; return 1; }
}
# dev_build_testers NAME... — DEV/NAME for several testers: from DEV/dt/NAME.o and DEV/dt/diffharness.o when
# DEV has them (compiled where the library was built: a branch's tester sources, when this tree is another
# checkout), else compiled here from this tree's tests/gpu/NAME.c.  1 on failure, the log in OUT/link.log.
dev_build_testers() {
    local cuda=/usr/local/cuda t
    local L=("$dev/libxdnn.a" -L"$dev/lib" -lcjson -lm -fopenmp -L"$cuda/lib64" -lcudart_static -lstdc++ -ldl -lpthread -lrt)
    local CF=(-std=c11 -D_GNU_SOURCE -O2 -DXDNN_HAVE_CUDA=1 -Iinclude -Isrc -I"$cuda/include")
    [ -f "$dev/libxdnn.a.gz" ] && gunzip -f "$dev/libxdnn.a.gz"
    [ -f "$dev/dt/diffharness.o" ] || gcc "${CF[@]}" -c tests/gpu/diffharness.c -o "$out/diffharness.o" >> "$out/link.log" 2>&1
    for t in "$@"; do
        if [ -f "$dev/dt/diffharness.o" ]; then
            gcc -o "$dev/$t" "$dev/dt/$t.o" "$dev/dt/diffharness.o" "${L[@]}" >> "$out/link.log" 2>&1
        else
            gcc "${CF[@]}" -o "$dev/$t" "tests/gpu/$t.c" "$out/diffharness.o" "${L[@]}" >> "$out/link.log" 2>&1
        fi || { echo "link of $t failed"; tail -20 "$out/link.log"; return 1; }
    done
}
# dev_sweep TESTER SECONDS — the tester's full sweep (every case) within SECONDS, the log in OUT/sweep.log; the
# failures, how many cases ran of how many, and the tester's count on stdout.
dev_sweep() {
    timeout "$2" "$1" > "$out/sweep.log" 2>&1
    echo "rc=$? (124: cut short; the cases listed ran)"
    grep -E "^FAIL" "$out/sweep.log" | cut -c1-300 | head -20
    echo "ran $(grep -cE '^(PASS|FAIL)' "$out/sweep.log") of $("$1" --list | wc -l) cases"
    grep -E "passed," "$out/sweep.log"
}
