//===- TiledContraction.cpp - shared-memory tiles ---------------*- C++ -*-===//
//
// A contraction on blocks of 16x16 threads, each block a TM x TN tile of
// outputs with K staged through shared memory in slices of 16 (see
// buildTiledContraction in KernelBuilder.h; the sizes come from TiledPlan).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kiln::gpu_mapping {
namespace {
constexpr int64_t kSide = TiledPlan::kSide, kTK = TiledPlan::kTK,
                  kThreads = TiledPlan::kThreads;

Type elementType(OpOperand *o) {
  return cast<MemRefType>(o->get().getType()).getElementType();
}

/// One input as the block stages it: its [16 x T] slices of K go to
/// `shared`, from the T rows (A) or columns (B) from `origin` on, out of
/// `size` along `dims`.
struct StagedInput {
  OpOperand *operand;
  Value shared;
  ArrayRef<unsigned> dims;
  int64_t size, T;
  Value origin;
};

/// Builds the kernel of one TiledPlan. The steps share what the launch
/// defines: the thread's place in the block, its outputs, and the loop
/// indices (`ivs`) that the index arithmetic of each step sets.
class TiledContractionBuilder {
public:
  TiledContractionBuilder(linalg::GenericOp op, const TiledPlan &plan)
      : op(op), plan(plan), loc(op.getLoc()), a(plan.tiles.dims.a),
        bIn(plan.tiles.dims.b), init(op.getDpsInitsMutable()[0]),
        payload(op.getRegion().front()), ranges(plan.tiles.ranges),
        mDims(plan.tiles.dims.m), nDims(plan.tiles.dims.n),
        kDims(plan.tiles.dims.k), sDims(plan.tiles.dims.s), M(plan.tiles.M),
        N(plan.tiles.N), K(plan.tiles.K), RM(plan.RM), RN(plan.RN),
        TM(plan.tiles.TM), TN(plan.tiles.TN) {}

