#!/usr/bin/env bash
# A model compiled for a CPU feature this machine lacks must be refused with a
# status at session creation (kiln-run exit 2 and a message naming the
# feature), never run into SIGILL. A baseline x86-64 build must still run.
# usage: check_isa_guard.sh KILN_COMPILE KILN_RUN MODEL_DIR WORKDIR
set -euo pipefail
compile=$1 run=$2 model=$3 work=$4
mkdir -p "$work"

# LLVM feature name : /proc/cpuinfo flag. The first one this CPU lacks is used.
candidates="avx512fp16:avx512_fp16 amx-tile:amx_tile avx512vp2intersect:avx512_vp2intersect avx512ifma:avx512ifma avx512vbmi2:avx512_vbmi2 avx512f:avx512f"
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
missing=""
for c in $candidates; do
  feature=${c%%:*} flag=${c##*:}
  case "$flags" in *" $flag "*) ;; *) missing=$feature; break ;; esac
done

# Baseline ISA: runs anywhere x86-64 and matches the reference.
"$compile" "$model/model.onnx" -o "$work/baseline.so" --mcpu=x86-64
"$run" "$work/baseline.so" --test-data "$model/test_data_set_0" --rtol 1e-4 --atol 1e-5

if [ -z "$missing" ]; then
  echo "check_isa_guard: this CPU has every candidate feature; guard not exercised"
  exit 0
fi
echo "check_isa_guard: this CPU lacks $missing"
"$compile" "$model/model.onnx" -o "$work/needs-$missing.so" --mattr=+$missing
set +e
out=$("$run" "$work/needs-$missing.so" --test-data "$model/test_data_set_0" 2>&1)
rc=$?
set -e
echo "$out"
if [ $rc -ne 2 ]; then
  echo "check_isa_guard: expected exit 2 (load refused), got $rc"; exit 1
fi
case "$out" in
  *"lacks "*"'$missing'"*) echo "check_isa_guard: refused as expected" ;;
  *) echo "check_isa_guard: the message does not name '$missing'"; exit 1 ;;
esac
