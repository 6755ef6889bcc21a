#!/bin/sh
# Run each libFuzzer target for FUZZ_SECONDS over a working copy of its seed corpus and
# print executions and crashes. Used by `make fuzz`; expects the targets in $1/fuzz.
#   fuzz/run-fuzzers.sh build-fuzz 60
#   FUZZ_TARGETS=fuzz_gpt fuzz/run-fuzzers.sh build-fuzz 300     (one target)
set -u
build=${1:-build-fuzz}
seconds=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
total_crashes=0
for target in ${FUZZ_TARGETS:-fuzz_safetensors fuzz_config fuzz_session fuzz_model fuzz_bpe fuzz_gpt}; do
  bin=$build/fuzz/$target
  work=$build/fuzz-work/$target
  crashes=$build/fuzz-crashes/$target
  rm -rf "$crashes"   # count only what this run finds; the working corpus is kept and grows
  mkdir -p "$work" "$crashes"
  cp -n "$root/fuzz/corpus/$target/"* "$work/" 2>/dev/null
  dict=""
  [ -f "$root/fuzz/${target#fuzz_}.dict" ] && dict="-dict=$root/fuzz/${target#fuzz_}.dict"
  log=$build/fuzz-work/$target.log
  # -timeout: a hang is a bug; -malloc_limit_mb: so is an allocation sized by the input.
  "$bin" $dict -max_total_time="$seconds" -timeout=10 -malloc_limit_mb=512 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$work" >"$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  found=$(find "$crashes" -type f | wc -l)
  total_crashes=$((total_crashes + found))
  printf '%-18s %s executions in %ss, corpus %s files, %s crash(es) in %s (exit %s)\n' \
    "$target" "${runs:-?}" "$seconds" "$(ls "$work" | wc -l)" "$found" "$crashes" "$status"
  if [ "$status" -ne 0 ]; then
    grep -E "ERROR|broken promise|SUMMARY" "$log" | head -n 5
  fi
done
[ "$total_crashes" -eq 0 ]
