//===- TiledContraction.cpp - shared-memory tiles ---------------*- C++ -*-===//
//
// A contraction on 16x16-thread blocks, K staged through shared memory.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kiln::gpu_mapping {
gpu::LaunchOp buildTiledContraction(KernelNames &names, linalg::GenericOp op,
                                    const TiledPlan &plan) {
  constexpr int64_t kSide = TiledPlan::kSide, kTK = TiledPlan::kTK,
                    kThreads = TiledPlan::kThreads;
  const ContractionTiles &tiles = plan.tiles;
  OpOperand *a = tiles.dims.a, *bIn = tiles.dims.b;
  OpOperand &init = op.getDpsInitsMutable()[0];
  Block &payload = op.getRegion().front();
  ArrayRef<int64_t> ranges = tiles.ranges;
  ArrayRef<unsigned> mDims = tiles.dims.m, nDims = tiles.dims.n,
                     kDims = tiles.dims.k, sDims = tiles.dims.s;
  int64_t M = tiles.M, N = tiles.N, K = tiles.K;
  int64_t RM = plan.RM, RN = plan.RN, TM = tiles.TM, TN = tiles.TN;

  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto elementType = [](OpOperand *o) {
    return cast<MemRefType>(o->get().getType()).getElementType();
  };
  auto tileA =
      MemRefType::get({kTK, TM}, elementType(a), AffineMap(), workgroup);
  auto tileB =
      MemRefType::get({kTK, TN}, elementType(bIn), AffineMap(), workgroup);
  OpBuilder b(op);
  // Block -> (g, tile of M, tile of N); thread -> (ty, tx).
  SmallVector<Value> ivs;
  Value m0, n0;
  gpu::LaunchOp launch = createContractionLaunch(
      b, loc, names, tiles, kThreads, TypeRange{tileA, tileB}, ivs, m0, n0);
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];
  auto cst = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  Value zero = cst(b, 0), one = cst(b, 1);
  Value tid = launch.getThreadIds().x;
  Value tx = arith::RemUIOp::create(b, loc, tid, cst(b, kSide));
  Value ty = arith::DivUIOp::create(b, loc, tid, cst(b, kSide));

  // The thread's outputs: rows ty + 16 r, columns tx + 16 c.
  SmallVector<Value> rows, cols, rowOk, colOk;
  for (int64_t r = 0; r < RM; ++r) {
    Value mr = arith::AddIOp::create(
        b, loc, m0, arith::AddIOp::create(b, loc, ty, cst(b, kSide * r)));
    rows.push_back(mr);
    rowOk.push_back(below(b, loc, mr, M, M, TM));
  }
  for (int64_t c = 0; c < RN; ++c) {
    Value nc = arith::AddIOp::create(
        b, loc, n0, arith::AddIOp::create(b, loc, tx, cst(b, kSide * c)));
    cols.push_back(nc);
    colOk.push_back(below(b, loc, nc, N, N, TN));
  }
  auto outputIndices = [&](OpBuilder &bb, int64_t r, int64_t c) {
    delinearize(bb, loc, rows[r], mDims, ranges, ivs);
    delinearize(bb, loc, cols[c], nDims, ranges, ivs);
    return operandIndices(bb, loc, op, init, ivs);
  };
  SmallVector<Value> acc;
  for (int64_t r = 0; r < RM; ++r)
    for (int64_t c = 0; c < RN; ++c)
      acc.push_back(guardedLoad(b, loc, andCond(b, loc, rowOk[r], colOk[c]),
                                init.get(), outputIndices(b, r, c)));

  // Whether an operand's contiguous dimension is the innermost K dim: then
  // neighbouring threads copy neighbouring k, else neighbouring m (n).
  auto fastAlongK = [&](OpOperand *o) {
    AffineMap map = op.getMatchingIndexingMap(o);
    return map.getNumResults() > 0 &&
           map.getResults().back().isFunctionOfDim(kDims.back());
  };
  // Vector loads: each thread copies its elements of the slice as one
  // aligned vector of up to 4 when they are consecutive in memory (the
  // operand's contiguous dimension is the copy direction's innermost dim,
  // its range a multiple of the width, the layout the identity: then a
  // vector never straddles a row, and rows start 16-byte aligned in the
  // 64-byte aligned buffers of the memory plan). Returns 1 otherwise.
  auto vectorWidth = [&](OpOperand *o, ArrayRef<unsigned> dims,
                         int64_t T) -> int64_t {
    int64_t width = T * kTK / kThreads;
    auto type = cast<MemRefType>(o->get().getType());
    AffineMap map = op.getMatchingIndexingMap(o);
    if (width < 2 || !type.getLayout().isIdentity() ||
        type.getElementTypeBitWidth() != 32 || map.getNumResults() == 0)
      return 1;
    auto lastDim = dyn_cast<AffineDimExpr>(map.getResults().back());
    unsigned along = fastAlongK(o) ? kDims.back() : dims.back();
    if (!lastDim || lastDim.getPosition() != along ||
        ranges[along] % width != 0)
      return 1;
    return width;
  };
  // Copies operand `o`'s [16 x T] slice at k0 into `shared` ([k][m]).
  auto copyTile = [&](OpBuilder &bb, OpOperand *o, Value shared,
                      ArrayRef<unsigned> dims, int64_t size, int64_t T,
                      Value origin, Value k0) {
    bool alongK = fastAlongK(o);
    if (int64_t width = vectorWidth(o, dims, T); width > 1) {
      // One vector per thread: `width` consecutive k (or m).
      int64_t perRow = (alongK ? kTK : T) / width;
      Value q = arith::MulIOp::create(
          bb, loc, arith::RemUIOp::create(bb, loc, tid, cst(bb, perRow)),
          cst(bb, width));
      Value p = arith::DivUIOp::create(bb, loc, tid, cst(bb, perRow));
      Value kk = alongK ? q : p, mm = alongK ? p : q;
      Value m = arith::AddIOp::create(bb, loc, origin, mm);
      Value k = arith::AddIOp::create(bb, loc, k0, kk);
      Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                         below(bb, loc, k, K, K, kTK));
      delinearize(bb, loc, m, dims, ranges, ivs);
      delinearize(bb, loc, k, kDims, ranges, ivs);
      SmallVector<Value> at = operandIndices(bb, loc, op, *o, ivs);
      Type elem = elementType(o);
      auto vecType = VectorType::get({width}, elem);
      auto load = [&](OpBuilder &lb) -> Value {
        return vector::LoadOp::create(lb, loc, vecType, o->get(), at,
                                      /*nontemporal=*/false,
                                      llvm::Align(width * 4));
      };
      Value v;
      if (!ok) {
        v = load(bb);
      } else {
        auto ifOp = scf::IfOp::create(
            bb, loc, ok,
            [&](OpBuilder &tb, Location l) {
              scf::YieldOp::create(tb, l, load(tb));
            },
            [&](OpBuilder &eb, Location l) {
              scf::YieldOp::create(
                  eb, l,
                  Value(arith::ConstantOp::create(
                      eb, l,
                      DenseElementsAttr::get(
                          vecType, cast<TypedAttr>(eb.getZeroAttr(elem))))));
            });
        v = ifOp.getResult(0);
      }
      for (int64_t e = 0; e < width; ++e) {
        Value x = vector::ExtractOp::create(bb, loc, v, e);
        Value off =
            arith::AddIOp::create(bb, loc, alongK ? kk : mm, cst(bb, e));
        memref::StoreOp::create(bb, loc, x, shared,
                                alongK ? ValueRange{off, mm}
                                       : ValueRange{kk, off});
      }
      return;
    }
    for (int64_t e = 0; e < T * kTK / kThreads; ++e) {
      Value lin = arith::AddIOp::create(bb, loc, tid, cst(bb, kThreads * e));
      Value kk, mm;
      if (alongK) {
        kk = arith::RemUIOp::create(bb, loc, lin, cst(bb, kTK));
        mm = arith::DivUIOp::create(bb, loc, lin, cst(bb, kTK));
      } else {
        mm = arith::RemUIOp::create(bb, loc, lin, cst(bb, T));
        kk = arith::DivUIOp::create(bb, loc, lin, cst(bb, T));
      }
      Value m = arith::AddIOp::create(bb, loc, origin, mm);
      Value k = arith::AddIOp::create(bb, loc, k0, kk);
      Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                         below(bb, loc, k, K, K, kTK));
      delinearize(bb, loc, m, dims, ranges, ivs);
      delinearize(bb, loc, k, kDims, ranges, ivs);
      Value v = guardedLoad(bb, loc, ok, o->get(),
                            operandIndices(bb, loc, op, *o, ivs));
      memref::StoreOp::create(bb, loc, v, shared, ValueRange{kk, mm});
    }
  };

  // One 16-wide slice of K: copy, wait, accumulate, wait.
  auto kSlice = [&](OpBuilder &bb, Value kt, ValueRange carried) {
    Value k0 = arith::MulIOp::create(bb, loc, kt, cst(bb, kTK));
    copyTile(bb, a, sharedA, mDims, M, TM, m0, k0);
    copyTile(bb, bIn, sharedB, nDims, N, TN, n0, k0);
    gpu::BarrierOp::create(bb, loc);
    Value kEnd = K % kTK == 0
                     ? cst(bb, kTK)
                     : arith::MinSIOp::create(
                           bb, loc, cst(bb, kTK),
                           arith::SubIOp::create(bb, loc, cst(bb, K), k0))
                           .getResult();
    auto inner = scf::ForOp::create(
        bb, loc, zero, kEnd, one, carried,
        [&](OpBuilder &lb, Location, Value kk, ValueRange accs) {
          SmallVector<Value> av, bv;
          for (int64_t r = 0; r < RM; ++r)
            av.push_back(memref::LoadOp::create(
                lb, loc, sharedA,
                ValueRange{kk, arith::AddIOp::create(lb, loc, ty,
                                                     cst(lb, kSide * r))}));
          for (int64_t c = 0; c < RN; ++c)
            bv.push_back(memref::LoadOp::create(
                lb, loc, sharedB,
                ValueRange{kk, arith::AddIOp::create(lb, loc, tx,
                                                     cst(lb, kSide * c))}));
          SmallVector<Value> next;
          for (int64_t r = 0; r < RM; ++r)
            for (int64_t c = 0; c < RN; ++c) {
              IRMapping map;
              for (OpOperand *in : op.getDpsInputOperands()) {
                Value arg = payload.getArgument(in->getOperandNumber());
                if (in == a)
                  map.map(arg, av[r]);
                else if (in == bIn)
                  map.map(arg, bv[c]);
                else
                  map.map(arg, in->get());
              }
              map.map(payload.getArgument(init.getOperandNumber()),
                      accs[r * RN + c]);
              next.push_back(clonePayload(lb, op, map).front());
            }
          scf::YieldOp::create(lb, loc, next);
        });
    gpu::BarrierOp::create(bb, loc);
    return SmallVector<Value>(inner.getResults());
  };

  // S dims outermost, then the slices of K, carrying the accumulators.
  SmallVector<Value> results = reductionNest(
      b, loc, sDims, ranges, llvm::divideCeil(K, kTK), ivs, acc, kSlice);

  for (int64_t r = 0; r < RM; ++r)
    for (int64_t c = 0; c < RN; ++c) {
      Value ok = andCond(b, loc, rowOk[r], colOk[c]);
      OpBuilder::InsertionGuard guard(b);
      if (ok) {
        auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      }
      memref::StoreOp::create(b, loc, results[r * RN + c], init.get(),
                              outputIndices(b, r, c));
    }
  return launch;
}
} // namespace mlir::kiln::gpu_mapping
