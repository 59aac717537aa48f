#!/bin/bash
# One command for the CUDA target (docs/gpu.md). On a machine with an NVIDIA
# GPU and driver: the development models on the GPU against their references,
# timed beside ONNX Runtime's CPU provider, and the ONNX node conformance suite
# compiled for CUDA. Without a GPU: compile, ptxas for sm_80/sm_90, the
# no-device status, and the kernels emulated on the host against references.
#
# usage: bench/gpu/run.sh [MODELS_DIR=/tmp/dev] [run.py options, e.g. --arch sm_90]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec /usr/bin/python3 "$here/run.py" "$@"
