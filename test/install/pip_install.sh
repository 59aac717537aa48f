#!/usr/bin/env bash
# install.pip: `pip install .` into a fresh virtual environment (offline, no
# build isolation, Debian's setuptools), then `import kiln` from another
# folder with the source tree out of reach.
set -euo pipefail
build="$(cd "$1" && pwd)"
src="$(cd "$2" && pwd)"
source "$src/test/install/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
KILN_BUILD="$build" "$tmp/venv/bin/pip" install --no-build-isolation --no-index \
  --quiet "$src" > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; exit 1; }
site=$("$tmp/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['platlib'])")
echo "pip installed kiln into $site"
[ -f "$site/kiln/py.typed" ] || { echo "FAIL: the type marker py.typed is missing"; exit 1; }
kiln_no_tree_paths "$site/kiln" "$src" "$build"
kiln_install_work "$src" "$tmp/work"
cd "$tmp/work"
kiln_run_hidden "$src" "$build" "$tmp/venv/bin/python" install_check.py python \
  "$site" small_cnn.onnx test_data_set_0
