#!/usr/bin/env bash
# Mabain's multi-threaded insert driver (../shared/realworld/mabain,
# unchanged) natively, under ThreadSanitizer and under c11check (one random
# execution with a fresh database directory, races off so that the run goes
# on to the driver's lookups), at 100 and 1,000 keys: wall time and peak
# RSS of one execution each, as a markdown table.
#
#   bash benchmarks/mabain/run.sh [KEYS...]     (default: 100 1000)
#
# Needs g++, make, Debian's libssl-dev, and c11check built (cargo build
# --release). Builds in a temporary directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${C11CHECK_REALWORLD:-$root/../shared/realworld}/mabain
c11check=$root/target/release/c11check
[ -f "$src/src/db.cpp" ] || { echo "Mabain's sources are missing at $src" >&2; exit 2; }
[ -x "$c11check" ] || { echo "build c11check first: cargo build --release" >&2; exit 2; }
keys=("$@"); [ ${#keys[@]} -gt 0 ] || keys=(100 1000)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# build KIND CXX EXTRA-FLAGS: the library and the driver in $work/KIND.
build() {
  local kind=$1 cxx=$2 flags=$3
  cp -r "$src" "$work/$kind"
  (cd "$work/$kind/src" && sed -i "s|-std=c++11|-std=c++11 $flags|" Makefile &&
    make -j2 CPP="$cxx" LDFLAGS="-lpthread $flags" >/dev/null 2>&1)
  mkdir -p "$work/$kind/include/mabain"
  (cd "$work/$kind/src" && cp db.h mb_data.h mabain_consts.h lock.h error.h integer_4b_5b.h "../include/mabain/")
  (cd "$work/$kind/examples" && $cxx $flags -I. -I../include -g -O0 -std=c++11 \
    mb_multi_thread_insert_test.cpp -o driver -L../src -Wl,-rpath,"$work/$kind/src" \
    -lmabain -lcrypto -lpthread >/dev/null 2>&1)
}
build native g++ ""
build tsan g++ "-fsanitize=thread"
build c11check "$c11check c++" ""

# measure CMD...: "seconds, MiB" of one run (GNU time; its last line).
measure() {
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || true
  tail -n 1 "$work/time" | awk '{printf "%.2f s, %d MiB", $1, $2 / 1024}'
}

# c11check's own time for its one execution (the run then executes it
# again for the report, and once more to show the program's output): from
# the line that says when it found the bug (or its summary line without
# one); the peak RSS is the whole run's.
measure_c11check() {
  local whole secs
  whole=$(C11CHECK_RACES=0 measure "$@")
  secs=$( (grep -o "found a bug, [0-9.]*s into" "$work/err" ||
    grep -o "1 random executions in [0-9.]*s" "$work/err") | head -n 1 | grep -Eo "[0-9.]+s" | tr -d s)
  echo "${secs:-?} s, ${whole#*, }"
}

echo "| keys | native | ThreadSanitizer | c11check (one random execution) | c11check / TSan |"
echo "|---:|---:|---:|---:|---:|"
for n in "${keys[@]}"; do
  fresh() { rm -rf "$work/db" && mkdir -p "$work/db"; }
  fresh; nat=$(measure "$work/native/examples/driver" "$work/db/" "$n")
  fresh; tsan=$(measure setarch -R "$work/tsan/examples/driver" "$work/db/" "$n")
  fresh; rm -f /dev/shm/_mabain_q*
  chk=$(measure_c11check "$c11check" run --fresh "$work/db" --fresh '/dev/shm/_mabain_q*' --random 1 --seed 1 \
    "$work/c11check/examples/driver" "$work/db/" "$n")
  ratio=$(awk -v a="${chk%% s*}" -v b="${tsan%% s*}" 'BEGIN { if (b > 0) printf "%.0fx", a / b; else print "-" }')
  echo "| $n | $nat | $tsan | $chk | $ratio |"
done
