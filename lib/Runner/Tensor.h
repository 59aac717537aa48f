// Host tensors for kiln-run: dense aligned buffers, element formatting, random
// filling and numpy-allclose-style comparison. No MLIR, no LLVM.
#ifndef KILN_RUNNER_TENSOR_H
#define KILN_RUNNER_TENSOR_H

#include "kiln/Client/DType.h"
#include "kiln/Client/Model.h"
#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace kilnrun {

/// A problem the user has to fix (a bad file or option). kiln-run reports it,
/// like a kiln::client::Error from the model, as `kiln-run: error: <what>`
/// and exits with status 2.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Element types and shapes as the model client names them.
using kiln::client::bfloat16ToFloat;
using kiln::client::dtypeName;
using kiln::client::dtypeSize;
using kiln::client::floatToBfloat16;
using kiln::client::floatToHalf;
using kiln::client::halfToFloat;
using kiln::client::shapeText;

/// Element count of `shape`; throws Error on a negative dimension or overflow.
size_t elementCount(const std::vector<int64_t> &shape, const std::string &what);
/// "[1,2]" for a flat row-major index into `shape`.
std::string indexString(const std::vector<int64_t> &shape, size_t flat);

/// A dense row-major tensor in a 64-byte-aligned buffer owned by this object;
/// compiled kernels may use aligned vector loads, so we never hand them less.
class HostTensor {
public:
  HostTensor() = default;
  /// Allocates a zero-filled buffer; throws Error for an unsupported dtype.
  HostTensor(int32_t dtype, std::vector<int64_t> shape);

  int32_t dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  size_t numElements() const { return numElements_; }
  size_t bytes() const { return bytes_; }
  void *data() { return storage_.get(); }
  const void *data() const { return storage_.get(); }

  /// A kiln_tensor that borrows this buffer and shape.
  kiln_tensor view();

  /// Reads the same bytes as another element type of the same size (ONNX's
  /// backend tests store bfloat16 data as uint16 bit patterns).
  void reinterpretAs(int32_t dtype) { dtype_ = dtype; }

  /// Element `i` as a double (bool is 0/1, halfs are widened).
  double valueAt(size_t i) const;
  /// Element `i` as text, precise enough to tell two mismatching values apart.
  std::string formatAt(size_t i) const;

  /// Floats uniform in [-1, 1]; integers and bools uniform in {0, 1} so that
  /// index inputs (Gather, Slice starts) stay in range for any non-empty axis.
  void fillRandom(std::mt19937_64 &rng);

private:
  struct FreeDeleter {
    void operator()(void *p) const { std::free(p); }
  };
  int32_t dtype_ = 0;
  std::vector<int64_t> shape_;
  size_t numElements_ = 0;
  size_t bytes_ = 0;
  std::unique_ptr<void, FreeDeleter> storage_;
};

/// The outcome of comparing a computed tensor with a reference.
struct Comparison {
  size_t compared = 0;
  size_t mismatches = 0;
  double maxAbsError = 0; // infinite when a NaN or an infinity mismatches
  double maxRelError = 0; // |got - want| / |want| over finite, non-zero `want`
  /// ||got - want||_2 / ||want||_2 over the elements where both are finite
  /// (0 when `want` is all zeros and `got` equals it; infinite when only
  /// `want` is all zeros).
  double relL2Error = 0;
  size_t firstMismatch = 0;
};

/// numpy.allclose semantics per element: |got - want| <= atol + rtol * |want|;
/// NaN matches NaN, infinities match only themselves; integer and bool types
/// must match exactly. Both tensors must have the same dtype and shape.
Comparison compare(const HostTensor &got, const HostTensor &want, double rtol,
                   double atol);

} // namespace kilnrun

#endif // KILN_RUNNER_TENSOR_H
