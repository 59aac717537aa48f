//===- TensorCoreContraction.cpp - wmma kernels -----------------*- C++ -*-===//
//
// An fp16 contraction on tensor cores: warp-level 16x16x16 matrix operations.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::kiln::gpu_mapping {
gpu::LaunchOp buildTensorCoreContraction(KernelNames &names,
                                         linalg::GenericOp op,
                                         const TensorCorePlan &plan) {
  constexpr int64_t kFrag = TensorCorePlan::kFrag,
                    kWarp = TensorCorePlan::kWarp,
                    kThreads = TensorCorePlan::kThreads;
  const ContractionTiles &tiles = plan.tiles;
  OpOperand *a = tiles.dims.a, *bIn = tiles.dims.b;
  OpOperand &init = op.getDpsInitsMutable()[0];
  MLIRContext *ctx = op.getContext();
  Type f16 = Float16Type::get(ctx), f32 = Float32Type::get(ctx);
  Type outType = cast<MemRefType>(init.get().getType()).getElementType();
  ArrayRef<int64_t> ranges = tiles.ranges;
  ArrayRef<unsigned> mDims = tiles.dims.m, nDims = tiles.dims.n,
                     kDims = tiles.dims.k, sDims = tiles.dims.s;
  int64_t M = tiles.M, N = tiles.N, K = tiles.K;
  int64_t FM = plan.FM, FN = plan.FN, TM = tiles.TM, TN = tiles.TN;

  Location loc = op.getLoc();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto tileA = MemRefType::get({TM, kFrag}, f16, AffineMap(), workgroup);
  auto tileB = MemRefType::get({kFrag, TN}, f16, AffineMap(), workgroup);
  auto tileC = MemRefType::get({TM, TN}, f32, AffineMap(), workgroup);
  OpBuilder b(op);
  SmallVector<Value> ivs;
  Value m0, n0;
  gpu::LaunchOp launch =
      createContractionLaunch(b, loc, names, tiles, kThreads,
                              TypeRange{tileA, tileB, tileC}, ivs, m0, n0);
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];
  Value sharedC = launch.getWorkgroupAttributions()[2];
  auto cst = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  Value zero = cst(b, 0);
  Value tid = launch.getThreadIds().x;
  // Warp (wr, wc) of the 2 x 2: rows wr * 16 FM, columns wc * 16 FN.
  Value warp = arith::DivUIOp::create(b, loc, tid, cst(b, kWarp));
  Value wr = arith::DivUIOp::create(b, loc, warp, cst(b, 2));
  Value wc = arith::RemUIOp::create(b, loc, warp, cst(b, 2));
  SmallVector<Value> fragRow, fragCol;
  for (int64_t f = 0; f < FM; ++f)
    fragRow.push_back(arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, wr, cst(b, kFrag * FM)),
        cst(b, kFrag * f)));
  for (int64_t f = 0; f < FN; ++f)
    fragCol.push_back(arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, wc, cst(b, kFrag * FN)),
        cst(b, kFrag * f)));
  auto accType = gpu::MMAMatrixType::get({kFrag, kFrag}, f32, "COp");
  auto aType = gpu::MMAMatrixType::get({kFrag, kFrag}, f16, "AOp");
  auto bType = gpu::MMAMatrixType::get({kFrag, kFrag}, f16, "BOp");
  Value zeroF32 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> acc;
  for (int64_t i = 0; i < FM * FN; ++i)
    acc.push_back(
        gpu::SubgroupMmaConstantMatrixOp::create(b, loc, accType, zeroF32));

  // Copies `o`'s slice at k0 into `shared`: [m][k] (A) or [k][n] (B).
  // Each thread copies a run of consecutive elements along the operand's
  // contiguous dimension (k, or m/n), so that the index arithmetic of the
  // other dimension (an implicit GEMM's pixel coordinates) is done once
  // per thread rather than once per element: fewer registers live across
  // the K loop.
  auto copyTile = [&](OpBuilder &bb, OpOperand *o, Value shared,
                      ArrayRef<unsigned> dims, int64_t size, int64_t T,
                      Value origin, Value k0, bool rowsAreM) {
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
      Value m = arith::AddIOp::create(bb, loc, origin, mm);
      Value k = arith::AddIOp::create(bb, loc, k0, kk);
      Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                         below(bb, loc, k, K, K, kFrag));
      delinearize(bb, loc, m, dims, ranges, ivs);
      delinearize(bb, loc, k, kDims, ranges, ivs);
      Value v = guardedLoad(bb, loc, ok, o->get(),
                            operandIndices(bb, loc, op, *o, ivs));
      memref::StoreOp::create(bb, loc, v, shared,
                              rowsAreM ? ValueRange{mm, kk}
                                       : ValueRange{kk, mm});
    }
  };
  auto kSlice = [&](OpBuilder &bb, Value kt, ValueRange carried) {
    Value k0 = arith::MulIOp::create(bb, loc, kt, cst(bb, kFrag));
    copyTile(bb, a, sharedA, mDims, M, TM, m0, k0, /*rowsAreM=*/true);
    copyTile(bb, bIn, sharedB, nDims, N, TN, n0, k0, /*rowsAreM=*/false);
    gpu::BarrierOp::create(bb, loc);
    SmallVector<Value> fa, fb, next;
    for (int64_t f = 0; f < FM; ++f)
      fa.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
          bb, loc, aType, sharedA, ValueRange{fragRow[f], zero},
          bb.getIndexAttr(kFrag), UnitAttr()));
    for (int64_t f = 0; f < FN; ++f)
      fb.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
          bb, loc, bType, sharedB, ValueRange{zero, fragCol[f]},
          bb.getIndexAttr(TN), UnitAttr()));
    for (int64_t i = 0; i < FM; ++i)
      for (int64_t j = 0; j < FN; ++j)
        next.push_back(gpu::SubgroupMmaComputeOp::create(
            bb, loc, accType, fa[i], fb[j], carried[i * FN + j], UnitAttr(),
            UnitAttr()));
    gpu::BarrierOp::create(bb, loc);
    return next;
  };
  SmallVector<Value> sums = reductionNest(
      b, loc, sDims, ranges, llvm::divideCeil(K, kFrag), ivs, acc, kSlice);

  // The accumulators through shared memory to the outputs.
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
  return launch;
}
} // namespace mlir::kiln::gpu_mapping
