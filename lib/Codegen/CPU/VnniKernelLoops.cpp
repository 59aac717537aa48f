//===- VnniKernelLoops.cpp - the loops around the kernel's blocks -*- C++
//-*-===//
//
// The loops of a VnniKernel (VnniKernel.h) that cover the product's output
// with blocks of mr rows x pp panels: rows or panels outermost, a tail tile,
// a consumer of rank 4 row by row, and the scf.forall that shares the tiles
// between the threads when the product is worth a fork-join.
//
//===----------------------------------------------------------------------===//
#include "VnniKernel.h"

#include "kiln/Dialect/Kiln/IR/Contract.h"

using namespace mlir;
using namespace mlir::kiln::vnni;

/// Rows m0 .. m0 + mr - 1 against every panel.
Value VnniKernel::panelsOf(OpBuilder &b1, Value m0, Value dest,
                           const Store &store, int64_t mr) {
  return scf::ForOp::create(
             b1, loc, idx(b1, 0), idx(b1, k.p), idx(b1, pp), ValueRange{dest},
             [&](OpBuilder &b2, Location, Value p0, ValueRange iter) {
               scf::YieldOp::create(b2, loc,
                                    block(b2, m0, p0, iter[0], store, mr));
             })
      .getResult(0);
}

Value VnniKernel::rowTile(OpBuilder &b1, Value m0, Value dest,
                          std::optional<int64_t> rowBase, int64_t mr) {
  return panelsOf(b1, m0, dest,
                  consumer ? consumerStore(rowBase, false, {}, {}, {}, {})
                           : productStore(rowBase, /*ownPanels=*/false),
                  mr);
}

/// Panels p0 .. p0 + pp - 1 against every row: the full row tiles, then the
/// rows left over.
Value VnniKernel::panelTile(OpBuilder &b1, Value p0, Value dest,
                            bool ownPanels) {
  Store store = consumer
                    ? consumerStore(std::nullopt, ownPanels, {}, {}, {}, {})
                    : productStore(std::nullopt, ownPanels);
  Value t = scf::ForOp::create(
                b1, loc, idx(b1, 0), mRun ? splitRun : idx(b1, full * mr),
                idx(b1, mr), ValueRange{dest},
                [&](OpBuilder &b2, Location, Value m0, ValueRange iter) {
                  scf::YieldOp::create(b2, loc,
                                       block(b2, m0, p0, iter[0], store, mr));
                })
                .getResult(0);
  if (mRun)
    return runTimeTail(b1, t,
                       [&](OpBuilder &b2, Value m0, Value dest, int64_t n) {
                         return block(b2, m0, p0, dest, store, n);
                       });
  if (tail)
    t = block(b1, idx(b1, full * mr), p0, t, store, tail);
  return t;
}

/// The rows of a run-time count after its full tiles, M mod mr of them: a
/// tile of each power of two that count has (for mr = 8: 4, 2 and 1 rows,
/// each when its bit is set), so that no tile has a run-time size.
Value VnniKernel::runTimeTail(OpBuilder &b1, Value dest, Rows rows) {
  Value rest = arith::SubIOp::create(b1, loc, mRun, splitRun);
  int64_t n = 1;
  while (2 * n < mr)
    n *= 2;
  for (; n >= 1 && mr > 1; n /= 2) {
    Value bit = arith::AndIOp::create(b1, loc, rest, idx(b1, n));
    Value has = arith::CmpIOp::create(b1, loc, arith::CmpIPredicate::ne, bit,
                                      idx(b1, 0));
    // The tile starts after the larger tiles taken: the bits above n.
    Value m0 = arith::AddIOp::create(
        b1, loc, splitRun,
        arith::AndIOp::create(b1, loc, rest, idx(b1, ~(2 * n - 1))));
    dest = scf::IfOp::create(
               b1, loc, has,
               [&](OpBuilder &b2, Location) {
                 scf::YieldOp::create(b2, loc, rows(b2, m0, dest, n));
               },
               [&](OpBuilder &b2, Location) {
                 scf::YieldOp::create(b2, loc, dest);
               })
               .getResult(0);
  }
  return dest;
}

