//===- AmxMatmul.cpp - bf16 and int8 products on AMX tiles ------*- C++ -*-===//
//
// Two products become loops of AMX tile instructions:
// - kiln.bf16_matmul's (a linalg.generic on buffers marked kiln.bf16_matmul:
//   bf16 rows [M, K2, 2] times weights packed [P, K2, 16, 2] -> f32
//   [M, P, 16]), with tdpbf16ps;
// - static int8's (marked kiln.amx_int8_matmul: u8 rows [M, K4, 4] times s8
//   weights [P, K4, 16, 4] -> i32 [M, P, 16]), with tdpbusd.
// An AMX core has eight tile registers of up to 16 rows x 64 bytes; one
// multiply takes a [rows, 64 bytes] A tile and a [16, 64 bytes] B tile (16
// groups of k for each of 16 columns: pairs of bf16 or quads of int8) into a
// [rows, 16] f32 or i32 accumulator. The blocking keeps four accumulators,
// two A and two B tiles live (all eight registers):
//
//   for each block of 32 rows and 2 panels (in parallel):
//     C[2][2] = 0
//     for kc in 0..K2 / 16:                            (K4 / 16 for int8)
//       A[i] = rows[m0 + 16 i .. +16, 64 bytes at kc]  (row stride Kp)
//       B[j] = weights[p0 + j, 16 kc .. +16, 0 .. 64 bytes] (contiguous 1 KiB)
//       C[i][j] += A[i] * B[j]
//     store C[i][j] into out[m0 + 16 i .., p0 + j, 0 .. 16]
//
// Rows past the last block of 32 get tiles with fewer rows (tile shapes are
// static; LLVM's tile configuration gives each its own), an odd last panel a
// block of one. The accumulator tiles are loop-carried values: LLVM keeps
// them in tile registers across the k loop.
//
// The pass runs after bufferization because AMX loads and stores address
// memory; --kiln-cpu-tile-and-vectorize leaves the marked generic whole.
// Each group of blocks with one tile shape goes into a function of its own
// (noinline): LLVM gives each of the 8 tile registers one shape per function
// and runs out of registers when several kernels share one.
//
//===----------------------------------------------------------------------===//
#include "kiln/Codegen/CPU/Passes.h"
#include "kiln/Conversion/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_AMXMATMULPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The operands of one marked product and the row strides (in elements) of
/// its rows and output. With `batch` > 0 every operand has a leading batch
/// dimension (kiln.bf16_batch_matmul) that the loops index first. `group` is
/// 2 for bf16 (pairs of k) and 4 for int8 (quads); k2 counts the groups.
struct TileProduct {
  Value rows, weights, out;
  int64_t batch = 0, m, p, k2, group = 2;
  int64_t rowStride, outStride;
  bool int8() const { return group == 4; }
};

/// The stride of dimension `dim` when the dimensions after it are
/// contiguous (strides `inner`), or nothing.
std::optional<int64_t> strideOf(MemRefType t, unsigned dim,
                                ArrayRef<int64_t> inner) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) ||
      ArrayRef<int64_t>(strides).drop_front(dim + 1) != inner ||
      llvm::any_of(ArrayRef<int64_t>(strides).take_front(dim + 1),
                   ShapedType::isDynamic))
    return std::nullopt;
  return strides[dim];
}

