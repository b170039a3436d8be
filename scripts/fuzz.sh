#!/bin/bash
# Build the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan in
# build-fuzz, and run each for a bounded time on its seed corpus.
#   scripts/fuzz.sh [target ...]     (default: all of them)
# FUZZ_SECONDS (default 60) is the time per target. New inputs go to
# build-fuzz/corpus/<target>; a crash leaves build-fuzz/artifacts/<target>/
# crash-* and makes the script fail: add that input to the unit tests.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(mountinfo diskstats config state bus_arguments etcd)

CC=clang CXX=clang++ cmake -S . -B build-fuzz -DTRIMD_FUZZ=ON -DTRIMD_BUILD_TESTS=OFF \
  -DTRIMD_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# One target for its time; its verdict on stdout once it is done.
fuzz_one() {
  local target=$1
  local corpus=build-fuzz/corpus/$target
  local artifacts=build-fuzz/artifacts/$target
  local log=build-fuzz/fuzz-$target.log
  mkdir -p "$corpus" "$artifacts"
  # -timeout: one input taking a second is a bug (nothing here may be slow).
  if ! "build-fuzz/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=1 \
      -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" "tests/fuzz/seeds/$target" >"$log" 2>&1; then
    echo "== fuzz_$target: FAILED"
    tail -n 40 "$log"
    return 1
  fi
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  echo "== fuzz_$target: ${runs:-?} executions in ${seconds}s"
}

# As many targets at a time as there are CPUs: each is single-threaded.
status=0
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
