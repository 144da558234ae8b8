#!/usr/bin/env bash
# Builds c11check and installs it under PREFIX (default ~/.local):
# PREFIX/bin/c11check and its runtime, PREFIX/lib/libc11check_rt.{so,a}
# (`c11check` finds the runtime in ../lib from itself).
#   bash tools/install.sh [PREFIX]
set -euo pipefail
prefix="${1:-$HOME/.local}"
cd "$(dirname "$0")/.."
cargo build --release -p c11check-cli -p c11check-c-runtime
target="${CARGO_TARGET_DIR:-target}/release"
mkdir -p "$prefix/bin" "$prefix/lib"
install -m 755 "$target/c11check" "$prefix/bin/c11check"
install -m 644 "$target/libc11check_rt.so" "$target/libc11check_rt.a" "$prefix/lib/"
echo "c11check installed: $prefix/bin/c11check (runtime in $prefix/lib)"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "add $prefix/bin to PATH to run it as \`c11check\`" ;;
esac
