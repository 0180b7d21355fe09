#!/usr/bin/env bash
# The GPU check of issue 15 (item 6), one command for the GPU machine (one
# H100 or H200, the driver, CUDA 13, cmake, ninja, torch; none of Stowage's
# Debian libraries; no network). Finishes in about 5 minutes on an H200 (docs/gpu.md;
# the DeepSpeed runs and GPT-2 Medium on the CUDA backend take most of it).
#
#   bench/gpu/check.sh --stage            here: copy the GPU programs, stripped,
#                                         into build/gpu-carry (stowage-standalone and the executor's
#                                         tests with Debian's archives inside), and
#                                         DeepSpeed's source package and wheels into .whl
#   bench/gpu/check.sh [--carried DIR]    there, with DIR and .whl carried: run them
#                                         (DIR default build/gpu-carry)
#
# What it does, in order:
#   1. finds the programs in DIR, or builds the probe there with nvcc alone
#      (the GoogleTest binary cannot be built without Debian's GoogleTest);
#   2. exits 77 "no CUDA device: <reason>" where no device can be used;
#      measures the host (cores, memory, DRAM rate, CPU Adam: stowage profile --quick);
#   2b. runs cuda_probe: pinned and pageable H2D/D2H bandwidth by size, the
#      HBM copy, the Adam kernel as a share of it, bf16 GEMMs through cuBLASLt;
#   2c. makes this machine's profile of those (bench/gpu/this-machine), for
#      whichever GPU it found, and copies the plans to point at it: every
#      prediction below is for this machine (or, where no profile can be
#      made, for the committed H200 VM's, and it says so);
#   2d. runs `stowage profile --gpu auto` (the command's own GPU measurement)
#      and prints its calibration beside 2c's;
#   3. runs stowage_cuda_tests (every kernel against its CPU twin; the gpu label),
#      and with STOWAGE_GPU_SANITIZE=1 again under compute-sanitizer's memcheck;
#   3c. runs Stowage's executor with the CUDA backend: its tests, and
#      `stowage run --backend cuda` on the plans in bench/gpu/plans, the tiny
#      ones beside `--backend cpu` (the same losses), with traces returned,
#      and prints one table of every CUDA run against its prediction, lane
#      by lane (bench/gpu/run-table);
#   5. runs the probe's measurements through PyTorch and prints both side by side;
#   6. runs DeepSpeed ZeRO-Offload under the configurations Stowage exported
#      (bench/gpu/plans; STOWAGE_GPU_PLANS='GLOB...' picks some, e.g. 'tiny-*')
#      and returns a PyTorch profiler trace of each, which
#      `stowage compare` lays beside Stowage's prediction here;
#   6b. prints Stowage's executor's step beside DeepSpeed's on the plans both
#      ran (tiny-gpt, GPT-2 XL with the optimizer on the CPU);
#   7. prints what the check does NOT do yet (below), rather than pretend.
# With $OUT set (the device tool's return folder, which brings back at most
# 8 files), the summary goes to $OUT/check.txt as it is written and every
# file of the run to $OUT/results.tar.gz when it exits (also on SIGTERM/SIGINT).
# bench/gpu/rehearse runs this script on a machine without a GPU, the CPU
# backend standing in for the CUDA one (ctest bench.gpu_check_rehearsal).
set -uo pipefail
# STOWAGE_GPU_SKIP='probe torch deepspeed' leaves those steps out (a short rerun).
skip() { case " ${STOWAGE_GPU_SKIP:-} " in *" $1 "*) log "$1: skipped (STOWAGE_GPU_SKIP)"; return 0;; esac; return 1; }
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
  # DeepSpeed and the pure-Python packages it needs that the GPU machine's
  # image lacks (its python3 is 3.12), for step 6.
  if [ ! -f .whl/deepspeed-0.19.8.tar.gz ]; then
    mkdir -p .whl
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
    python3 -m pip download -q --no-deps --no-binary :all: -d .whl deepspeed==0.19.8 &&
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      -d .whl hjson==3.1.0 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions ||
      { echo "could not download DeepSpeed's packages into .whl"; exit 1; }
  fi
  build=$(programs_from_build) || { echo "no build with stowage_cuda_tests and cuda_probe (cmake --build build/dev)"; exit 1; }
  mkdir -p "$carried"
  strip -o "$carried/stowage_cuda_tests" "$build/tests/executor/cuda/stowage_cuda_tests"
  strip -o "$carried/cuda_probe" "$build/bench/gpu/cuda_probe"
  bench/gpu/needed-libraries "$carried/stowage_cuda_tests" "$carried/cuda_probe" || exit 1
  # The executor's programs for step 3c: the stowage command as
  # stowage-standalone and the CUDA backend's tests, both linked with
  # Debian's static archives (cmake/debian_libraries.cmake), so that they
  # too need only the C library and the toolkit's cuBLASLt there. Gzipped:
  # OpenBLAS's kernels for every CPU make each 31-33 MB, and the carry is
  # 64 MiB in all.
  if [ -x "$build/cli/stowage-standalone" ] && [ -x "$build/tests/executor/cuda/stowage_cuda_backend_tests" ]; then
    strip -o "$carried/stowage" "$build/cli/stowage-standalone"
    strip -o "$carried/stowage_cuda_backend_tests" "$build/tests/executor/cuda/stowage_cuda_backend_tests"
    bench/gpu/needed-libraries "$carried/stowage" "$carried/stowage_cuda_backend_tests" || exit 1
    gzip -f "$carried/stowage" "$carried/stowage_cuda_backend_tests"
  else
    echo "no stowage-standalone in $build (make deps fetches simdjson's source; then cmake --build $build)"; exit 1
  fi
  rm -f "$carried/debian-libs.tar.gz"  # an older --stage's shared libraries, no longer needed
  du -sh "$carried"
  echo "carry $carried and .whl, then run: bench/gpu/check.sh --carried $carried"
  exit 0
