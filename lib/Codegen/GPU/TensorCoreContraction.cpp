//===- TensorCoreContraction.cpp - wmma kernels -----------------*- C++ -*-===//
//
// An fp16 contraction on tensor cores: blocks of 2 x 2 warps, each warp
// FM x FN fragments of 16 x 16 computed with warp-level matrix operations
// (see buildTensorCoreContraction in KernelBuilder.h; the sizes come from
// TensorCorePlan).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::kiln::gpu_mapping {
namespace {
constexpr int64_t kFrag = TensorCorePlan::kFrag, kWarp = TensorCorePlan::kWarp,
                  kThreads = TensorCorePlan::kThreads;

/// One input as the block stages it: its slices of K go to `shared`, as
/// [m][k] (`rowsAreM`, A) or [k][n] (B), from the T rows or columns from
/// `origin` on, out of `size` along `dims`.
struct StagedInput {
  OpOperand *operand;
  Value shared;
  ArrayRef<unsigned> dims;
  int64_t size, T;
  Value origin;
  bool rowsAreM;
};

/// Builds the kernel of one TensorCorePlan. The steps share what the
/// launch defines: the warp's fragments, the staged inputs, and the loop
/// indices (`ivs`) that the index arithmetic of each step sets.
class TensorCoreBuilder {
public:
  TensorCoreBuilder(linalg::GenericOp op, const TensorCorePlan &plan)
      : op(op), plan(plan), loc(op.getLoc()), init(op.getDpsInitsMutable()[0]),
        ranges(plan.tiles.ranges), mDims(plan.tiles.dims.m),
        nDims(plan.tiles.dims.n), kDims(plan.tiles.dims.k),
        sDims(plan.tiles.dims.s), M(plan.tiles.M), N(plan.tiles.N),
        K(plan.tiles.K), FM(plan.FM), FN(plan.FN), TM(plan.tiles.TM),
        TN(plan.tiles.TN) {
    MLIRContext *ctx = op.getContext();
    f16 = Float16Type::get(ctx);
    f32 = Float32Type::get(ctx);
    outType = cast<MemRefType>(init.get().getType()).getElementType();
    accType = gpu::MMAMatrixType::get({kFrag, kFrag}, f32, "COp");
    aType = gpu::MMAMatrixType::get({kFrag, kFrag}, f16, "AOp");
    bType = gpu::MMAMatrixType::get({kFrag, kFrag}, f16, "BOp");
  }

