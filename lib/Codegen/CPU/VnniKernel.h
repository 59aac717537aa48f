//===- VnniKernel.h - the int8 / bf16 dot-product kernel builder -*- C++
//-*-===//
//
// The class that builds one VNNI kernel (VnniMatmul.cpp says what it
// builds): its tile shape, the constants and views made ahead of the loops
// and one block's k loop and epilogue are in VnniMatmul.cpp; the loops that
// cover the output and share it between the threads in VnniKernelLoops.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_CPU_VNNIKERNEL_H
#define KILN_LIB_CODEGEN_CPU_VNNIKERNEL_H

#include "VnniMatch.h"

#include "kiln/Codegen/Common/SymbolicBounds.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <map>

namespace mlir::kiln::vnni {

inline constexpr const char *kVpdpbusd = "llvm.x86.avx512.vpdpbusd.512";
inline constexpr const char *kVdpbf16ps = "llvm.x86.avx512bf16.dpbf16ps.512";
inline constexpr const char *kVpmaddwd = "llvm.x86.avx2.pmadd.wd";

/// Weights from this size up may go panels outermost (see VnniKernel::build).
inline constexpr int64_t kPanelsOuterBytes = 1 << 20;

/// AVX2: unfolded rows (not read in place) from this size up are widened in
/// the k loop rather than copied to 16 bits ahead of it.
inline constexpr int64_t kWideRowsBytes = 1 << 20;

/// Where a block's registers go: register i of panel j of row `row` (row m
/// of the product, panel p), into `t`; returns the new `t`.
using Store = std::function<Value(OpBuilder &, Value v, Value t, int64_t row,
                                  Value m, int64_t j, Value p, int64_t i)>;
/// A tile of the product from its origin (a row or a panel), written into
/// `dest` at `base` (none: the whole output, at the origin), `size` long.
using Tile =
    llvm::function_ref<Value(OpBuilder &, Value origin, Value dest,
                             std::optional<int64_t> base, int64_t size)>;

/// The kernel of one product (and of its epilogue or consumer, when given),
/// built in named steps: the tile shape; the constants, views and output
/// made once ahead of the loops; one block of mr rows x pp panels (the k
/// loop of vpdpbusd, then the epilogue or the consumer on the registers);
/// and the loops that cover the output, shared by the threads when the
/// product is worth a fork-join.
class VnniKernel {
public:
  VnniKernel(OpBuilder &b, linalg::GenericOp op, const DotProduct &k,
             int64_t maxRows, int64_t parallelWork,
             const std::optional<Epilogue> &epilogue,
             std::optional<Consumer> consumer, bool avx2)
      : b(b), loc(op.getLoc()), ctx(b.getContext()), k(k),
        parallelWork(parallelWork), epilogue(epilogue),
        consumer(std::move(consumer)), avx2(avx2 && !k.bf16) {
    i8 = b.getI8Type();
    i32 = b.getI32Type();
    f32 = b.getF32Type();
    // One 64-byte vector of weights, one group of k of a row, and the 16
    // accumulators of a register: i8 / i32 for vpdpbusd, bf16 / f32 for
    // vdpbf16ps.
    lane = k.bf16 ? b.getBF16Type() : i8;
    g = k.group();
    acc = VectorType::get({16}, k.bf16 ? f32 : i32);
    accF = VectorType::get({16}, f32);
    bytes64 = VectorType::get({16 * g}, lane);
    intrinsic = k.bf16 ? kVdpbf16ps : kVpdpbusd;
    nv = k.r / 16;
    part = acc;
    // On AVX2 a register of 16 columns is four of 8 lanes: 4 columns, two
    // partial sums each (see kStep).
    if (this->avx2) {
      parts = 4;
      part = VectorType::get({8}, i32);
      intrinsic = kVpmaddwd;
    }
    // Rows of run-time count (a symbolic batch or sequence): the heuristics
    // take M at its bound, as the f32 code decides its forks.
    mMax = ShapedType::isDynamic(k.m)
               ? largestDim(k.rows, 0).value_or(kNominalRows)
               : k.m;
    chooseTileShape(maxRows);
    prepare();
  }

  /// Builds the kernel; returns the value that replaces the last of the
  /// product, its epilogue and its consumer.
  Value build();

private:
  void chooseTileShape(int64_t maxRows);
  /// Registers of 16 columns a tile may accumulate in: 16 of the 32 zmm, or
  /// on AVX2 8 of the 16 ymm (4 each) beside the 4 weight parts, a
  /// broadcast and a product. LLVM keeps the weight parts in registers
  /// (each is read by every row), so 3 rows spilled 2 accumulators per step.
  int64_t accumulatorRegs() const { return avx2 ? 8 / parts : 16; }
  void chooseRank4TileShape(int64_t maxRows);
  void prepare();
  void prepareAvx2();
  Value widenedRows(RankedTensorType rowType);
  Value idx(OpBuilder &, int64_t v);
  VectorType lanes(Type t) const { return VectorType::get({16}, t); }

