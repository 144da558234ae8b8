#!/usr/bin/env bash
# libvsync's verification harnesses (verify/) and spinlock tests
# (test/spinlock/), built unchanged by libvsync's own CMake files with
# `c11check cc` as the C compiler, each explored exhaustively with a time
# budget. Prints one line per program: its verdict, executions and time,
# then a count per verdict.
#
#   bash tools/libvsync.sh [SECONDS]        (default 10 per program)
#
# Needs cmake and make; reads ../shared/realworld/libvsync (or
# $C11CHECK_LIBVSYNC) in place and builds in a temporary directory.
set -uo pipefail
cd "$(dirname "$0")/.."
budget="${1:-10}"
src="$(realpath "${C11CHECK_LIBVSYNC:-../shared/realworld/libvsync}")"
[ -d "$src/verify" ] || { echo "libvsync is missing: expected it at $src" >&2; exit 2; }
command -v cmake >/dev/null || { echo "cmake is missing (apt-get install cmake)" >&2; exit 2; }
cargo build --release -q -p c11check-cli -p c11check-c-runtime || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# CMake takes a compiler path, not a command with arguments.
printf '#!/bin/sh\nexec %s cc "$@"\n' "$(realpath target/release/c11check)" >"$work/cc"
chmod +x "$work/cc"
cmake -S "$src" -B "$work/build" -DCMAKE_C_COMPILER="$work/cc" -DCMAKE_C_FLAGS=-O1 \
  >"$work/cmake.log" 2>&1 || { tail -n 20 "$work/cmake.log"; exit 2; }
for d in verify test/spinlock; do
  make -C "$work/build/$d" -k -j"$(nproc)" >"$work/make.log" 2>&1 ||
    grep -m5 'error' "$work/make.log"
done
: >"$work/verdicts"
while IFS= read -r exe; do
  name=${exe#"$work/build/"}
  verdict=$(C11CHECK_MAX_DURATION="$budget" timeout $((budget * 3 + 30)) "$exe" 2>&1 |
    grep -E '^c11check( found|: no bug|: no execution)' | tail -n 1)
  printf '%-72s %s\n' "$name" "${verdict:-(no verdict: crashed or timed out)}" | tee -a "$work/verdicts"
done < <(find "$work/build/verify" "$work/build/test/spinlock" -type f -executable \
  ! -name '*.sh' ! -path '*CMakeFiles*' | sort)
echo
all=$(grep -c 'no bug found' "$work/verdicts")
budget_only=$(grep -c 'budget was reached' "$work/verdicts")
echo "no bug, explored completely: $((all - budget_only))"
echo "no bug within the budget:    $budget_only"
echo "bug reported:                $(grep -c 'c11check found' "$work/verdicts")"
echo "no execution in the budget:  $(grep -c 'no execution of' "$work/verdicts")"
echo "no verdict:                  $(grep -c 'no verdict' "$work/verdicts")"