FailureOr<TileProduct> match(linalg::GenericOp op, std::string &why) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1) {
    why = "expects two buffer inputs and one buffer init";
    return failure();
  }
  TileProduct k;
  k.rows = op.getDpsInputOperand(0)->get();
  k.weights = op.getDpsInputOperand(1)->get();
  k.out = op.getDpsInitOperand(0)->get();
  auto at = dyn_cast<MemRefType>(k.rows.getType());
  auto wt = dyn_cast<MemRefType>(k.weights.getType());
  auto ot = dyn_cast<MemRefType>(k.out.getType());
  unsigned b = at && at.getRank() == 4 ? 1 : 0; // leading batch dimension
  k.group = op->hasAttr(mlir::kiln::kAmxInt8MatmulAttr) ? 4 : 2;
  auto elementsAre = [&](Type a, Type w, Type o) {
    return at.getElementType() == a && wt.getElementType() == w &&
           ot.getElementType() == o;
  };
  Builder types(op.getContext());
  if (!at || !wt || !ot || !at.hasStaticShape() || !wt.hasStaticShape() ||
      !ot.hasStaticShape() || at.getRank() != 3 + b || wt.getRank() != 4 + b ||
      ot.getRank() != 3 + b ||
      !(k.int8() ? elementsAre(types.getI8Type(), types.getI8Type(),
                               types.getI32Type())
                 : elementsAre(types.getBF16Type(), types.getBF16Type(),
                               types.getF32Type()))) {
    why = k.int8() ? "expects static i8 [M, K4, 4] x i8 [P, K4, 16, 4] -> "
                     "i32 [M, P, 16]"
                   : "expects static bf16 [(B,) M, K2, 2] x bf16 [(B,) P, K2, "
                     "16, 2] -> f32 [(B,) M, P, 16]";
    return failure();
  }
  k.batch = b ? at.getDimSize(0) : 0;
  k.m = at.getDimSize(b);
  k.k2 = at.getDimSize(b + 1);
  k.p = wt.getDimSize(b);
  if ((b && (wt.getDimSize(0) != k.batch || ot.getDimSize(0) != k.batch)) ||
      at.getDimSize(b + 2) != k.group || wt.getDimSize(b + 1) != k.k2 ||
      wt.getDimSize(b + 2) != 16 || wt.getDimSize(b + 3) != k.group ||
      ot.getDimSize(b) != k.m || ot.getDimSize(b + 1) != k.p ||
      ot.getDimSize(b + 2) != 16 || k.k2 % 16 != 0) {
    why = "shapes do not agree, or K is not padded to 64 bytes";
    return failure();
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  unsigned n = 5 + b;
  auto d = [&](unsigned i) { return getAffineDimExpr(i + b, ctx); };
  auto with = [&](SmallVector<AffineExpr> r) {
    if (b)
      r.insert(r.begin(), getAffineDimExpr(0, ctx));
    return AffineMap::get(n, 0, r, ctx);
  };
  if (maps[0] != with({d(0), d(3), d(4)}) ||
      maps[1] != with({d(1), d(3), d(2), d(4)}) ||
      maps[2] != with({d(0), d(1), d(2)})) {
    why = "unexpected indexing maps";
    return failure();
  }
  std::optional<int64_t> rowStride = strideOf(at, b, {k.group, 1});
  std::optional<int64_t> weightStride = strideOf(wt, b + 1, {k.group, 1});
  std::optional<int64_t> outStride = strideOf(ot, b, {16, 1});
  if (!rowStride || !weightStride || *weightStride != 16 * k.group ||
      !outStride) {
    why = "a buffer's rows are not contiguous";
    return failure();
  }
  k.rowStride = *rowStride;
  k.outStride = *outStride;
  return k;
}

/// A group of blocks with less work than this runs on one thread: a
/// fork-join costs about as much as 10 us of tile work (~8 MFLOP).
constexpr int64_t kMinParallelFlops = 8'000'000;

/// Rows of the A tiles of one block, and how many blocks of that shape
/// follow each other from `start`.
struct RowGroup {
  int64_t start, count;
  SmallVector<int64_t> tileRows;
};

/// Blocks of 32 rows, then one of 16 and one of the rest. Each group has one
/// tile height: LLVM fixes the shape of each of the 8 tile registers for a
/// whole function, so one kernel function holds tiles of one height (plus
/// the B tiles of 16 rows).
SmallVector<RowGroup> rowGroups(int64_t m) {
  SmallVector<RowGroup> groups;
  if (m / 32)
    groups.push_back({0, m / 32, {16, 16}});
  int64_t tail = m % 32, start = m - tail;
  if (tail >= 16) {
    groups.push_back({start, 1, {16}});
    start += 16;
    tail -= 16;
  }
  if (tail)
    groups.push_back({start, 1, {tail}});
  return groups;
}