/// An scf.forall of `count` iterations over the output: iteration iv
/// computes with `fill` the slice that `place` sets (the offsets and sizes
/// start as the whole output's).
Value VnniKernel::forallOver(OpFoldResult count, Place place, Fill fill) {
  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{count},
                                      ValueRange{out}, std::nullopt);
  forall->setAttr(mlir::kiln::kOverwrittenOutsAttr, overwrites);
  OpBuilder body = OpBuilder::atBlockBegin(forall.getBody());
  ArrayRef<int64_t> shape = cast<RankedTensorType>(out.getType()).getShape();
  SmallVector<OpFoldResult> offsets(shape.size(), body.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(ctx, shape);
  if (mRun)
    sizes[0] = mRun; // the rows, the one run-time size
  SmallVector<OpFoldResult> strides(shape.size(), body.getIndexAttr(1));
  place(body, forall.getInductionVar(0), offsets, sizes);
  Value part = tensor::ExtractSliceOp::create(
      body, loc, forall.getRegionIterArgs()[0], offsets, sizes, strides);
  Value result = fill(body, part);
  OpBuilder term = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(term, loc, result,
                                        forall.getRegionIterArgs()[0], offsets,
                                        sizes, strides);
  return forall.getResult(0);
}

/// The extent `n` when `cond` holds, else `otherwise`.
OpFoldResult VnniKernel::extentIf(OpBuilder &b1, Value cond, int64_t n,
                                  int64_t otherwise) {
  return arith::SelectOp::create(b1, loc, cond, idx(b1, n), idx(b1, otherwise))
      .getResult();
}

/// The scf.if that computes `make` for `n` when `cond` holds, else for
/// `otherwise`.
Value VnniKernel::either(OpBuilder &b1, Value cond, int64_t n,
                         int64_t otherwise,
                         llvm::function_ref<Value(OpBuilder &, int64_t)> make) {
  auto branch = [&](int64_t size) {
    return [&, size](OpBuilder &b2, Location) {
      scf::YieldOp::create(b2, loc, make(b2, size));
    };
  };
  return scf::IfOp::create(b1, loc, cond, branch(n), branch(otherwise))
      .getResult(0);
}

/// `count` slices of `size` along dimension `dim` of the product's output (0
/// rows, 1 panels), each computed by `tile` from its origin, the last one
/// `extra` longer: across the threads in an scf.forall, each slice written
/// into its own part of the output, or in an scf.for (the extra after it)
/// into the whole output.
Value VnniKernel::slices(int64_t dim, int64_t count, int64_t size,
                         int64_t extra, bool shared, Tile tile) {
  if (!shared) {
    auto loop = scf::ForOp::create(
        b, loc, idx(b, 0), idx(b, count * size), idx(b, size), ValueRange{out},
        [&](OpBuilder &b1, Location, Value origin, ValueRange iter) {
          scf::YieldOp::create(b1, loc,
                               tile(b1, origin, iter[0], std::nullopt, size));
        });
    if (!extra)
      loop->setAttr(mlir::kiln::kOverwrittenOutsAttr, overwrites);
    Value t = loop.getResult(0);
    return extra ? tile(b, idx(b, count * size), t, std::nullopt, extra) : t;
  }
  Value origin, isLast;
  return forallOver(
      b.getIndexAttr(count),
      [&](OpBuilder &body, Value iv, SmallVectorImpl<OpFoldResult> &offsets,
          SmallVectorImpl<OpFoldResult> &sizes) {
        origin = size == 1
                     ? iv
                     : arith::MulIOp::create(body, loc, iv, idx(body, size))
                           .getResult();
        offsets[dim] = origin;
        sizes[dim] = body.getIndexAttr(size);
        if (extra) {
          isLast = arith::CmpIOp::create(body, loc, arith::CmpIPredicate::eq,
                                         iv, idx(body, count - 1));
          sizes[dim] = extentIf(body, isLast, size + extra, size);
        }
      },
      [&](OpBuilder &body, Value part) -> Value {
        if (!extra)
          return tile(body, origin, part, 0, size);
        // The last slice then its extra rows, in one iteration: SqueezeNet's
        // 13 x 13 layers have one row in 169 after the full tiles,
        // MobileNetV2's 7 x 7 ones one in 49. Alone after the join, they ran
        // on one thread; as an iteration of their own, they gave one thread
        // of two a whole tile more than the other.
        return either(
            body, isLast, size + extra, size, [&](OpBuilder &b1, int64_t n) {
              Value t = tile(b1, origin, part, 0, size);
              if (n == size)
                return t;
              Value after =
                  arith::AddIOp::create(b1, loc, origin, idx(b1, size));
              return tile(b1, after, t, size, extra);
            });
      });
}