fi
if [ "${1:-}" = "--carried" ]; then carried=${2:?--carried DIR}; fi

# The machine's scratch folder ($TMPDIR, or /tmp): the executor's programs,
# DeepSpeed's install, the kept probe output (2b), this run's results.
tmp=${TMPDIR:-/tmp}
# Where the results go. Here, build/gpu-check. On the device machine, whose
# tool returns at most 8 files from $OUT, the summary is written straight
# into $OUT (so it comes back even if the run is killed) and everything else
# into a folder of this run's, packed into $OUT/results.tar.gz when the
# script exits, however it exits (pack, below).
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  out=$(mktemp -d "$tmp/stowage-gpu-check.XXXXXX")
  summary=$OUT/check.txt
else
  out=$root/build/gpu-check
  mkdir -p "$out"
  summary=$out/check.txt
fi
log() { echo "$@" | tee -a "$summary"; }
# Packs the results folder into $OUT: one gzipped tar, or 15 MiB parts of
# it (results.tar.gz.part-aa, -ab, ...: `cat` them) where it is larger
# than the tool's 16 MiB a file.
pack() {
  [ -n "${OUT:-}" ] && [ -d "$out" ] || return 0
  cp "$summary" "$out/check.txt"
  tar -C "$out" -czf "$OUT/results.tar.gz" . || { echo "packing $out into $OUT FAILED" >> "$summary"; return 1; }
  if [ "$(stat -c %s "$OUT/results.tar.gz")" -gt $((15 << 20)) ]; then
    split -b 15M "$OUT/results.tar.gz" "$OUT/results.tar.gz.part-" && rm "$OUT/results.tar.gz"
  fi
  echo "results in $OUT: check.txt and $(cd "$OUT" && ls results.tar.gz* | tr '\n' ' ')(every file of this run)" >> "$summary"
  rm -rf "$out"  # this run's own folder (mktemp, above), now packed
}
trap pack EXIT
trap 'log "stopped by a signal: packing what there is"; exit 143' TERM INT
# The check's own time budget, STOWAGE_GPU_BUDGET_S seconds (default 480),
# to give the device tool's timeout_s with 30 s or more to spare: each step
# is given its own limit or what is left of the budget, whichever is less,
# and one that would start with under 10 s left is not started (it exits
# 124 and is reported as failed, saying why), so the check ends, and packs
# its results, before the tool kills it.
deadline=$((SECONDS + ${STOWAGE_GPU_BUDGET_S:-480}))
budgeted() {  # budgeted SECONDS COMMAND...: timeout, within the budget
  local limit=$1 left=$((deadline - SECONDS)); shift
  if [ "$left" -lt 10 ]; then
    echo "not started, the check's budget (STOWAGE_GPU_BUDGET_S) is spent: $*" >> "$summary"
    return 124
  fi
  [ "$left" -lt "$limit" ] && limit=$left
  timeout "$limit" "$@"
}

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
      -cudart static -lcublasLt -Xcompiler -static-libstdc++ 2>&1 | tee -a "$summary"
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
nvidia-smi -L | tee -a "$summary"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee -a "$summary"
log "host: $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p'); $(free -g | awk '/^Mem:/ {print $2 " GiB memory"}')"