/// Emits the loops of the product at `b`'s insertion point; `kernel(b,
/// emit)` places the loops of one group of blocks (all with the same tile
/// shapes): `emit(b, rows, weights, out)` builds them on those buffers.
using EmitGroup = function_ref<void(OpBuilder &, Value, Value, Value)>;
void emitKernel(OpBuilder &b, Location loc, const TileProduct &k,
                function_ref<void(OpBuilder &, EmitGroup)> kernel) {
  // A row of a tile is 64 bytes: 32 bf16 or 64 int8.
  Type elt = k.int8() ? Type(b.getI8Type()) : Type(b.getBF16Type());
  Type accElt = k.int8() ? Type(b.getI32Type()) : Type(b.getF32Type());
  int64_t rowElems = 16 * k.group;
  auto bType = amx::TileType::get({16, rowElems}, elt);

  // One block: rows m0 .. (tiles of `tileRows` rows), panels p0 .. p0 + np.
  auto block = [&](OpBuilder &b, const TileProduct &k, Value bt, Value m0,
                   ArrayRef<int64_t> tileRows, Value p0, int64_t np) {
    // Indices, with the batch first when there is one.
    auto at = [&](std::initializer_list<Value> rest) {
      SmallVector<Value> v;
      if (bt)
        v.push_back(bt);
      v.append(rest.begin(), rest.end());
      return v;
    };
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value rowStride = cst(k.rowStride), weightStride = cst(rowElems),
          outStride = cst(k.outStride), zero = cst(0);
    SmallVector<Value> mi, pj;
    for (size_t i = 0; i < tileRows.size(); ++i)
      mi.push_back(
          i ? arith::AddIOp::create(b, loc, m0, cst(16 * i)).getResult() : m0);
    for (int64_t j = 0; j < np; ++j)
      pj.push_back(j ? arith::AddIOp::create(b, loc, p0, cst(j)).getResult()
                     : p0);
    SmallVector<Value> init;
    SmallVector<amx::TileType> accTypes;
    for (int64_t rows : tileRows)
      for (int64_t j = 0; j < np; ++j) {
        accTypes.push_back(amx::TileType::get({rows, 16}, accElt));
        init.push_back(amx::TileZeroOp::create(b, loc, accTypes.back()));
      }
    auto loop = scf::ForOp::create(
        b, loc, zero, cst(k.k2), cst(16), init,
        [&](OpBuilder &b, Location, Value k2, ValueRange accs) {
          SmallVector<Value> a, w, next;
          for (auto [i, rows] : llvm::enumerate(tileRows))
            a.push_back(amx::TileLoadOp::create(
                b, loc, amx::TileType::get({rows, rowElems}, elt), k.rows,
                at({mi[i], k2, zero}), rowStride));
          for (int64_t j = 0; j < np; ++j)
            w.push_back(amx::TileLoadOp::create(b, loc, bType, k.weights,
                                                at({pj[j], k2, zero, zero}),
                                                weightStride));
          for (size_t i = 0; i < tileRows.size(); ++i)
            for (int64_t j = 0; j < np; ++j)
              next.push_back(
                  k.int8()
                      // u8 rows times s8 weights: tdpbusd.
                      ? amx::TileMulIOp::create(b, loc, accTypes[i * np + j],
                                                a[i], w[j], accs[i * np + j],
                                                /*isZextLhs=*/true,
                                                /*isZextRhs=*/false)
                            .getResult()
                      : amx::TileMulFOp::create(b, loc, accTypes[i * np + j],
                                                a[i], w[j], accs[i * np + j])
                            .getResult());
          scf::YieldOp::create(b, loc, next);
        });
    for (size_t i = 0; i < tileRows.size(); ++i)
      for (int64_t j = 0; j < np; ++j)
        amx::TileStoreOp::create(b, loc, k.out, at({mi[i], pj[j], zero}),
                                 loop.getResult(i * np + j), outStride);
  };

  // Panels in pairs, then an odd last one alone.
  struct PanelGroup {
    int64_t start, count, panels;
  };
  SmallVector<PanelGroup> panelGroups;
  if (k.p / 2)
    panelGroups.push_back({0, k.p / 2, 2});
  if (k.p % 2)
    panelGroups.push_back({k.p - 1, 1, 1});

  for (const RowGroup &rg : rowGroups(k.m))
    for (const PanelGroup &pg : panelGroups)
      kernel(b, [&](OpBuilder &b, Value rows, Value weights, Value out) {
        TileProduct kk = k;
        kk.rows = rows;
        kk.weights = weights;
        kk.out = out;
        int64_t rowsPerBlock = 16 * rg.tileRows.size();
        auto cst = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(b, loc, v);
        };
        int64_t blocks = rg.count * pg.count;
        auto body = [&](OpBuilder &b, Value iv) {
          // iv = (batch, row block, panel block), the last fastest.
          Value bt;
          if (k.batch) {
            bt = arith::DivUIOp::create(b, loc, iv, cst(blocks));
            iv = arith::RemUIOp::create(b, loc, iv, cst(blocks));
          }
          Value rowBlock = arith::DivUIOp::create(b, loc, iv, cst(pg.count));
          Value panelBlock = arith::RemUIOp::create(b, loc, iv, cst(pg.count));
          Value m0 = arith::AddIOp::create(
              b, loc, cst(rg.start),
              arith::MulIOp::create(b, loc, rowBlock, cst(rowsPerBlock)));
          Value p0 = arith::AddIOp::create(
              b, loc, cst(pg.start),
              arith::MulIOp::create(b, loc, panelBlock, cst(pg.panels)));
          block(b, kk, bt, m0, rg.tileRows, p0, pg.panels);
        };
        int64_t count = blocks * std::max<int64_t>(k.batch, 1);
        if (count == 1) {
          body(b, cst(0));
          return;
        }
        // Blocks are independent: threads share them when the group is worth
        // a fork-join (kMinParallelFlops); a small one loops on one thread.
        int64_t groupRows = rg.count * rowsPerBlock;
        if (rg.tileRows.size() == 1)
          groupRows = rg.tileRows[0];
        int64_t flops = 2 * groupRows * 16 * pg.count * pg.panels * k.group *
                        k.k2 *
                        std::max<int64_t>(k.batch, 1);
        OpBuilder::InsertionGuard guard(b);
        if (flops < kMinParallelFlops) {
          auto loop = scf::ForOp::create(b, loc, cst(0), cst(count), cst(1));
          b.setInsertionPointToStart(loop.getBody());
          body(b, loop.getInductionVar());
          return;
        }
        auto forall = scf::ForallOp::create(
            b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(count)}, ValueRange{},
            std::nullopt);
        b.setInsertionPointToStart(forall.getBody());
        body(b, forall.getInductionVar(0));
      });
}

