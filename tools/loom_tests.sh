#!/usr/bin/env bash
# Runs loom 0.7.2's own tests/ folder against c11check's loom compatibility
# crate (crates/loom), unchanged, and prints pass/fail/ignored counts.
#
# loom's sources come from the cargo registry (an optional dependency of
# crates/bench, feature `peers`); nothing of loom is copied into this repository: the tests are
# copied into target/loom-tests at run time.
#
#   bash tools/loom_tests.sh            # loom's selection (its #[ignore]s skipped)
#   bash tools/loom_tests.sh --ignored  # also the tests loom ignores
#   bash tools/loom_tests.sh --check    # loom's selection; fails unless only the
#                                       # known differences fail (used by CI)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo fetch -q
src="$(cargo metadata --format-version 1 --all-features 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)
for p in m["packages"]:
    if p["name"] == "loom" and p["version"] == "0.7.2" and p["source"] is not None:
        import os; print(os.path.dirname(p["manifest_path"]))
')"
if [ -z "$src" ] || [ ! -d "$src/tests" ]; then
    echo "loom_tests: loom 0.7.2 sources not found in the cargo registry" >&2
    exit 2
fi
work="$root/target/loom-tests"
rm -rf "$work"
mkdir -p "$work/src" "$work/tests"
cp "$src"/tests/*.rs "$work/tests/"
echo "// empty" > "$work/src/lib.rs"
cat > "$work/Cargo.toml" <<TOML
[package]
name = "loom-tests-under-c11check"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dev-dependencies]
loom = { path = "$root/crates/loom", features = ["futures"] }
futures-util = "0.3"

[profile.test]
opt-level = 2
TOML
extra=()
if [ "${1:-}" = "--ignored" ]; then extra=(--include-ignored); fi
# loom-specific behaviour c11check does not copy (see crates/loom/src/lib.rs):
known="lazy_static_arc_shutdown double_panic_at_branch_max"
cd "$work"
CARGO_TARGET_DIR="$root/target/loom-tests-target" cargo test --release --no-fail-fast -- "${extra[@]}" 2>&1 | tee "$work/log.txt" | grep -E "^test |^test result" || true
echo
awk '/^test result/ { p += $4; f += $6; i += $8 } END { printf "loom tests under c11check: %d passed, %d failed, %d ignored\n", p, f, i }' "$work/log.txt"
if [ "${1:-}" = "--check" ]; then
    failed="$(grep -E '^test .* FAILED$' "$work/log.txt" | sed -E 's/^test ([^ ]+).*/\1/' | sort | tr '\n' ' ')"
    expected="$(echo $known | tr ' ' '\n' | sort | tr '\n' ' ')"
    if [ "$failed" != "$expected" ]; then
        echo "loom_tests: failures differ from the known ones: got [$failed], expected [$expected]" >&2
        exit 1
    fi
    passed="$(awk '/^test result/ { p += $4 } END { print p }' "$work/log.txt")"
    if [ "$passed" -lt 123 ]; then
        echo "loom_tests: only $passed loom tests passed (expected at least 123)" >&2
        exit 1
    fi
fi
