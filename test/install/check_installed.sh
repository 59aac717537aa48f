#!/usr/bin/env bash
# Uses an installed Kiln under PREFIX the way a user would, from WORK, a
# folder outside the source and build trees that holds copies of the example
# model, its test data, test/install/host and install_check.py:
#   kiln-compile + kiln-run --test-data, a C program built against
#   find_package(KilnRuntime), and `import kiln` from Python.
set -euo pipefail
prefix="$1"
work="$2"
cd "$work"
export PATH="$prefix/bin:/usr/bin:/bin"

echo "== $prefix/bin/kiln-compile small_cnn.onnx -o m.so"
[ "$(command -v kiln-compile)" = "$prefix/bin/kiln-compile" ]
kiln-compile small_cnn.onnx -o m.so
kiln-run m.so --test-data test_data_set_0 --rtol 1e-4 --atol 1e-5

echo "== a C program with find_package(KilnRuntime)"
cmake -S host -B host-build -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DKILN_EXAMPLE_ONNX="$work/small_cnn.onnx" > host-configure.log
ninja -C host-build > host-build.log
/usr/bin/python3 install_check.py pb2bin test_data_set_0/input_0.pb input.bin
host-build/host input.bin output.bin
/usr/bin/python3 install_check.py compare output.bin test_data_set_0/output_0.pb

echo "== import kiln"
pydir="$prefix/lib/python3/dist-packages"
PYTHONPATH="$pydir" /usr/bin/python3 install_check.py python "$pydir" \
  small_cnn.onnx test_data_set_0
echo "== the installed Kiln under $prefix works"
