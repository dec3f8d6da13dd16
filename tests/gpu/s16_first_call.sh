#!/usr/bin/env bash
# s16_first_call.sh DEV OUT — session 16's first device call (<= 240 s), on main 50c004d:
#  1. what session 15 committed without running: difftest_norm pair-bwd/ (d3447c5: XDNN_NORM_BWD_PAIR read at plan
#     build, so its =0 cases run v4; cd11e17's 2501-row cases) with the pair on and off; difftest_seq
#     sdpa/sdpa_flash_wgmma/k192- (cd11e17: 2113 keys, the 192-key tile's two Q buffers), default and
#     XDNN_SDPA_WGMMA_WIDE=3.
#  2. the Llama step's attention backward, 1.78 ms in the step against 1.51-1.52 alone (session 15): is it the
#     work or the conditions?  (a) nvidia-smi samples SM clock / power / throttle reasons every 20 ms while the
#     standalone row runs 10 and 300 iterations and while the step runs 20 iterations; (b) ncu times the three
#     sdpa_bwd kernels (prep, main, dq_out) at ncu's fixed clocks and flushed caches, in the step and alone.
#     EXPECTED: under ncu the two agree within 3 % (the same work); the sampler shows the step's SM clock below
#     the standalone row's (power: the step's GEMMs keep the board at its limit) — then the gap is the board's,
#     and not the kernel's.  If ncu differs, the step runs another instance (the detail lines say which).
set -uo pipefail
dev=${1:?DEV}; out=${2:?OUT}
. tests/gpu/dev_env.sh "$dev" "$out"
DEADLINE=${DEADLINE:-230}
step link; dev_build_testers difftest_norm difftest_seq || exit 1; dev_link_cli || exit 1
tn=$dev/difftest_norm; ts=$dev/difftest_seq
step "1. pair-bwd on / off, k192- default / WIDE=3"
timeout "$(tl 30)" "$tn" pair-bwd/ > "$out/t_pair_on.log" 2>&1; echo "pair on rc=$?"; counts "$out/t_pair_on.log"
XDNN_NORM_BWD_PAIR=0 timeout "$(tl 30)" "$tn" pair-bwd/ > "$out/t_pair_off.log" 2>&1; echo "pair off rc=$?"; counts "$out/t_pair_off.log"
grep -h "detail\|kernel" "$out/t_pair_off.log" | head -3 | cut -c1-200
timeout "$(tl 40)" "$ts" sdpa/sdpa_flash_wgmma/k192- > "$out/t_k192.log" 2>&1; echo "k192 rc=$?"; counts "$out/t_k192.log"
XDNN_SDPA_WGMMA_WIDE=3 timeout "$(tl 40)" "$ts" sdpa/sdpa_flash_wgmma/k192- > "$out/t_k192_w3.log" 2>&1; echo "k192 WIDE=3 rc=$?"; counts "$out/t_k192_w3.log"
L=graphs/llama_block_train.dnn
LREAL=(--set B=2 --set S=4096 --set HQ=32 --set HK=8 --set HD=128 --set I=14336)
row=layout/bshd/sdpa_bwd
mark() { echo "MARK $(date +%s.%N) $*" >> "$out/smi.csv"; }
step "2a. clocks while the row runs alone and the step runs"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 20 >> "$out/smi.csv" 2>&1 &
smi=$!
sleep 1; mark idle
mark row10; DIFFTEST_VERBOSE=1 DIFFTEST_ITERS=10 timeout "$(tl 30)" "$ts" --bench $row > "$out/row10.log" 2>&1; mark end
sleep 1
mark row300; DIFFTEST_ITERS=300 timeout "$(tl 40)" "$ts" --bench $row > "$out/row300.log" 2>&1; mark end
sleep 1
mark step; timeout "$(tl 60)" "$dev/xdnn" run --device gpu --format json --iters 20 --warmup 2 $L "${LREAL[@]}" \
    > "$out/step.json" 2> "$out/step.err"; mark end
sleep 0.5; kill $smi
grep -h "TIME\|^PASS\|^FAIL" "$out/row10.log" "$out/row300.log" | cut -c1-250
python3 - "$out" <<'PY'
import json, sys, re
o = sys.argv[1]
d = json.load(open(o + "/step.json"))
for p in d["gpu"]["partitions"]:
    if "sdpa" in p["engine"] or p["ms_median"] > 0.9:
        print("STEP", p["name"], p["engine"], round(p["ms_median"], 4), round(p["ms_min"], 4))
print("STEP total", d["gpu"]["total_ms"])
# clocks per phase (MARK lines split the samples)
ph, rows = None, {}
for line in open(o + "/smi.csv"):
    if line.startswith("MARK"):
        ph = line.split()[2]; continue
    f = [x.strip() for x in line.split(",")]
    if len(f) < 6 or ph in (None, "end"): continue
    try: rows.setdefault(ph, []).append((float(f[1].split()[0]), float(f[3].split()[0]), f[5]))
    except ValueError: pass
for ph, r in rows.items():
    busy = [x for x in r if x[1] > 150] or r
    busy.sort()
    print(f"CLK {ph:7s} n={len(r)} busy={len(busy)} sm MHz min {busy[0][0]:.0f} median {busy[len(busy)//2][0]:.0f} "
          f"power median {sorted(x[1] for x in busy)[len(busy)//2]:.0f} W  throttle {sorted(set(x[2] for x in busy))[:4]}")
PY
step "2b. ncu: the sdpa_bwd kernels in the step and alone (gpu__time_duration, fixed clocks, flushed caches)"
timeout "$(tl 60)" ncu --kernel-name regex:sdpa_bwd --metrics gpu__time_duration.sum --csv \
    "$dev/xdnn" run --device gpu --iters 1 --warmup 0 $L "${LREAL[@]}" > "$out/ncu_step.csv" 2> "$out/ncu_step.err"
echo "rc=$?"
DIFFTEST_ITERS=1 timeout "$(tl 40)" ncu --kernel-name regex:sdpa_bwd --metrics gpu__time_duration.sum --csv \
    "$ts" --bench $row > "$out/ncu_row.csv" 2> "$out/ncu_row.err"
echo "rc=$?"
for f in step row; do echo "ncu $f:"; grep -h "gpu__time_duration" "$out/ncu_$f.csv" | awk -F'","' '{print $5, $NF}' | cut -c1-160 | head -12; done
step done
(cd "$out" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^logs.tgz$'))
