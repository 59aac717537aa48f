#!/usr/bin/env bash
# Builds Kiln with AddressSanitizer + UndefinedBehaviorSanitizer in a build
# directory of its own and runs under them what hostile input reaches: the
# hostile-model corpus and a fuzzing run through kiln-compile, the hostile
# lit tests, and the runtime and client tests (the runtime's thread pool
# runs under ThreadSanitizer in every build: ctest runtime_abi_tsan).
#
#   bench/sanitize/run.sh [BUILD_DIR] [--fuzz-minutes N]
#
# A cold build takes about 40 minutes on 2 cores (ccache keeps later ones
# short); the corpus about 15 minutes under the sanitizers. Any sanitizer
# report fails the run (halt_on_error; hostile.py treats the report as a
# failure of the case).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build-asan}
FUZZ_MINUTES=0
[[ "${2:-}" == --fuzz-minutes ]] && FUZZ_MINUTES=${3:-10}
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKILN_SANITIZE=address,undefined
ninja -C "$BUILD" kiln-compile kiln-opt kiln-run kiln-runtime-test \
  kiln-client-test
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:exitcode=86
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
"$BUILD/test/runtime/kiln-runtime-test"
"$BUILD/test/Client/kiln-client-test"
/usr/lib/llvm-22/bin/lit -sv "$BUILD/test" --filter 'Import/Onnx/hostile|external-data|malformed'
/usr/bin/python3 "$ROOT/test/hostile/hostile.py" corpus "$BUILD/bin/kiln-compile" \
  "$BUILD/sanitize/corpus" --count 1200 --jobs 2 --timeout 300
if [[ "$FUZZ_MINUTES" != 0 ]]; then
  /usr/bin/python3 "$ROOT/test/hostile/hostile.py" fuzz "$BUILD/bin/kiln-compile" \
    "$BUILD/sanitize/fuzz" --minutes "$FUZZ_MINUTES" --timeout 300
fi
echo "sanitize: clean"
