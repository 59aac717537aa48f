#!/usr/bin/env bash
# install.tree: `cmake --install BUILD --prefix P` into a temporary P, then
# checks the installed tree from a folder outside the source tree.
set -euo pipefail
build="$(cd "$1" && pwd)"
src="$(cd "$2" && pwd)"
source "$src/test/install/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
for f in bin/kiln-compile bin/kiln-run bin/kiln-serve bin/kiln-opt bin/kiln-plan \
         include/kiln/runtime.h lib/cmake/KilnRuntime/KilnRuntimeConfig.cmake \
         lib/python3/dist-packages/kiln/__init__.py share/doc/kiln/README.md; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: $f is not installed"; exit 1; }
done
kiln_no_tree_paths "$tmp/prefix" "$src" "$build"
kiln_install_work "$src" "$tmp/work"
kiln_run_hidden "$src" "$build" bash "$tmp/work/check_installed.sh" "$tmp/prefix" "$tmp/work"
