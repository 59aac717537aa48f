#!/bin/sh
# Builds the kiln-serve image from the .deb that CPack wrote into build/.
#
#   deploy/container/build.sh [TAG]                     # stage serve
#   MODEL=m.onnx MODEL_NAME=mlp MCPU=x86-64-v3 deploy/container/build.sh [TAG]
#                                                       # stage serve-with-model
#
# CONTAINER=podman selects Podman (default: docker); KILN_BUILD the build folder.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD:-$root/build}
tool=${CONTAINER:-docker}
tag=${1:-kiln-serve:0.1.0}

set -- "$build"/kiln_*_amd64.deb
if [ ! -f "$1" ] || [ $# -ne 1 ]; then
  echo "build.sh: expected exactly one kiln_*_amd64.deb in $build" >&2
  echo "          (make it with: cmake --build $build --target package)" >&2
  exit 1
fi
deb=$1

# A small context: the Containerfile, the .deb and the model, nothing else.
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp "$root/deploy/container/Containerfile" "$deb" "$ctx/"
target=serve
if [ -n "${MODEL:-}" ]; then
  cp "$MODEL" "$ctx/model.onnx"
  target=serve-with-model
fi
"$tool" build --target "$target" \
  --build-arg MODEL_NAME="${MODEL_NAME:-model}" --build-arg MCPU="${MCPU:-x86-64-v3}" \
  -f "$ctx/Containerfile" -t "$tag" "$ctx"
