#!/usr/bin/env bash
# The GPU check of issue 15 (item 6), one command for the GPU machine (one
# H200, the driver, CUDA 13, cmake, ninja, torch; none of Stowage's Debian
# libraries; no network). Finishes in a few minutes.
#
#   bench/gpu/check.sh --stage            here: copy the GPU programs, stripped,
#                                         into build/gpu-carry (a few MB) to carry
#   bench/gpu/check.sh [--carried DIR]    there: run them (DIR default build/gpu-carry)
#
# What it does, in order:
#   1. finds the programs in DIR, or builds the probe there with nvcc alone
#      (the GoogleTest binary cannot be built without Debian's GoogleTest);
#   2. exits 77 "no CUDA device: <reason>" where no device can be used;
#   3. runs stowage_cuda_tests (every kernel against its CPU twin; the gpu label);
#   4. runs cuda_probe: pinned and pageable H2D/D2H bandwidth by size, bf16
#      GEMM rate through cuBLASLt;
#   5. prints what the check does NOT do yet (below), rather than pretend.
# Results also go to $OUT (the device machine's return folder) when set.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
carried=build/gpu-carry

programs_from_build() {  # the newest build tree that has both programs
  for b in build/dev build/release; do
    if [ -x "$b/tests/executor/cuda/stowage_cuda_tests" ] && [ -x "$b/bench/gpu/cuda_probe" ]; then
      echo "$b"; return 0
    fi
  done
  return 1
}

if [ "${1:-}" = "--stage" ]; then
  build=$(programs_from_build) || { echo "no build with stowage_cuda_tests and cuda_probe (cmake --build build/dev)"; exit 1; }
  mkdir -p "$carried"
  strip -o "$carried/stowage_cuda_tests" "$build/tests/executor/cuda/stowage_cuda_tests"
  strip -o "$carried/cuda_probe" "$build/bench/gpu/cuda_probe"
  bench/gpu/needed-libraries "$carried/stowage_cuda_tests" "$carried/cuda_probe" || exit 1
  du -sh "$carried"
  echo "carry $carried, then run: bench/gpu/check.sh --carried $carried"
  exit 0
fi
if [ "${1:-}" = "--carried" ]; then carried=${2:?--carried DIR}; fi

out=${OUT:-$root/build/gpu-check}
mkdir -p "$out"
log() { echo "$@" | tee -a "$out/check.txt"; }

# cuBLASLt (the only shared CUDA library the programs need) from the
# toolkit, or from torch's nvidia-cublas wheel.
if command -v nvcc >/dev/null; then cuda_home=$(dirname "$(dirname "$(command -v nvcc)")"); else cuda_home=/usr/local/cuda; fi
lib_path="$cuda_home/lib64:$cuda_home/targets/x86_64-linux/lib"
torch_cublas=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(nvidia.cublas.__path__[0], "lib"))' 2>/dev/null || true)
[ -n "$torch_cublas" ] && lib_path="$lib_path:$torch_cublas"
export LD_LIBRARY_PATH="$lib_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# 1. The programs.
tests="$carried/stowage_cuda_tests"
probe="$carried/cuda_probe"
if [ ! -x "$probe" ]; then
  if command -v nvcc >/dev/null; then
    log "no carried cuda_probe: building it with nvcc"
    probe="$out/cuda_probe"
    # sm_90 (H100, H200) and PTX that newer GPUs can JIT.
    nvcc -std=c++20 -O2 -I"$root" -gencode arch=compute_90,code=[sm_90,compute_90] -o "$probe" \
      bench/gpu/cuda_probe.cu executor/cuda/cuda_error.cpp executor/cuda/cuda_device.cpp \
      executor/cuda/cuda_event.cpp executor/cuda/device_memory.cpp executor/cuda/pinned_buffer.cpp \
      -cudart static -lcublasLt -Xcompiler -static-libstdc++ 2>&1 | tee -a "$out/check.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || { log "building cuda_probe with nvcc FAILED"; probe=""; }
  else
    probe=""
  fi
fi

# 2. A device?
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  reason="nvidia-smi $(command -v nvidia-smi >/dev/null && echo 'lists no GPU' || echo 'not found')"
  if [ -n "$probe" ]; then "$probe" >/dev/null 2>"$out/probe.err"; [ $? -eq 77 ] && reason=$(sed 's/^no CUDA device: //' "$out/probe.err"); fi
  log "no CUDA device: $reason"
  exit 77
fi
nvidia-smi -L | tee -a "$out/check.txt"

status=0
# 3. The kernels against their CPU twins.
log ""
log "== stowage_cuda_tests =="
if [ -x "$tests" ]; then
  "$tests" --gtest_output="xml:$out/stowage_cuda_tests.xml" 2>&1 | tee "$out/stowage_cuda_tests.txt" | tail -n 25
  [ "${PIPESTATUS[0]}" -eq 0 ] || { log "stowage_cuda_tests FAILED"; status=1; }
  if grep -q "SKIPPED" "$out/stowage_cuda_tests.txt" && grep -q "no CUDA device" "$out/stowage_cuda_tests.txt"; then
    log "stowage_cuda_tests skipped for want of a device although nvidia-smi lists one"; status=1
  fi
else
  log "stowage_cuda_tests NOT RUN: not carried (run bench/gpu/check.sh --stage here and carry $carried)"; status=1
fi

# 4. Bandwidth and GEMM rate.
log ""
log "== cuda_probe =="
if [ -n "$probe" ]; then
  "$probe" 2>&1 | tee "$out/probe.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { log "cuda_probe FAILED"; status=1; }
else
  log "cuda_probe NOT RUN: neither carried nor buildable (no nvcc)"; status=1
fi

# 5. Not implemented yet (issue 15); listed so that nobody reads this
#    check as the whole of item 6.
log ""
log "== not yet implemented (issue 15) =="
log "- the CUDA backend itself (executor/backend.h): the seam still passes compute as a host"
log "  closure over host spans (item 1), so there is no GPU training step to run"
log "- tiny model loss curve on the GPU vs the CPU backend within bf16 tolerance"
log "- one offloaded ~1B-parameter step with device memory capped (8 GiB) under two"
log "  placements, measured vs the simulator's H200 prediction, error per lane"
log "- timeline from CUDA events (item 5)"
log "- DeepSpeed ZeRO-Offload side by side (needs the CUDA backend's step to compare with)"
log ""
log "results in $out"
exit $status