  gpu::LaunchOp build(KernelNames &names);

private:
  Value cst(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  void placeOutputs(OpBuilder &b);
  SmallVector<Value> outputIndices(OpBuilder &b, int64_t r, int64_t c);
  SmallVector<Value> loadAccumulators(OpBuilder &b);
  bool fastAlongK(OpOperand *o);
  int64_t vectorWidth(const StagedInput &in);
  void copyTile(OpBuilder &b, const StagedInput &in, Value k0);
  void copyTileVectors(OpBuilder &b, const StagedInput &in, Value k0,
                       int64_t width);
  void copyTileScalars(OpBuilder &b, const StagedInput &in, Value k0);
  SmallVector<Value> kSlice(OpBuilder &b, Value kt, ValueRange carried);
  SmallVector<Value> multiplyAccumulate(OpBuilder &b, Value kk,
                                        ValueRange accs);
  void storeOutputs(OpBuilder &b, ArrayRef<Value> results);

  linalg::GenericOp op;
  const TiledPlan &plan;
  Location loc;
  OpOperand *a, *bIn;
  OpOperand &init;
  Block &payload;
  ArrayRef<int64_t> ranges;
  ArrayRef<unsigned> mDims, nDims, kDims, sDims;
  int64_t M, N, K, RM, RN, TM, TN;

  // Defined by build().
  SmallVector<Value> ivs;
  Value m0, n0, zero, one, tid, tx, ty;
  StagedInput stagedA{}, stagedB{};
  // The thread's outputs: rows ty + 16 r, columns tx + 16 c, and whether
  // each is in bounds (null: always).
  SmallVector<Value> rows, cols, rowOk, colOk;
};

gpu::LaunchOp TiledContractionBuilder::build(KernelNames &names) {
  MLIRContext *ctx = op.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto tileA =
      MemRefType::get({kTK, TM}, elementType(a), AffineMap(), workgroup);
  auto tileB =
      MemRefType::get({kTK, TN}, elementType(bIn), AffineMap(), workgroup);
  OpBuilder b(op);
  // Block -> (g, tile of M, tile of N); thread -> (ty, tx).
  gpu::LaunchOp launch =
      createContractionLaunch(b, loc, names, plan.tiles, kThreads,
                              TypeRange{tileA, tileB}, ivs, m0, n0);
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];
  stagedA = StagedInput{a, sharedA, mDims, M, TM, m0};
  stagedB = StagedInput{bIn, sharedB, nDims, N, TN, n0};
  zero = cst(b, 0);
  one = cst(b, 1);
  tid = launch.getThreadIds().x;
  tx = arith::RemUIOp::create(b, loc, tid, cst(b, kSide));
  ty = arith::DivUIOp::create(b, loc, tid, cst(b, kSide));
  placeOutputs(b);
  SmallVector<Value> acc = loadAccumulators(b);
  // S dims outermost, then the slices of K, carrying the accumulators.
  SmallVector<Value> results =
      reductionNest(b, loc, sDims, ranges, llvm::divideCeil(K, kTK), ivs, acc,
                    [&](OpBuilder &bb, Value kt, ValueRange carried) {
                      return kSlice(bb, kt, carried);
                    });
  storeOutputs(b, results);
  return launch;
}

void TiledContractionBuilder::placeOutputs(OpBuilder &b) {
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
}

SmallVector<Value>
TiledContractionBuilder::outputIndices(OpBuilder &b, int64_t r, int64_t c) {
  delinearize(b, loc, rows[r], mDims, ranges, ivs);
  delinearize(b, loc, cols[c], nDims, ranges, ivs);
  return operandIndices(b, loc, op, init, ivs);
}

/// The outputs' initial values (zero past the edges).
SmallVector<Value> TiledContractionBuilder::loadAccumulators(OpBuilder &b) {
  SmallVector<Value> acc;
  for (int64_t r = 0; r < RM; ++r)
    for (int64_t c = 0; c < RN; ++c)
      acc.push_back(guardedLoad(b, loc, andCond(b, loc, rowOk[r], colOk[c]),
                                init.get(), outputIndices(b, r, c)));
  return acc;
}

/// Whether an operand's contiguous dimension is the innermost K dim: then
/// neighbouring threads copy neighbouring k, else neighbouring m (n).
bool TiledContractionBuilder::fastAlongK(OpOperand *o) {
  AffineMap map = op.getMatchingIndexingMap(o);
  return map.getNumResults() > 0 &&
         map.getResults().back().isFunctionOfDim(kDims.back());
}

/// Vector loads: each thread copies its elements of the slice as one
/// aligned vector of up to 4 when they are consecutive in memory (the
/// operand's contiguous dimension is the copy direction's innermost dim,
/// its range a multiple of the width, the layout the identity: then a
/// vector never straddles a row, and rows start 16-byte aligned in the
/// 64-byte aligned buffers of the memory plan). Returns 1 otherwise.
int64_t TiledContractionBuilder::vectorWidth(const StagedInput &in) {
  OpOperand *o = in.operand;
  int64_t width = in.T * kTK / kThreads;
  auto type = cast<MemRefType>(o->get().getType());
  AffineMap map = op.getMatchingIndexingMap(o);
  if (width < 2 || !type.getLayout().isIdentity() ||
      type.getElementTypeBitWidth() != 32 || map.getNumResults() == 0)
    return 1;
  auto lastDim = dyn_cast<AffineDimExpr>(map.getResults().back());
  unsigned along = fastAlongK(o) ? kDims.back() : in.dims.back();
  if (!lastDim || lastDim.getPosition() != along || ranges[along] % width != 0)
    return 1;
  return width;
}

/// Copies the input's [16 x T] slice at k0 into its shared tile ([k][m]).
void TiledContractionBuilder::copyTile(OpBuilder &b, const StagedInput &in,
                                       Value k0) {
  if (int64_t width = vectorWidth(in); width > 1)
    copyTileVectors(b, in, k0, width);
  else
    copyTileScalars(b, in, k0);
}

/// One vector per thread: `width` consecutive k (or m).
void TiledContractionBuilder::copyTileVectors(OpBuilder &bb,
                                              const StagedInput &in, Value k0,
                                              int64_t width) {
  OpOperand *o = in.operand;
  int64_t size = in.size, T = in.T;
  bool alongK = fastAlongK(o);
  int64_t perRow = (alongK ? kTK : T) / width;
  Value q = arith::MulIOp::create(
      bb, loc, arith::RemUIOp::create(bb, loc, tid, cst(bb, perRow)),
      cst(bb, width));
  Value p = arith::DivUIOp::create(bb, loc, tid, cst(bb, perRow));
  Value kk = alongK ? q : p, mm = alongK ? p : q;
  Value m = arith::AddIOp::create(bb, loc, in.origin, mm);
  Value k = arith::AddIOp::create(bb, loc, k0, kk);
  Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                     below(bb, loc, k, K, K, kTK));
  delinearize(bb, loc, m, in.dims, ranges, ivs);
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
    Value off = arith::AddIOp::create(bb, loc, alongK ? kk : mm, cst(bb, e));
    memref::StoreOp::create(bb, loc, x, in.shared,
                            alongK ? ValueRange{off, mm} : ValueRange{kk, off});
  }
}