status=0
threads=8  # each CPU optimizer step's threads, in the runs (--threads) and the host's profile
# Stowage's executor programs, carried gzipped (--stage), for the host's
# profile and the machine profile below and step 3c.
executor=$tmp/stowage-executor
mkdir -p "$executor"
for program in stowage stowage_cuda_backend_tests; do
  [ -f "$carried/$program.gz" ] && gunzip -c "$carried/$program.gz" > "$executor/$program" && chmod +x "$executor/$program"
done
export STOWAGE_PROFILES="$root/profiles"  # the bundled profiles, for the carried stowage (profile_catalog.cpp)
# The host, for the machine profile (2c): `stowage profile --quick` measures
# its memory's rate under the Adam access pattern and the executor's CPU
# Adam at each thread count (docs/formats/profiles.md).
if [ -x "$executor/stowage" ]; then
  budgeted 120 "$executor/stowage" profile --quick --threads "$threads" > "$out/host-profile.yaml" 2> "$out/host-profile.err"
  if [ $? -eq 0 ]; then
    grep -E '^#   (host memory|CPU Adam)' "$out/host-profile.yaml" | tee -a "$summary"
  else
    log "stowage profile --quick FAILED (host-profile.err)"; status=1
  fi
fi

# 2b. Bandwidth and GEMM rate, first: this machine's profile is made of them.
#     Kept in $tmp as well, so that a rerun on the same machine that skips
#     the probe (STOWAGE_GPU_SKIP=probe) makes the same profile of it.
log ""
log "== cuda_probe =="
kept_probe=$tmp/stowage-gpu-probe.txt
if skip probe; then
  if [ -s "$kept_probe" ]; then
    cp "$kept_probe" "$out/probe.txt" && log "an earlier run's probe output on this machine, $kept_probe, taken instead"
  fi
elif [ -n "$probe" ]; then
  budgeted 180 "$probe" 2>&1 | tee "$out/probe.txt" | tee -a "$summary"
  if [ "${PIPESTATUS[0]}" -eq 0 ]; then cp "$out/probe.txt" "$kept_probe"; else log "cuda_probe FAILED"; status=1; fi
else
  log "cuda_probe NOT RUN: neither carried nor buildable (no nvcc)"; status=1
fi