  gpu::LaunchOp build(KernelNames &names);

private:
  Value cst(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  void placeWarp(OpBuilder &b);
  void copyTile(OpBuilder &b, const StagedInput &in, Value k0);
  SmallVector<Value> kSlice(OpBuilder &b, Value kt, ValueRange carried);
  void storeOutputs(OpBuilder &b, ArrayRef<Value> sums);

  linalg::GenericOp op;
  const TensorCorePlan &plan;
  Location loc;
  OpOperand &init;
  ArrayRef<int64_t> ranges;
  ArrayRef<unsigned> mDims, nDims, kDims, sDims;
  int64_t M, N, K, FM, FN, TM, TN;
  Type f16, f32, outType;
  Type accType, aType, bType; ///< the fragments: C (f32), A and B (f16)

  // Defined by build().
  SmallVector<Value> ivs;
  Value m0, n0, zero, tid, sharedC;
  StagedInput stagedA{}, stagedB{};
  /// The first row (column) of each of the warp's fragments in the tile.
  SmallVector<Value> fragRow, fragCol;
};

gpu::LaunchOp TensorCoreBuilder::build(KernelNames &names) {
  MLIRContext *ctx = op.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto tileA = MemRefType::get({TM, kFrag}, f16, AffineMap(), workgroup);
  auto tileB = MemRefType::get({kFrag, TN}, f16, AffineMap(), workgroup);
  auto tileC = MemRefType::get({TM, TN}, f32, AffineMap(), workgroup);
  OpBuilder b(op);
  gpu::LaunchOp launch =
      createContractionLaunch(b, loc, names, plan.tiles, kThreads,
                              TypeRange{tileA, tileB, tileC}, ivs, m0, n0);
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];
  sharedC = launch.getWorkgroupAttributions()[2];
  stagedA = StagedInput{plan.tiles.dims.a, sharedA, mDims, M, TM, m0,
                        /*rowsAreM=*/true};
  stagedB = StagedInput{plan.tiles.dims.b, sharedB, nDims, N, TN, n0,
                        /*rowsAreM=*/false};
  zero = cst(b, 0);
  tid = launch.getThreadIds().x;
  placeWarp(b);
  Value zeroF32 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> acc;
  for (int64_t i = 0; i < FM * FN; ++i)
    acc.push_back(
        gpu::SubgroupMmaConstantMatrixOp::create(b, loc, accType, zeroF32));
  SmallVector<Value> sums =
      reductionNest(b, loc, sDims, ranges, llvm::divideCeil(K, kFrag), ivs, acc,
                    [&](OpBuilder &bb, Value kt, ValueRange carried) {
                      return kSlice(bb, kt, carried);
                    });
  storeOutputs(b, sums);
  return launch;
}

/// Warp (wr, wc) of the 2 x 2: rows wr * 16 FM, columns wc * 16 FN.
void TensorCoreBuilder::placeWarp(OpBuilder &b) {
  Value warp = arith::DivUIOp::create(b, loc, tid, cst(b, kWarp));
  Value wr = arith::DivUIOp::create(b, loc, warp, cst(b, 2));
  Value wc = arith::RemUIOp::create(b, loc, warp, cst(b, 2));
  for (int64_t f = 0; f < FM; ++f)
    fragRow.push_back(arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, wr, cst(b, kFrag * FM)),
        cst(b, kFrag * f)));
  for (int64_t f = 0; f < FN; ++f)
    fragCol.push_back(arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, wc, cst(b, kFrag * FN)),
        cst(b, kFrag * f)));
}

/// Copies the input's slice at k0 into its shared tile. Each thread copies
/// a run of consecutive elements along the operand's contiguous dimension
/// (k, or m/n), so that the index arithmetic of the other dimension (an
/// implicit GEMM's pixel coordinates) is done once per thread rather than
/// once per element: fewer registers live across the K loop.
void TensorCoreBuilder::copyTile(OpBuilder &bb, const StagedInput &in,
                                 Value k0) {
  OpOperand *o = in.operand;
  int64_t size = in.size, T = in.T;
  AffineMap map = op.getMatchingIndexingMap(o);
  bool alongK = map.getNumResults() > 0 &&
                map.getResults().back().isFunctionOfDim(kDims.back());
  int64_t run = T * kFrag / kThreads;
  int64_t runsPerLine = (alongK ? kFrag : T) / run;
  Value first = arith::MulIOp::create(
      bb, loc, arith::RemUIOp::create(bb, loc, tid, cst(bb, runsPerLine)),
      cst(bb, run));
  Value line = arith::DivUIOp::create(bb, loc, tid, cst(bb, runsPerLine));
  for (int64_t e = 0; e < run; ++e) {
    Value along = arith::AddIOp::create(bb, loc, first, cst(bb, e));
    Value kk = alongK ? along : line, mm = alongK ? line : along;
    Value m = arith::AddIOp::create(bb, loc, in.origin, mm);
    Value k = arith::AddIOp::create(bb, loc, k0, kk);
    Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                       below(bb, loc, k, K, K, kFrag));
    delinearize(bb, loc, m, in.dims, ranges, ivs);
    delinearize(bb, loc, k, kDims, ranges, ivs);
    Value v = guardedLoad(bb, loc, ok, o->get(),
                          operandIndices(bb, loc, op, *o, ivs));
    memref::StoreOp::create(bb, loc, v, in.shared,
                            in.rowsAreM ? ValueRange{mm, kk}
                                        : ValueRange{kk, mm});
  }
}