/// Whether `v` can be passed to a function under the bare-pointer calling
/// convention the pipeline uses: a static, identity-layout memref.
bool passable(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity();
}

struct AmxMatmulPass : mlir::kiln::impl::AmxMatmulPassBase<AmxMatmulPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      SmallVector<linalg::GenericOp> ops;
      func.walk([&](linalg::GenericOp op) {
        if (mlir::kiln::isAmxProduct(op))
          ops.push_back(op);
      });
      int counter = 0;
      Operation *last = func; // kernels follow their caller in order
      for (linalg::GenericOp op : ops) {
        std::string why;
        FailureOr<TileProduct> k = match(op, why);
        if (failed(k)) {
          // Its zero fill may be gone (tile-and-vectorize{amx}): no other
          // lowering may compute it.
          op->emitError() << (op->hasAttr(mlir::kiln::kAmxInt8MatmulAttr)
                                  ? "int8"
                                  : "bf16")
                          << " matmul does not fit the AMX kernel: " << why;
          return signalPassFailure();
        }
        OpBuilder b(op);
        bool call =
            passable(k->rows) && passable(k->weights) && passable(k->out);
        emitKernel(b, op.getLoc(), *k, [&](OpBuilder &b, EmitGroup emit) {
          if (!call) {
            emit(b, k->rows, k->weights, k->out);
            return;
          }
          // Each group of blocks in a function of its own, never inlined:
          // see rowGroups.
          Location loc = op.getLoc();
          OpBuilder mb(module.getContext());
          mb.setInsertionPointAfter(last);
          SmallVector<Type> types = {k->rows.getType(), k->weights.getType(),
                                     k->out.getType()};
          auto kernel = func::FuncOp::create(
              mb, loc, (func.getSymName() + "_amx" + Twine(counter++)).str(),
              mb.getFunctionType(types, {}));
          kernel.setPrivate();
          last = kernel;
          kernel->setAttr("llvm.linkage",
                          LLVM::LinkageAttr::get(module.getContext(),
                                                 LLVM::Linkage::Internal));
          kernel->setAttr("passthrough",
                          mb.getArrayAttr({mb.getStringAttr("noinline")}));
          Block *entry = kernel.addEntryBlock();
          mb.setInsertionPointToStart(entry);
          emit(mb, entry->getArgument(0), entry->getArgument(1),
               entry->getArgument(2));
          func::ReturnOp::create(mb, loc);
          func::CallOp::create(b, loc, kernel,
                               ValueRange{k->rows, k->weights, k->out});
        });
        op.erase();
      }
    }
  }
};
} // namespace