/// A consumer of rank 4: the W pixels of each row of H in tiles of mr (and
/// one of the rest), each through every panel.
Value VnniKernel::buildRank4Consumer(bool parallel) {
  // The tile of n pixels of row h from w0, written at (hAt, wAt) of dest.
  auto tile = [&](OpBuilder &b1, Value h, Value w0, Value dest, Value hAt,
                  Value wAt, int64_t n) {
    Value m0 = arith::AddIOp::create(
        b1, loc, arith::MulIOp::create(b1, loc, h, idx(b1, wRows)), w0);
    return panelsOf(b1, m0, dest, consumerStore({}, false, h, w0, hAt, wAt), n);
  };
  int64_t perRow = full + (tail ? 1 : 0), count = hRows * perRow;
  if (!parallel || count < 2) {
    auto loop = scf::ForOp::create(
        b, loc, idx(b, 0), idx(b, hRows), idx(b, 1), ValueRange{out},
        [&](OpBuilder &b1, Location, Value h, ValueRange iter) {
          Value t = scf::ForOp::create(
                        b1, loc, idx(b1, 0), idx(b1, full * mr), idx(b1, mr),
                        ValueRange{iter[0]},
                        [&](OpBuilder &b2, Location, Value w0, ValueRange it) {
                          scf::YieldOp::create(
                              b2, loc, tile(b2, h, w0, it[0], h, w0, mr));
                        })
                        .getResult(0);
          if (tail)
            t = tile(b1, h, idx(b1, full * mr), t, h, idx(b1, full * mr), tail);
          scf::YieldOp::create(b1, loc, t);
        });
    loop->setAttr(mlir::kiln::kOverwrittenOutsAttr, overwrites);
    return loop.getResult(0);
  }
  // Across the threads, one tile per iteration (row h, tile t of the row),
  // each a [1, 1, mr, C] slice: with one row of H each, MobileNetV2's 7 x 7
  // layers split 4 rows to 3 between two threads.
  Value h, w0, isTail;
  return forallOver(
      b.getIndexAttr(count),
      [&](OpBuilder &body, Value iv, SmallVectorImpl<OpFoldResult> &offsets,
          SmallVectorImpl<OpFoldResult> &sizes) {
        h = arith::DivUIOp::create(body, loc, iv, idx(body, perRow));
        Value t = arith::RemUIOp::create(body, loc, iv, idx(body, perRow));
        w0 = arith::MulIOp::create(body, loc, t, idx(body, mr));
        offsets[1] = h;
        offsets[2] = w0;
        sizes[1] = body.getIndexAttr(1);
        sizes[2] = body.getIndexAttr(mr);
        if (tail) {
          isTail = arith::CmpIOp::create(body, loc, arith::CmpIPredicate::eq, t,
                                         idx(body, full));
          sizes[2] = extentIf(body, isTail, tail, mr);
        }
      },
      [&](OpBuilder &body, Value part) -> Value {
        Value origin = idx(body, 0);
        auto make = [&](OpBuilder &b1, int64_t n) {
          return tile(b1, h, w0, part, origin, origin, n);
        };
        return tail ? either(body, isTail, tail, mr, make) : make(body, mr);
      });
}

