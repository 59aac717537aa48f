#!/usr/bin/env bash
# install.deb: CPack's kiln_<version>_amd64.deb installs with apt-get, runs
# the example from /usr/bin with the source tree out of reach, and removes
# cleanly. Needs root (it changes the machine's packages): skipped (77)
# otherwise, and when a kiln package is already installed (not ours to remove).
set -euo pipefail
build="$(cd "$1" && pwd)"
src="$(cd "$2" && pwd)"
source "$src/test/install/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: installing a .deb needs root"; exit 77
fi
if dpkg-query -W -f='${Status}' kiln 2>/dev/null | grep -q "install ok installed"; then
  echo "SKIP: a kiln package is already installed on this machine"; exit 77
fi
tmp=$(mktemp -d)
cleanup() {
  if dpkg-query -W -f='${Status}' kiln 2>/dev/null | grep -q "installed"; then
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -q kiln > /dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

(cd "$build" && cpack -G DEB -B "$tmp/pkg" > "$tmp/cpack.log") ||
  { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/pkg/kiln_*_amd64.deb)
echo "== $(basename "$deb")"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for need in libllvm22 libmlir-22 libonnx1 libprotobuf32 libc6 python3-numpy; do
  case ", $depends" in
    *", $need"*) ;;
    *) echo "FAIL: Depends lacks $need"; exit 1 ;;
  esac
done
kiln_no_tree_paths "$tmp/pkg/_CPack_Packages" "$src" "$build"

cp "$deb" "$tmp/"   # apt-get reads local .deb files as the _apt user
chmod 644 "$tmp/$(basename "$deb")"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  "$tmp/$(basename "$deb")" > "$tmp/apt.log" || { cat "$tmp/apt.log"; exit 1; }
echo "installed: $(dpkg-query -W -f='${Package} ${Version}' kiln)"
kiln_install_work "$src" "$tmp/work"
kiln_run_hidden "$src" "$build" bash "$tmp/work/check_installed.sh" /usr "$tmp/work"

DEBIAN_FRONTEND=noninteractive apt-get remove -y -q kiln > "$tmp/apt.log"
for f in /usr/bin/kiln-compile /usr/include/kiln/runtime.h \
         /usr/lib/python3/dist-packages/kiln; do
  [ ! -e "$f" ] || { echo "FAIL: $f is left after apt-get remove"; exit 1; }
done
echo "== removed: no kiln file is left"