/// One slice of K: copy, wait, multiply-accumulate the fragments, wait.
SmallVector<Value> TensorCoreBuilder::kSlice(OpBuilder &bb, Value kt,
                                             ValueRange carried) {
  Value k0 = arith::MulIOp::create(bb, loc, kt, cst(bb, kFrag));
  copyTile(bb, stagedA, k0);
  copyTile(bb, stagedB, k0);
  gpu::BarrierOp::create(bb, loc);
  SmallVector<Value> fa, fb, next;
  for (int64_t f = 0; f < FM; ++f)
    fa.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
        bb, loc, aType, stagedA.shared, ValueRange{fragRow[f], zero},
        bb.getIndexAttr(kFrag), UnitAttr()));
  for (int64_t f = 0; f < FN; ++f)
    fb.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
        bb, loc, bType, stagedB.shared, ValueRange{zero, fragCol[f]},
        bb.getIndexAttr(TN), UnitAttr()));
  for (int64_t i = 0; i < FM; ++i)
    for (int64_t j = 0; j < FN; ++j)
      next.push_back(gpu::SubgroupMmaComputeOp::create(
          bb, loc, accType, fa[i], fb[j], carried[i * FN + j], UnitAttr(),
          UnitAttr()));
  gpu::BarrierOp::create(bb, loc);
  return next;
}

/// The accumulators through shared memory to the outputs: each thread adds
/// its outputs' initial values, rounds to the output type and stores
/// (bounds-checked).
void TensorCoreBuilder::storeOutputs(OpBuilder &b, ArrayRef<Value> sums) {
  for (int64_t i = 0; i < FM; ++i)
    for (int64_t j = 0; j < FN; ++j)
      gpu::SubgroupMmaStoreMatrixOp::create(b, loc, sums[i * FN + j], sharedC,
                                            ValueRange{fragRow[i], fragCol[j]},
                                            b.getIndexAttr(TN), UnitAttr());
  gpu::BarrierOp::create(b, loc);
  for (int64_t e = 0; e < TM * TN / kThreads; ++e) {
    Value lin = arith::AddIOp::create(b, loc, tid, cst(b, kThreads * e));
    Value nn = arith::RemUIOp::create(b, loc, lin, cst(b, TN));
    Value mm = arith::DivUIOp::create(b, loc, lin, cst(b, TN));
    Value m = arith::AddIOp::create(b, loc, m0, mm);
    Value n = arith::AddIOp::create(b, loc, n0, nn);
    Value ok =
        andCond(b, loc, below(b, loc, m, M, M, TM), below(b, loc, n, N, N, TN));
    OpBuilder::InsertionGuard guard(b);
    if (ok) {
      auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    delinearize(b, loc, m, mDims, ranges, ivs);
    delinearize(b, loc, n, nDims, ranges, ivs);
    SmallVector<Value> at = operandIndices(b, loc, op, init, ivs);
    Value sum = memref::LoadOp::create(b, loc, sharedC, ValueRange{mm, nn});
    Value old = memref::LoadOp::create(b, loc, init.get(), at);
    if (outType != f32)
      old = arith::ExtFOp::create(b, loc, f32, old);
    Value total = arith::AddFOp::create(b, loc, old, sum);
    if (outType != f32)
      total = arith::TruncFOp::create(b, loc, outType, total);
    memref::StoreOp::create(b, loc, total, init.get(), at);
  }
}
} // namespace

gpu::LaunchOp buildTensorCoreContraction(KernelNames &names,
                                         linalg::GenericOp op,
                                         const TensorCorePlan &plan) {
  return TensorCoreBuilder(op, plan).build(names);
}
} // namespace mlir::kiln::gpu_mapping
