#!/usr/bin/env bash
# Mutation check of the kernels' barriers: deletes each __syncthreads of
# executor/cuda in turn, rebuilds the emulated tests, runs the kernel and
# layer tests in both orders (cuda_emulation.h), and prints which fail. A
# barrier whose deletion no test notices is one the tests do not need,
# or one they should. Not run in CI (a rebuild per barrier, minutes).
#
#   tests/executor/cuda/emulated/delete_each_barrier.sh [build/dev]
#
# The source is restored from git after each deletion, and on any exit (a
# failed build, Ctrl-C), which is why executor/cuda must have no
# uncommitted changes. Exit status 1 if some deletion went unnoticed, 2 on
# a usage or build error.
set -euo pipefail
build=${1:-build/dev}
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
emulated=$build/tests/executor/cuda/emulated
if [ ! -d "$emulated" ]; then
  echo "delete_each_barrier.sh: $emulated: no emulated build there (configure and build $build first)" >&2
  exit 2
fi
if ! git diff --quiet -- executor/cuda; then
  echo "delete_each_barrier.sh: executor/cuda has uncommitted changes; commit or stash them first" >&2
  exit 2
fi

restore() { git checkout -q -- executor/cuda; }
trap restore EXIT

# Every test but the backend's training runs (they use the same kernels, at minutes a run).
filter='-CudaEmulation*:CudaBackend.*'
unnoticed=0
while IFS=: read -r file line _; do
  sed -i "${line}s/__syncthreads();/\/* deleted *\//" "$file"
  if ! cmake --build "$build" --target stowage_cuda_emulated_tests stowage_cuda_backend_emulated_tests \
       > "$build/delete_each_barrier.log" 2>&1; then
    echo "delete_each_barrier.sh: the build failed with $file:$line deleted: $build/delete_each_barrier.log" >&2
    exit 2
  fi
  row="$file:$line"
  noticed=0
  for order in forward reverse; do
    failed=""
    for program in stowage_cuda_emulated_tests stowage_cuda_backend_emulated_tests; do
      status=0
      STOWAGE_CUDA_EMULATION_ORDER=$order "$emulated/$program" --gtest_filter="$filter" \
        > "$build/delete_each_barrier.out" 2>&1 || status=$?
      # A failed test's line; a crash (a divergent barrier aborts) has none.
      failed+=$(sed -n 's/^\[  FAILED  \] \([A-Za-z][A-Za-z0-9_.]*\) (.*/\1 /p' "$build/delete_each_barrier.out" | tr '\n' ' ')
      [ "$status" -gt 1 ] && failed+="$program-crashed($status) "
    done
    row="$row | $order: ${failed:-passes}"
    [ -n "$failed" ] && noticed=1
  done
  echo "$row"
  [ "$noticed" = 1 ] || unnoticed=1
  restore
done < <(grep -n '__syncthreads();' executor/cuda/*.cu executor/cuda/*.cuh)
cmake --build "$build" --target stowage_cuda_emulated_tests stowage_cuda_backend_emulated_tests > /dev/null
exit $unnoticed
