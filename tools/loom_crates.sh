#!/usr/bin/env bash
# Real crates' loom suites, each run under crates.io's loom 0.7 and under
# c11check (its loom compatibility crate put in with one
# `[patch.crates-io] loom = { path = ... }` line), in the same run, with the
# settings each crate's CI uses. Prints one markdown row per suite and
# engine: tests passed/failed, wall time, and the verdict when a suite
# does not finish within the time limit.
#
#   bash tools/loom_crates.sh [SECONDS]    (time limit per suite; default 300)
#
# The crates come from the cargo registry at run time (a scratch package
# depends on them and `cargo fetch`es them); nothing is vendored. Each is
# copied under target/loom-crates/ and built there twice.
set -uo pipefail
root="${C11CHECK_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}"
limit="${1:-300}"
work="$root/target/loom-crates"
mkdir -p "$work"

# name version | RUSTFLAGS | environment | cargo test arguments
suites=(
  "concurrent-queue 2.5.0|--cfg loom|LOOM_MAX_PREEMPTIONS=4|--release --test loom --features loom"
  "event-listener 5.4.0|--cfg loom||--release --test loom --features loom"
  "oneshot 0.1.13|--cfg oneshot_loom||--release --test loom --features loom"
  "bytes 1.12.1|--cfg loom||--release --lib"
)

# Fetch the sources through a scratch package.
fetch="$work/fetch"
mkdir -p "$fetch/src"
: >"$fetch/src/lib.rs"
{
  printf '[package]\nname = "loom-crates-fetch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n'
  for s in "${suites[@]}"; do
    read -r name version <<<"${s%%|*}"
    printf '%s = "=%s"\n' "$name" "$version"
  done
} >"$fetch/Cargo.toml"
(cd "$fetch" && cargo fetch -q) || { echo "loom_crates: cargo fetch failed" >&2; exit 2; }
registry_dir() {
  (cd "$fetch" && cargo metadata --format-version 1 2>/dev/null) | python3 -c '
import json, os, sys
name, version = sys.argv[1], sys.argv[2]
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == name and p["version"] == version:
        print(os.path.dirname(p["manifest_path"]))
' "$1" "$2"
}

echo "| crate | engine | tests passed | failed | time | note |"
echo "|---|---|---:|---:|---:|---|"
for s in "${suites[@]}"; do
  IFS='|' read -r nv flags envs args <<<"$s"
  read -r name version <<<"$nv"
  src="$(registry_dir "$name" "$version")"
  [ -d "$src" ] || { echo "| $name $version | - | - | - | - | sources not found |"; continue; }
  for engine in loom c11check; do
    dir="$work/$name-$version-$engine"
    rm -rf "$dir"
    cp -r "$src" "$dir"
    chmod -R u+w "$dir"
    # Resolved afresh for both engines (a published lock file can pin what
    # c11check's own dependencies cannot use).
    rm -f "$dir/Cargo.lock"
    # A crate of its own, not a member of an enclosing workspace.
    grep -q '^\[workspace\]' "$dir/Cargo.toml" || printf '\n[workspace]\n' >>"$dir/Cargo.toml"
    if [ "$engine" = c11check ]; then
      printf '\n[patch.crates-io]\nloom = { path = "%s/crates/loom" }\n' "$root" >>"$dir/Cargo.toml"
    fi
    log="$dir/test.log"
    start=$(date +%s.%N)
    (cd "$dir" && env ${envs:+$envs} RUSTFLAGS="$flags" CARGO_TARGET_DIR="$work/target-$engine" \
      timeout "$limit" cargo test $args -- --test-threads 1 >"$log" 2>&1)
    rc=$?
    end=$(date +%s.%N)
    secs=$(python3 -c "print(f'{$end - $start:.1f} s')")
    passed=$(awk '/^test result/ { p += $4 } END { print p + 0 }' "$log")
    failed=$(awk '/^test result/ { f += $6 } END { print f + 0 }' "$log")
    note=""
    if [ $rc -eq 124 ]; then
      note="time limit ($limit s, build included); last test started: $(grep -E '^test .* \.\.\. *$|^test [^ ]+ has been running' "$log" | tail -n 1 | cut -c1-80)"
    elif [ $rc -ne 0 ] && [ "$failed" = 0 ]; then
      note="did not run: $(grep -m1 -E '^error' "$log" | cut -c1-100)"
    fi
    # Which loom the test ran, from the lock file: the path one (no
    # source) is c11check's.
    which=$(python3 - "$dir/Cargo.lock" <<'PY'
import sys, tomllib
try:
    lock = tomllib.load(open(sys.argv[1], "rb"))
except OSError:
    print("not built"); sys.exit()
found = [p for p in lock.get("package", []) if p["name"] == "loom"]
print(", ".join(("loom " + p["version"] + (" from crates.io" if "source" in p else " by path")) for p in found) or "no loom")
PY
)
    echo "| $name $version | $engine ($which) | $passed | $failed | $secs | $note |"
  done
done