/// T * 16 / 256 elements per thread, neighbouring threads on neighbouring
/// elements along the operand's contiguous dimension.
void TiledContractionBuilder::copyTileScalars(OpBuilder &bb,
                                              const StagedInput &in, Value k0) {
  OpOperand *o = in.operand;
  int64_t size = in.size, T = in.T;
  bool alongK = fastAlongK(o);
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
    Value m = arith::AddIOp::create(bb, loc, in.origin, mm);
    Value k = arith::AddIOp::create(bb, loc, k0, kk);
    Value ok = andCond(bb, loc, below(bb, loc, m, size, size, T),
                       below(bb, loc, k, K, K, kTK));
    delinearize(bb, loc, m, in.dims, ranges, ivs);
    delinearize(bb, loc, k, kDims, ranges, ivs);
    Value v = guardedLoad(bb, loc, ok, o->get(),
                          operandIndices(bb, loc, op, *o, ivs));
    memref::StoreOp::create(bb, loc, v, in.shared, ValueRange{kk, mm});
  }
}

/// One 16-wide slice of K: copy, wait, accumulate, wait.
SmallVector<Value> TiledContractionBuilder::kSlice(OpBuilder &bb, Value kt,
                                                   ValueRange carried) {
  Value k0 = arith::MulIOp::create(bb, loc, kt, cst(bb, kTK));
  copyTile(bb, stagedA, k0);
  copyTile(bb, stagedB, k0);
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
        scf::YieldOp::create(lb, loc, multiplyAccumulate(lb, kk, accs));
      });
  gpu::BarrierOp::create(bb, loc);
  return SmallVector<Value>(inner.getResults());
}

/// The payload at k = `kk` of the slice for each of the thread's outputs,
/// A and B read from the shared tiles.
SmallVector<Value>
TiledContractionBuilder::multiplyAccumulate(OpBuilder &lb, Value kk,
                                            ValueRange accs) {
  SmallVector<Value> av, bv;
  for (int64_t r = 0; r < RM; ++r)
    av.push_back(memref::LoadOp::create(
        lb, loc, stagedA.shared,
        ValueRange{kk,
                   arith::AddIOp::create(lb, loc, ty, cst(lb, kSide * r))}));
  for (int64_t c = 0; c < RN; ++c)
    bv.push_back(memref::LoadOp::create(
        lb, loc, stagedB.shared,
        ValueRange{kk,
                   arith::AddIOp::create(lb, loc, tx, cst(lb, kSide * c))}));
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
      map.map(payload.getArgument(init.getOperandNumber()), accs[r * RN + c]);
      next.push_back(clonePayload(lb, op, map).front());
    }
  return next;
}

/// Stores the accumulators, skipping outputs past the edges.
void TiledContractionBuilder::storeOutputs(OpBuilder &b,
                                           ArrayRef<Value> results) {
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
}
} // namespace

gpu::LaunchOp buildTiledContraction(KernelNames &names, linalg::GenericOp op,
                                    const TiledPlan &plan) {
  return TiledContractionBuilder(op, plan).build(names);
}
} // namespace mlir::kiln::gpu_mapping