# 2c. The machine profile every prediction below is made for: this one's,
#     measured just now (bench/gpu/this-machine: the GPU's bundled profile
#     by the name the probe printed, the host's profile above, the probe's
#     rates), so that an H100 is not predicted as an H200. The plans are
#     copied to $out/plans with their `machine:` pointed at it. Where it
#     cannot be made (no probe output, a GPU without a bundled profile:
#     STOWAGE_GPU_PROFILE=NAME names one), the committed plans and their
#     H200 VM profile (bench/gpu/plans/h200-vm.yaml), and the check says so.
plans=bench/gpu/plans
predicted_for=h200-vm
machine="h200-vm, the committed profile of the H200 VM lent on 2026-12-04"
log ""
log "== this machine's profile =="
rm -rf "$out/plans" "$out/this-machine.yaml"  # an earlier run's, where $out is build/gpu-check
if [ -s "$out/probe.txt" ] && [ -x "$executor/stowage" ] &&
   python3 bench/gpu/this-machine --probe "$out/probe.txt" --host-profile "$out/host-profile.yaml" --stowage "$executor/stowage" \
     ${STOWAGE_GPU_PROFILE:+--gpu "$STOWAGE_GPU_PROFILE"} > "$out/this-machine.yaml" 2>> "$summary"; then
  cp -r bench/gpu/plans "$out/plans" && cp "$out/this-machine.yaml" "$out/plans/"
  for plan in "$out"/plans/*.yaml; do
    head -n 1 "$plan" | grep -qx 'format: stowage/plan/v1' && sed -i 's/^machine: .*/machine: this-machine.yaml/' "$plan"
  done
  sed 's/^/  /' "$out/this-machine.yaml" | tee -a "$summary"
fi
# Every plan must still simulate on it and fit the 8 GiB cap (check-plans).
if [ -s "$out/plans/this-machine.yaml" ] &&
   python3 bench/gpu/check-plans "$executor/stowage" "$out/plans" 2>&1 | tee -a "$summary"; then
  plans=$out/plans
  predicted_for=this-machine
  machine="this machine's, measured just now: $(sed -n 's/^label: "\(.*\)"$/\1/p' "$out/this-machine.yaml")"
else
  log "this machine's profile could not be made or used (above): predictions are for the H200 VM of 2026-12-04"
fi
log "predictions for: $machine"

# 2d. The GPU as a user profiles it: `stowage profile --gpu auto` asks the
#     driver which GPU this is, measures its copies, memory and GEMMs
#     (executor/cuda/device_probe.h) and calibrates its bundled profile
#     from them (probe/gpu_calibration.h). Its calibration is printed
#     beside this machine's profile's (cuda_probe through this-machine),
#     which should agree with it to a run's spread.
if [ -x "$executor/stowage" ]; then
  log ""
  log "== stowage profile --gpu auto =="
  budgeted 120 "$executor/stowage" profile --quick --gpu auto --threads "$threads" \
    > "$out/profile-gpu-auto.yaml" 2> "$out/profile-gpu-auto.err"
  if [ $? -eq 0 ]; then
    log "  $(grep -m1 '^gpu: ' "$out/profile-gpu-auto.yaml") (this-machine's: $(sed -n 's/^gpu: //p' "$out/this-machine.yaml" 2>/dev/null))"
    for key in h2d_rate d2h_rate hbm_efficiency matmul_efficiency; do
      log "  $key: $(sed -n "s/^  $key: //p" "$out/profile-gpu-auto.yaml") (this-machine's: $(sed -n "s/^  $key: //p" "$out/this-machine.yaml" 2>/dev/null))"
    done
  else
    log "stowage profile --gpu auto FAILED (profile-gpu-auto.err): $(tail -n 1 "$out/profile-gpu-auto.err")"; status=1
  fi
fi

# 3. The kernels against their CPU twins.
log ""
log "== stowage_cuda_tests =="
if [ -x "$tests" ]; then
  budgeted 240 "$tests" --gtest_output="xml:$out/stowage_cuda_tests.xml" 2>&1 | tee "$out/stowage_cuda_tests.txt" | tail -n 25
  [ "${PIPESTATUS[0]}" -eq 0 ] || { log "stowage_cuda_tests FAILED"; status=1; }
  if grep -q "SKIPPED" "$out/stowage_cuda_tests.txt" && grep -q "no CUDA device" "$out/stowage_cuda_tests.txt"; then
    log "stowage_cuda_tests skipped for want of a device although nvidia-smi lists one"; status=1
  fi
else
  log "stowage_cuda_tests NOT RUN: not carried (run bench/gpu/check.sh --stage here and carry $carried)"; status=1
fi

