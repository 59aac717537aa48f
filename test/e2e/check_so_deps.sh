#!/bin/bash
# Checks that a model.so is deployable alone: its NEEDED entries are only libc,
# libm, libpthread, libdl and the dynamic loader (nothing from MLIR, LLVM,
# protobuf, onnx, Python, libstdc++ or libgcc_s), and it exports the runtime ABI.
#
# Usage: check_so_deps.sh model.so
set -euo pipefail

so=${1:?usage: check_so_deps.sh model.so}
if [[ ! -f $so ]]; then
  echo "check_so_deps: $so does not exist" >&2
  exit 1
fi
readelf=$(command -v readelf || command -v llvm-readelf || command -v llvm-readelf-22 || true)
if [[ -z $readelf ]]; then
  echo "check_so_deps: no readelf on PATH" >&2
  exit 1
fi

allowed='^(libc\.so\.[0-9]+|libm\.so\.[0-9]+|libpthread\.so\.[0-9]+|libdl\.so\.[0-9]+|ld-linux[-a-z0-9_.]*\.so\.[0-9]+)$'
needed=$("$readelf" -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p')
status=0
for lib in $needed; do
  if [[ ! $lib =~ $allowed ]]; then
    echo "check_so_deps: $so needs $lib; a model.so may need only libc, libm, libpthread, libdl and ld-linux" >&2
    status=1
  fi
done

# The public C ABI (runtime/include/kiln/runtime.h) must be exported.
symbols=$("$readelf" --dyn-syms -W "$so" | awk '$7 != "UND" {print $8}' | sed 's/@.*//')
for fn in kiln_get_model_info kiln_check_cpu kiln_session_create kiln_run \
          kiln_session_destroy kiln_dtype_size; do
  if ! grep -qx "$fn" <<<"$symbols"; then
    echo "check_so_deps: $so does not export $fn" >&2
    status=1
  fi
done

if [[ $status == 0 ]]; then
  echo "check_so_deps: $so needs only: ${needed//$'\n'/ }"
fi
exit $status
