# Shared by .ci/example and .ci/test: install what is missing, then build.
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KILN_BUILD="${KILN_BUILD:-$KILN_ROOT/build}"
KILN_JOBS="${KILN_JOBS:-2}"

# Debian 12 packages Kiln needs to build and test (LLVM/MLIR 22 come from
# bookworm-security).
KILN_PACKAGES=(
  cmake ninja-build g++ ccache git
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libonnx-dev libprotobuf-dev protobuf-compiler
  python3-dev python3-numpy python3-onnx python3-pytest pybind11-dev
  python3-torch python3-torchvision
  libgtest-dev libcli11-dev libcpp-httplib-dev nlohmann-json3-dev pkg-config
  libgrpc++-dev protobuf-compiler-grpc python3-grpcio python3-protobuf
  libonnx-testdata libzip-dev
  dpkg-dev file python3-venv python3-pip python3-setuptools python3-wheel
  python3-yaml python3-jsonschema
)

kiln_install_deps() {
  local missing=()
  for p in "${KILN_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "kiln: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

kiln_build() {
  if [ ! -f "$KILN_BUILD/build.ninja" ]; then
    cmake -G Ninja -S "$KILN_ROOT" -B "$KILN_BUILD" -DCMAKE_BUILD_TYPE=Release
  fi
  ninja -C "$KILN_BUILD" -j "$KILN_JOBS"
}