# 3b. The same tests under compute-sanitizer's memcheck (out-of-bounds and
#     misaligned accesses, e.g. at a kernel's ragged end), when asked for:
#     STOWAGE_GPU_SANITIZE=1. It needs the Firecracker runtime (on gVisor
#     the device is not supported). API errors are not counted: one test
#     asks cudaMalloc for more than the device has, on purpose.
if [ "${STOWAGE_GPU_SANITIZE:-0}" = 1 ] && [ -x "$tests" ]; then
  log ""
  log "== stowage_cuda_tests under compute-sanitizer memcheck =="
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
  if [ -n "$sanitizer" ]; then
    budgeted 300 "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 9 "$tests" 2>&1 | tee "$out/memcheck.txt" | tail -n 6
    rc=${PIPESTATUS[0]}
    tail -n 6 "$out/memcheck.txt" >> "$summary"
    [ "$rc" -eq 0 ] || { log "memcheck FAILED (exit $rc; memcheck.txt)"; status=1; }
  else
    log "memcheck NOT RUN: no compute-sanitizer"
  fi
fi

# 3c. Stowage's executor on the GPU (executor/cuda/cuda_backend.h): the
#     backend's tests (its layer kernels against the CPU's; the tiny GPT
#     under every placement, losses against the CPU backend's), then
#     `stowage run --backend cuda` on the plans below under an 8 GiB device
#     cap, the tiny ones (bf16 with fp32 products; fp16 with fp16 products
#     and dynamic loss scaling) beside `--backend cpu`, with the measured and
#     predicted traces returned for `stowage compare` here. The plans are
#     bench/gpu/plans/*.yaml, on this machine's profile (2c): GPT-2 XL (1.5B,
#     one 512-token sequence, checkpointed) with the optimizer on the CPU
#     (zero-offload) and as the planner places it under the cap
#     (gpt2-xl-planned: `stowage plan --machine h200-vm-capped.yaml --model
#     gpt2-xl --training one-sequence-512.yaml --fixed-shape`, the device
#     profile 7.5 GiB so that the arena's fragmentation has half a GiB:
#     parameters on the CPU, Adam on the GPU for the first 8 layers and on
#     the CPU for the other 42, delayed update) (STOWAGE_GPU_RUNS='NAME:STEPS
#     ...' picks others; gpt2-xl-zero-3-params-cpu:3 offloads the parameters
#     with every optimizer on the CPU, gpt2-medium-all-gpu:3 runs Adam on
#     the device alone).
log ""
log "== Stowage's executor on the GPU (CUDA backend) =="
if [ -x "$executor/stowage" ] && [ -x "$executor/stowage_cuda_backend_tests" ]; then
  backend_tests="$executor/stowage_cuda_backend_tests"
  (cd "$tmp" && budgeted 240 "$backend_tests" \
     --gtest_output="xml:$out/stowage_cuda_backend_tests.xml") > "$out/stowage_cuda_backend_tests.txt" 2>&1
  rc=$?
  grep -E "^\| |^\[  (FAILED|PASSED|SKIPPED) |Failure|error" "$out/stowage_cuda_backend_tests.txt" | head -n 60 | tee -a "$summary"
  [ "$rc" -eq 0 ] || { log "stowage_cuda_backend_tests FAILED (exit $rc)"; status=1; }
  # The flags of NAME's CUDA runs: where the layers run, and in what their products. The big
  # plans' products in bf16 (what the prediction and DeepSpeed run); the tiny bf16 one's in fp32,
  # the CPU backend's math, for the loss curves below, and the tiny fp16 one's in fp16 (operand
  # rounding moves its losses by under 2^-13 on the CPU: docs/backend.md). STOWAGE_GPU_LAYERS and
  # STOWAGE_GPU_PRODUCTS override.
  cuda_flags() {  # on one line, for read -a
    local products
    case "$1" in tiny-gpt-zero-offload) products=fp32 ;; tiny-gpt-fp16-*) products=fp16 ;; *) products=bf16 ;; esac
    if [ "${STOWAGE_GPU_LAYERS:-device}" = device ]; then
      echo --layers device --products "${STOWAGE_GPU_PRODUCTS:-$products}"
    else
      echo --layers "$STOWAGE_GPU_LAYERS"
    fi
  }
  # A CUDA run measured against its prediction: `stowage compare`'s text up
  # to its table by op kind (the step, each lane's busy time, bandwidth and
  # exposed time, the most wrong lane, the compute lane's idle time; the op
  # kinds are in the .compare.json beside it). Then the JSON.
  compare_run() {  # PREDICTED MEASURED JSON
    "$executor/stowage" compare "$1" "$2" 2>&1 | sed '/^  lane  *op kind /,$d' | tee -a "$summary"
    "$executor/stowage" compare --json "$1" "$2" > "$3" 2>/dev/null || rm -f "$3"
  }
  declare -A steps_of  # each run's steps, for the enqueue-only run below
  for run in ${STOWAGE_GPU_RUNS:-tiny-gpt-zero-offload:10 tiny-gpt-fp16-zero-offload:10 gpt2-medium-zero-offload:3 gpt2-xl-zero-offload:3 gpt2-xl-planned:3}; do
    name=${run%%:*}; steps=${run##*:}; steps_of[$name]=$steps
    for backend in cuda cpu; do
      case "$name" in tiny-*) ;; *) [ "$backend" = cpu ] && continue ;; esac  # the CPU side of a big plan runs here
      log "-- stowage run $name.yaml --backend $backend --steps $steps"
      layers=(); [ "$backend" = cuda ] && read -r -a layers <<< "$(cuda_flags "$name")"
      # STOWAGE_GPU_ENQUEUE_ONLY=1: every CUDA run's host only enqueues, its ops timed by CUDA events.
      [ "$backend" = cuda ] && [ -n "${STOWAGE_GPU_ENQUEUE_ONLY:-}" ] && layers+=(--enqueue-only)
      budgeted "${RUN_TIMEOUT:-150}" "$executor/stowage" run "$plans/$name.yaml" --backend "$backend" \
        "${layers[@]}" --steps "$steps" --threads "$threads" --device-memory '8 GiB' --trace "$out/$name.$backend.trace.json" \
        --predicted-trace "$out/$name.predicted.trace.json" > "$out/$name.$backend.txt" 2>&1
      rc=$?
      grep -v -E '^\s*$' "$out/$name.$backend.txt" | tail -n 30 | tee -a "$summary"
      [ "$rc" -eq 0 ] || { log "$name on $backend FAILED (exit $rc)"; status=1; }
      # Measured against predicted, lane by lane (the table item 6 asks for).
      if [ "$backend" = cuda ] && [ -f "$out/$name.$backend.trace.json" ]; then
        compare_run "$out/$name.predicted.trace.json" "$out/$name.$backend.trace.json" "$out/$name.$backend.compare.json"
      fi
      [ -f "$out/$name.$backend.trace.json" ] && gzip -f "$out/$name.$backend.trace.json"
    done
  done
  # The loss curve on the GPU against the CPU backend's on the same machine:
  # the layers run cuBLASLt and CUDA kernels there, OpenBLAS here, so the
  # two agree to rounding, not to the bit: within bf16's 2^-8 of each other
  # at every step (the widest a bf16 model's loss may drift from rounding).
  losses() { sed -n 's/^ *step *\([0-9]*\)\/[0-9]* *loss *\([0-9.]*\).*/\1 \2/p' "$1"; }
  # Logs NAME's loss curves on cuda against cpu; fails the check over 2^-8.
  compare_losses() {
    local verdict
    verdict=$(paste -d' ' <(losses "$out/$1.cuda.txt") <(losses "$out/$1.cpu.txt") |
      awk '$1 == $3 { d = ($2 - $4) / $4; if (d < 0) d = -d; if (d > worst) worst = d; n++ }
           END { if (n == 0) print "no steps"; else printf "%d steps, largest relative difference %.2g%s\n", n, worst, (worst <= 2^-8 ? "" : " (over 2^-8)") }')
    log "$1 loss curve, cuda against cpu: $verdict"
    case "$verdict" in "no steps"|*over*) status=1 ;; esac
  }
  # The fp16 plan (dynamic loss scaling, fp16 products on the GPU) alike.
  name=tiny-gpt-fp16-zero-offload
  [ -f "$out/$name.cuda.txt" ] && [ -f "$out/$name.cpu.txt" ] && compare_losses "$name"
  if [ -f "$out/tiny-gpt-zero-offload.cuda.txt" ] && [ -f "$out/tiny-gpt-zero-offload.cpu.txt" ]; then
    compare_losses tiny-gpt-zero-offload
    # The host only enqueuing: the same kernels in the same order on each
    # stream, ordered across streams by events alone, give the printed
    # losses of the run that waits for every call (the GPU test
    # CudaBackend.EnqueuingOnlyTrainsAsSynchronisingDoes checks the bits);
    # its trace is timed by CUDA events on the streams (issue 15 item 5).
    name=tiny-gpt-zero-offload
    read -r -a layers <<< "$(cuda_flags "$name")"  # those of the run it is compared with, and its steps
    steps=${steps_of[$name]:-10}  # 10 where this run did not train it (a stale file in $out)
    log "-- stowage run $name.yaml --backend cuda ${layers[*]} --enqueue-only --steps $steps"
    budgeted "${RUN_TIMEOUT:-150}" "$executor/stowage" run "$plans/$name.yaml" --backend cuda \
      "${layers[@]}" --enqueue-only --steps "$steps" --threads "$threads" --device-memory '8 GiB' --trace "$out/$name.enqueue-only.trace.json" \
      --predicted-trace "$out/$name.predicted.trace.json" > "$out/$name.enqueue-only.txt" 2>&1
    rc=$?
    grep -v -E '^\s*$' "$out/$name.enqueue-only.txt" | tail -n 12 | tee -a "$summary"
    if [ "$rc" -ne 0 ]; then
      log "$name --enqueue-only FAILED (exit $rc)"; status=1
    elif cmp -s <(losses "$out/$name.enqueue-only.txt") <(losses "$out/$name.cuda.txt"); then
      log "tiny-gpt loss curve, enqueue-only against the synchronising cuda run: identical"
    else
      log "tiny-gpt loss curve, enqueue-only against the synchronising cuda run: DIFFERENT"; status=1
    fi
    if [ -f "$out/$name.enqueue-only.trace.json" ]; then
      compare_run "$out/$name.predicted.trace.json" "$out/$name.enqueue-only.trace.json" \
        "$out/$name.enqueue-only.compare.json"
      gzip -f "$out/$name.enqueue-only.trace.json"
    fi
  fi
  gzip -f "$out"/*.predicted.trace.json 2>/dev/null
  # Item 6's table: every CUDA run's measured step beside the prediction
  # for the same plan on this machine's profile, and their error by lane.
  log ""
  log "== every CUDA run, measured against predicted ($machine), busy time per step by lane =="
  python3 bench/gpu/run-table "$out" 2>&1 | tee -a "$summary"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { log "run-table FAILED"; status=1; }
else
  log "executor on the GPU NOT RUN: stowage and stowage_cuda_backend_tests not carried (bench/gpu/check.sh --stage)"; status=1
fi

# 5. PyTorch on the same GPU, the same sizes and work, side by side.
log ""
log "== torch beside cuda_probe =="
if skip torch; then :
elif python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  budgeted 180 python3 bench/gpu/torch_peer.py ${probe:+--probe "$out/probe.txt"} 2>&1 | tee -a "$summary"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { log "torch_peer FAILED"; status=1; }
else
  log "torch peer NOT RUN: python3 has no torch with CUDA"
fi

# 6. DeepSpeed ZeRO-Offload on the same GPU, under the configurations
#    Stowage exported (bench/gpu/plans/NAME.ds.json, written here by
#    `stowage simulate ... --save-plan NAME.yaml` and `stowage export
#    deepspeed NAME.yaml`; NAME.args holds the model and sequence the
#    script needs: docs/gpu.md), with a PyTorch profiler trace for
#    `stowage compare` here. DeepSpeed travels as its source package and its
#    pure-Python dependencies as wheels (.whl, carried; DEVELOPERS.md).
log ""
log "== DeepSpeed ZeRO-Offload =="
if skip deepspeed; then :
elif [ -n "$(ls .whl/deepspeed-*.tar.gz 2>/dev/null)" ] && python3 -c 'import torch' 2>/dev/null; then
  site=$tmp/stowage-site
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl \
    >>"$summary" 2>&1 &&
  DS_BUILD_OPS=0 python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --target "$site" .whl/deepspeed-*.tar.gz >>"$summary" 2>&1
  if [ $? -ne 0 ]; then
    log "installing DeepSpeed from .whl FAILED (see check.txt)"; status=1
  else
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" TORCH_EXTENSIONS_DIR=$tmp/stowage-torch-ext MAX_JOBS=16
    # shellcheck disable=SC2086
    for config in $(for pattern in ${STOWAGE_GPU_PLANS:-*}; do ls bench/gpu/plans/$pattern.ds.json; done); do
      name=$(basename "$config" .ds.json)
      args=$(cat "bench/gpu/plans/$name.args")   # --model ... --sequence ... [--checkpointing]
      log "-- $name: deepspeed_offload.py --ds-config $config $args"
      # shellcheck disable=SC2086
      budgeted "${DS_TIMEOUT:-300}" python3 bench/gpu/deepspeed_offload.py --ds-config "$config" $args \
        -o "$tmp/$name.kineto.json" > "$out/$name.log" 2>&1
      rc=$?
      grep -E "^(model:|deepspeed|step [0-9])" "$out/$name.log" | tee -a "$summary"
      if [ "$rc" -ne 0 ]; then
        tail -n 30 "$out/$name.log" >> "$summary"; log "$name FAILED (exit $rc; $name.log)"; status=1
      else
        gzip -c "$tmp/$name.kineto.json" > "$out/$name.kineto.json.gz"
        log "trace: $name.kineto.json.gz ($(du -h "$out/$name.kineto.json.gz" | cut -f1))"
      fi
    done
  fi
else
  log "DeepSpeed NOT RUN: no .whl/deepspeed-*.tar.gz carried, or no torch"
fi

# 6b. Stowage's executor beside DeepSpeed on the plans both ran (the same
#     model shape, batch, placement and device cap): each one's steady step.
log ""
log "== the same plan, Stowage's executor and DeepSpeed =="
log "| plan | Stowage (cuda), measured step | predicted ($predicted_for) | DeepSpeed ZeRO-Offload, median step |"
log "|---|---|---|---|"
for ours_out in "$out"/*.cuda.txt; do
  [ -f "$ours_out" ] || continue
  name=$(basename "$ours_out" .cuda.txt)
  [ -f "$out/$name.log" ] || continue
  measured=$(sed -n 's/^ *measured *\([0-9.]* m\{0,1\}s\) per step.*/\1/p' "$ours_out")
  predicted=$(sed -n 's/^ *predicted *\([0-9.]* m\{0,1\}s\) per step.*/\1/p' "$ours_out")
  theirs=$(sed -n 's/^deepspeed step: median \([0-9.]* s\).*/\1/p' "$out/$name.log")
  log "| $name | ${measured:-failed} | ${predicted:-?} | ${theirs:-failed} |"
done

# 7. Not implemented yet (issue 15); listed so that nobody reads this
#    check as the whole of item 6.
log ""
log "== not yet implemented (issue 15) =="
log "- the host only enqueuing is not the default: without --enqueue-only every backend call"
log "  synchronises its stream before it returns, and ops carry host times (docs/backend.md)"
log "- the CPU backend's products stay fp32: --products bf16|fp16 exists on the GPU alone, so"
log "  the tiny plans' curves agree with the CPU's to rounding, not bit for bit"
log "- the held-out loss is computed on the host (OpenBLAS over the master weights) on every backend"
log "- attention runs one GEMM per (sequence, head), as the CPU model does, not a batched one"
log ""
# Issue 15 asks for a check that finishes in under 5 minutes on an H200;
# the budget above is only the cap that keeps it inside the device tool's.
log "the check took $SECONDS s$([ "$SECONDS" -gt 300 ] && echo ': OVER the 5 minutes issue 15 asks for')"
[ -n "${OUT:-}" ] || log "results in $out"  # else pack says where, on exit
exit $status