  Value applyConsumer(OpBuilder &b2, Value accVec, ValueRange at,
                      ValueRange chan);
  Store productStore(std::optional<int64_t> rowBase, bool ownPanels);
  Store consumerStore(std::optional<int64_t> rowBase, bool ownPanels, Value h,
                      Value w0, Value hAt, Value wAt);
  scf::ForOp accumulate(OpBuilder &b2, ArrayRef<Value> panel,
                        ArrayRef<Value> rowIdx, int64_t mr);
  SmallVector<Value> kStep(OpBuilder &b3, ArrayRef<Value> panel, Value k4,
                           ValueRange accs, ArrayRef<Value> rowAt, Value col,
                           ArrayRef<Value> colAt);
  SmallVector<Value> kStepAvx2(OpBuilder &b3, ArrayRef<Value> panel, Value k4,
                               ValueRange accs, ArrayRef<Value> rowAt,
                               Value col, ArrayRef<Value> colAt);
  Value accumulated(OpBuilder &b2, scf::ForOp kLoop, int64_t index);
  Value rowGroup(OpBuilder &b3, int64_t row, ArrayRef<Value> rowAt, Value col,
                 ArrayRef<Value> colAt);
  Value block(OpBuilder &b2, Value m0, Value p0, Value dest, const Store &store,
              int64_t mr);
  Value panelsOf(OpBuilder &b1, Value m0, Value dest, const Store &store,
                 int64_t mr);
  Value rowTile(OpBuilder &b1, Value m0, Value dest,
                std::optional<int64_t> rowBase, int64_t mr);
  Value panelTile(OpBuilder &b1, Value p0, Value dest, bool ownPanels);

  using Place = llvm::function_ref<void(OpBuilder &, Value,
                                        SmallVectorImpl<OpFoldResult> &,
                                        SmallVectorImpl<OpFoldResult> &)>;
  using Fill = llvm::function_ref<Value(OpBuilder &, Value)>;
  Value forallOver(OpFoldResult count, Place place, Fill fill);
  OpFoldResult extentIf(OpBuilder &b1, Value cond, int64_t n,
                        int64_t otherwise);
  Value either(OpBuilder &b1, Value cond, int64_t n, int64_t otherwise,
               llvm::function_ref<Value(OpBuilder &, int64_t)> make);
  Value slices(int64_t dim, int64_t count, int64_t size, int64_t extra,
               bool shared, Tile tile);
  Value buildRank4Consumer(bool parallel);
  using Rows =
      llvm::function_ref<Value(OpBuilder &, Value m0, Value dest, int64_t n)>;
  Value runTimeTail(OpBuilder &b1, Value dest, Rows rows);
  Value buildRunTimeRows(bool parallel);

  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  const DotProduct &k;
  int64_t parallelWork;
  const std::optional<Epilogue> &epilogue;
  std::optional<Consumer> consumer;
  /// The AVX2 form: `parts` registers of type `part` per 16 columns.
  bool avx2;
  int64_t parts = 1;
  VectorType part;
  /// AVX2: the weights sign-extended to i16 at compile time (when they are a
  /// constant), and the i16 zero the widened rows and weights read as padding.
  bool wideWeights = false, wideRows = false;
  Value zeroWord;

  Type i8, i32, f32, lane;
  int64_t g, nv;
  VectorType acc, accF, bytes64;
  const char *intrinsic;
  /// The tile: mr rows of pp panels; a consumer of rank 4 ([1, H, W, C])
  /// takes hRows rows of wRows pixels. `full` tiles of mr rows and one of
  /// `tail` cover the rows (of the product, or of one row of H).
  int64_t pp = 1, mr = 1, hRows = 0, wRows = 0, rowsOf = 0, full = 0, tail = 0;
  /// Rows of run-time count (k.m dynamic, docs/shapes.md): M, and the end of
  /// its full tiles of mr rows (M - M mod mr), made ahead of the loops; the
  /// rows after it (at most mr - 1) run in tiles of halving sizes. mMax is
  /// M's bound (M itself when static), which the heuristics take.
  Value mRun, fullRun, splitRun;
  int64_t mMax = 0;
  static constexpr int64_t kNominalRows = 1024;
  /// Index constants, made once ahead of the loops.
  std::map<int64_t, Value> constants;
  Value zero, zeroLane, rows, weights, out, zeroF, zeroI32;
  /// The consumer's inputs (its scalars broadcast), and the values its body
  /// takes from outside, broadcast once ahead of the loops.
  SmallVector<Value> scalars;
  IRMapping outside;
  /// The loop that writes all of the output is marked kOverwrittenOutsAttr
  /// (it never reads the empty tensor it starts from).
  UnitAttr overwrites;
};

} // namespace mlir::kiln::vnni

#endif // KILN_LIB_CODEGEN_CPU_VNNIKERNEL_H
