# Shared by install_tree.sh and debian_package.sh.

# kiln_install_work SRC WORK: copies what check_installed.sh needs to WORK.
kiln_install_work() {
  local src="$1" work="$2"
  mkdir -p "$work"
  cp "$src/docs/example/small_cnn.onnx" "$work/"
  cp -r "$src/docs/example/test_data_set_0" "$work/"
  cp -r "$src/test/install/host" "$work/host"
  cp "$src/test/install/install_check.py" "$src/test/install/check_installed.sh" "$work/"
}

# kiln_no_tree_paths DIR SRC BUILD: fails if an installed file names the
# source or build tree.
kiln_no_tree_paths() {
  local dir="$1" src="$2" build="$3" hits
  hits=$(grep -rlF -e "$src/" -e "$build/" "$dir" || true)
  if [ -n "$hits" ]; then
    echo "FAIL: installed files refer to the source or build tree:"
    echo "$hits"
    return 1
  fi
  echo "no installed file refers to $src or $build"
}

# kiln_run_hidden SRC BUILD CMD...: runs CMD with the source and build trees
# replaced by empty folders (a private mount namespace) when this machine
# allows it (root with unshare); otherwise runs it as is and says so.
kiln_run_hidden() {
  local src="$1" build="$2"
  shift 2
  local empty
  empty=$(mktemp -d)
  if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    echo "(the source tree $src and build tree $build are hidden)"
    unshare -m bash -c 'mount --bind "$1" "$3" && mount --bind "$1" "$2" && shift 3 && exec "$@"' \
      hide "$empty" "$src" "$build" "$@"
  else
    echo "(cannot hide the source tree here: no unshare; the path check stands in)"
    "$@"
  fi
}