Value VnniKernel::build() {
  // Row tiles outermost read all the weights once per row tile, which is
  // free while they stay in L2 (bert_small's largest are 256 KiB). Weights
  // over 1 MiB (ResNet's 7x7 layers: 2.4 MB in int8, 4.7 MB in bf16, for
  // 49 rows) go panels outermost instead when that reads at most half as
  // many bytes from beyond L2: each panel group once, the rows once per
  // group (once in all when they fit). As the f32 convolutions'
  // channelsOutermost in TileStrategy. A product of one row tile (a
  // classifier at batch 1: MobileNetV2's 1 x 1280 x 1000) has only its
  // panels to share between the threads.
  // On AVX2 the weights and the rows are read in 16 bits, and the row
  // tiles are of 2 rows: weights over 256 KiB (half of Zen 3's L2) read once
  // per tile came from L3 (ResNet-18's 3x3 layers of 256 channels, 1.2 MB).
  int64_t kCache = avx2 ? kPanelsOuterBytes / 4 : kPanelsOuterBytes;
  int64_t width = avx2 && wideRows ? 2 : 1;
  // Rows of run-time count are taken at their bound (mMax).
  int64_t weightBytes = k.p * k.k4 * k.r * 4 * (wideWeights ? 2 : 1),
          rowBytes = mMax * k.k4 * 4 * width;
  int64_t rowTiles = mRun ? (mMax + mr - 1) / mr : full + (tail ? 1 : 0),
          panelGroups = k.p / pp;
  bool panelsOuter =
      panelGroups >= 2 &&
      (rowTiles == 1 || (weightBytes >= kCache && rowTiles >= 2 &&
                         2 * (rowBytes > kCache ? double(panelGroups) * rowBytes
                                                : double(rowBytes)) <
                             double(rowTiles) * weightBytes));
  int64_t work = mMax * k.p * k.r * k.k4 * g;
  bool parallel = parallelWork > 0 && work >= parallelWork;
  if (hRows)
    return buildRank4Consumer(parallel);
  // Panels outermost: the threads share the panel groups, each writing its
  // own columns.
  if (panelsOuter)
    return slices(
        1, panelGroups, pp, 0, parallel,
        [&](OpBuilder &b1, Value p0, Value dest, std::optional<int64_t> base,
            int64_t) { return panelTile(b1, p0, dest, base.has_value()); });
  if (mRun)
    return buildRunTimeRows(parallel && rowTiles >= 2);
  // Row tiles are independent: the threads share them when the product is
  // worth a fork-join. Each reads all the weights and writes its own rows.
  // The rows left over after the full tiles (at most mr - 1) are one
  // smaller tile.
  return slices(
      0, full, mr, tail, parallel && full >= 2,
      [&](OpBuilder &b1, Value m0, Value dest, std::optional<int64_t> rowBase,
          int64_t size) { return rowTile(b1, m0, dest, rowBase, size); });
}

/// Rows of run-time count M: its full tiles of mr rows (shared by the
/// threads when the product is worth a fork-join at M's bound, each a static
/// [mr, P, R] slice), then the rows left over (runTimeTail) after the join.
Value VnniKernel::buildRunTimeRows(bool parallel) {
  Value t;
  if (parallel) {
    Value origin;
    t = forallOver(
        fullRun,
        [&](OpBuilder &body, Value iv, SmallVectorImpl<OpFoldResult> &offsets,
            SmallVectorImpl<OpFoldResult> &sizes) {
          origin = mr == 1 ? iv
                           : arith::MulIOp::create(body, loc, iv, idx(body, mr))
                                 .getResult();
          offsets[0] = origin;
          sizes[0] = body.getIndexAttr(mr);
        },
        [&](OpBuilder &body, Value part) -> Value {
          return rowTile(body, origin, part, 0, mr);
        });
  } else {
    t = scf::ForOp::create(
            b, loc, idx(b, 0), splitRun, idx(b, mr), ValueRange{out},
            [&](OpBuilder &b1, Location, Value m0, ValueRange iter) {
              scf::YieldOp::create(b1, loc,
                                   rowTile(b1, m0, iter[0], std::nullopt, mr));
            })
            .getResult(0);
  }
  return runTimeTail(b, t, [&](OpBuilder &b1, Value m0, Value dest, int64_t n) {
    return rowTile(b1, m0, dest, std::nullopt, n);
  });
}
