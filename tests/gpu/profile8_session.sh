#!/usr/bin/env bash
# profile8_session.sh DEV OUT — Nsight Compute on the kernels behind the targets still missed at the end of
# session 8 (the closing notes of issues 10, 11, 12 and 14 cite these profiles): one launch each of the main
# kernel of a bench row (ncu -k regex:KERNEL -s SKIP -c 1; sections SpeedOfLight, Occupancy, LaunchStats,
# WarpStateStats, MemoryWorkloadAnalysis), the full report per kernel in OUT/ncu_LABEL.txt and its headline
# figures on stdout.  The testers are compiled here from the tree checked out (as memfast_session.sh).
# CASES: "LABEL|TESTER|FILTER|KERNEL[|ENV]" lines (default below; ENV: VAR=value words set for that run);
# NCU_S each one's time limit; TESTERS the testers to link (default: the four of the default CASES); NCU_EXTRA
# more ncu options (--clock-control none).
set -uo pipefail
. "$(dirname "$0")/dev_env.sh"
step link
dev_build_testers ${TESTERS:-difftest_seq difftest_quant difftest_norm difftest_conv} || exit 1
CASES=${CASES:-"sdpa_fwd|difftest_seq|bench/wgmma/sdpa_fwd_bf16/b4h16k16s4096d128|sdpa_fwd_wgmma
sdpa_fwd_causal|difftest_seq|bench/wgmma/sdpa_fwd_bf16_causal/b4h16k16s4096d128|sdpa_fwd_wgmma
sdpa_bwd|difftest_seq|bench/wgmma/sdpa_bwd_bf16/b4h16k16s4096d128|sdpa_bwd_wgmma
sdpa_bias|difftest_seq|bench/masks/sdpa_flash_wgmma/sdpa_fwd_bf16_bias-1hss|sdpa_fwd_wgmma
sdpa_fp8|difftest_seq|bench/fp8/sdpa_fp8_wgmma/sdpa_fwd_e4m3-obf16|sdpa_fp8_fwd
quantize|difftest_quant|bench/quantize/bf16->e4m3/tensor|kq_kernel
layernorm|difftest_norm|bench/layernorm/f16|k_warp_norm
rmsnorm|difftest_norm|bench/rmsnorm/bf16|k_warp_norm
bn_apply|difftest_norm|bench/batchnorm_train_relu/bf16|k_cl_apply
bn_reduce|difftest_norm|bench/batchnorm_train_relu/bf16|k_cl_reduce
bn_bwd_apply|difftest_norm|bench/batchnorm_bwd/bf16|k_cl_apply
maxpool_bwd|difftest_norm|bench/maxpool_bwd|kpool_bwd_vec
conv3x3_c64|difftest_conv|conv_fwd_bf16_nhwc n32c64h56k64r3s1p1|kcw_fwd_kernel"}
printf '%-16s %9s %7s %7s %7s %6s %5s %s\n' label "dur(us)" "SM%" "mem%" "DRAM%" occ% regs "top stall (WarpStateStats)"
while IFS='|' read -r label tester filter kernel envs; do
    [ -z "$label" ] && continue
    f="$out/ncu_$label.txt"
    env ${envs:-} timeout "${NCU_S:-60}" ncu ${NCU_EXTRA:-} -k "regex:$kernel" -s 3 -c 1 --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
        "$dev/$tester" --bench "$filter" > "$f" 2>&1
    rc=$?
    python3 - "$f" "$label" "$rc" <<'PY'
import re, sys
t = open(sys.argv[1], errors="replace").read()
def m(name):
    r = re.search(r"^\s*" + re.escape(name) + r"\s+(\S+)\s+([\d.,]+)", t, re.M)
    return (r.group(2).replace(",", ""), r.group(1)) if r else ("-", "")
dur, unit = m("Duration")
if unit == "ms" and dur != "-": dur = "%.1f" % (float(dur) * 1000)
elif unit == "ns" and dur != "-": dur = "%.1f" % (float(dur) / 1000)
stall = re.search(r"stalled waiting[^.]*|spends [\d.]+ cycles being stalled[^.]*", t)
print("%-16s %9s %7s %7s %7s %6s %5s %s" % (sys.argv[2], dur, m("Compute (SM) Throughput")[0], m("Memory Throughput")[0],
      m("DRAM Throughput")[0], m("Achieved Occupancy")[0], m("Registers Per Thread")[0],
      (stall.group(0)[:110] if stall else "rc=" + sys.argv[3])))
PY
done <<< "$CASES"
step done
