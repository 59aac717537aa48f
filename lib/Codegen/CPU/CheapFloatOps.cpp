//===- CheapFloatOps.cpp - float ops in their one-instruction forms -*- C++ -*-===//
#include "kiln/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mlir::kiln {
#define GEN_PASS_DEF_CHEAPFLOATOPSPASS
#include "kiln/Codegen/CPU/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// lrint of `x` (f32, or a vector of f32 of any rank) as i32 values: one
/// conversion per row of a vector of several dimensions (the LLVM dialect
/// takes 1-D vectors only).
Value lrintOf(OpBuilder &b, Location loc, Value x, Type resultType) {
  auto vt = dyn_cast<VectorType>(resultType);
  if (!vt || vt.getRank() <= 1)
    return LLVM::LrintOp::create(b, loc, resultType, x);
  auto rowType = VectorType::get(vt.getShape().back(), vt.getElementType());
  Value result = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vt, b.getI32IntegerAttr(0)));
  SmallVector<int64_t> leading(vt.getShape().drop_back());
  SmallVector<int64_t> at(leading.size(), 0);
  int64_t rows = 1;
  for (int64_t d : leading)
    rows *= d;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t d = int64_t(at.size()) - 1, rest = r; d >= 0; --d) {
      at[d] = rest % leading[d];
      rest /= leading[d];
    }
    Value row = vector::ExtractOp::create(b, loc, x, at);
    result = vector::InsertOp::create(
        b, loc, LLVM::LrintOp::create(b, loc, rowType, row), result, at);
  }
  return result;
}

/// The f32 whose bits are `bits`, and back.
float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
uint32_t bitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

constexpr uint32_t kOne = 0x3F800000, kSignificands = 1u << 23;

/// Whether fma(x, hi, x * lo) == x / d, bit for bit, for every x in [1, 2);
/// one x at a time, as quotientsMatchAvx2 does eight.
bool quotientsMatchScalar(float d, float hi, float lo) {
  for (uint32_t m = 0; m < kSignificands; ++m) {
    float x = floatOf(kOne | m);
    if (bitsOf(std::fmaf(x, hi, x * lo)) != bitsOf(x / d))
      return false;
  }
  return true;
}

#if defined(__x86_64__)
/// quotientsMatchScalar over every significand, eight at a time.
__attribute__((target("avx2,fma"))) bool quotientsMatchAvx2(float d, float hi,
                                                            float lo) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 vd = _mm256_set1_ps(d), vhi = _mm256_set1_ps(hi),
               vlo = _mm256_set1_ps(lo);
  for (uint32_t block = 0; block < kSignificands; block += 4096) {
    __m256i differ = _mm256_setzero_si256();
    for (uint32_t m = block; m < block + 4096; m += 8) {
      __m256 x = _mm256_castsi256_ps(
          _mm256_or_si256(_mm256_set1_epi32(int32_t(kOne | m)), lanes));
      __m256 got = _mm256_fmadd_ps(x, vhi, _mm256_mul_ps(x, vlo));
      __m256 want = _mm256_div_ps(x, vd);
      differ =
          _mm256_or_si256(differ, _mm256_xor_si256(_mm256_castps_si256(got),
                                                   _mm256_castps_si256(want)));
    }
    if (!_mm256_testz_si256(differ, differ))
      return false;
  }
  return true;
}
#endif

/// The f32 constants {hi, lo} that divide by `d` as q = fma(x, hi, x * lo),
/// hi near 1/d and lo the rounded remainder 1/d - hi, when that q rounds as
/// x / d for every x whose quotient and x * lo are normal numbers, and
/// every infinite x; none otherwise. lo is 0 for a power of two (then x * hi
/// is x / d everywhere).
///
/// Scaling x by a power of two scales x / d, x * lo and the fma alike while
/// they stay normal, so the quotients of x in [1, 2) (all 2^23
/// significands) decide every such x; a sign flips all three. lo takes
/// hi's sign (hi is 1/d rounded to nearest, or toward zero when that
/// rounded up), so an infinite x gives an infinity of its sign, not
/// inf - inf. A quotient outside the normal range may differ: below about
/// 2^-78 (x * lo subnormal; |lo / hi| is at least about 2^-48), or past the f32
/// range (the fma infinite where x / d is not). Most divisors pass; one for
/// which some x rounds the other way keeps its division.
std::optional<std::pair<float, float>> exactReciprocal(float d) {
  if (!std::isnormal(d))
    return std::nullopt;
  float hi = 1.0f / d;
  if (!std::isnormal(hi))
    return std::nullopt;
  // 1 - d * hi is exact (hi is within an ulp of 1/d): lo is the remainder
  // rounded once.
  auto remainder = [&](float h) { return std::fmaf(-d, h, 1.0f) / d; };
  float lo = remainder(hi);
  if (lo == 0.0f)
    return std::make_pair(hi, 0.0f);
  if (std::signbit(lo) != std::signbit(hi)) {
    hi = std::nextafterf(hi, 0.0f);
    lo = remainder(hi);
    if (!std::isnormal(hi) || std::signbit(lo) != std::signbit(hi))
      return std::nullopt;
  }
#if defined(__x86_64__)
  bool match = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                   ? quotientsMatchAvx2(d, hi, lo)
                   : quotientsMatchScalar(d, hi, lo);
#else
  bool match = quotientsMatchScalar(d, hi, lo);
#endif
  if (!match)
    return std::nullopt;
  return std::make_pair(hi, lo);
}

/// The value of `v` when it is one f32 constant (a scalar, a splat, or a
/// scalar broadcast to a vector).
std::optional<float> constantF32(Value v) {
  if (!getElementTypeOrSelf(v.getType()).isF32())
    return std::nullopt;
  if (auto broadcast = v.getDefiningOp<vector::BroadcastOp>())
    v = broadcast.getSource();
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValue().convertToFloat();
  if (auto splat = dyn_cast<SplatElementsAttr>(attr))
    return splat.getSplatValue<APFloat>().convertToFloat();
  return std::nullopt;
}

/// Whether `v` is one finite f32 constant: a clamp or zero point that
/// saturates (an infinite or NaN one does not bound anything).
bool finiteConstant(Value v) {
  std::optional<float> c = constantF32(v);
  return c && std::isfinite(*c);
}

/// Whether `op` is a maximum or minimum of `v` and a constant; `max` tells
/// which.
bool clampsAgainstConstant(Operation *op, Value v, bool &max) {
  if (!isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
           arith::MinNumFOp>(op))
    return false;
  max = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
  return llvm::any_of(op->getOperands(),
                      [&](Value o) { return o != v && finiteConstant(o); });
}

/// The scalar f32 that `v` broadcasts to a fixed-size vector, when it is
/// not a constant.
Value broadcastScalar(Value v) {
  auto vt = dyn_cast<VectorType>(v.getType());
  if (!vt || vt.isScalable() || !vt.getElementType().isF32())
    return {};
  auto broadcast = v.getDefiningOp<vector::BroadcastOp>();
  if (!broadcast || !broadcast.getSourceType().isF32() ||
      matchPattern(broadcast.getSource(), m_Constant()))
    return {};
  return broadcast.getSource();
}

/// The integer scalar of at most 16 bits that `v` broadcasts to a vector
/// and converts to f32 (a zero point input: an integer, and finite);
/// `isSigned` tells the conversion.
Value broadcastSmallInteger(Value v, bool &isSigned) {
  auto vt = dyn_cast<VectorType>(v.getType());
  Operation *conv = v.getDefiningOp();
  if (!vt || vt.isScalable() || !vt.getElementType().isF32() ||
      !isa_and_nonnull<arith::UIToFPOp, arith::SIToFPOp>(conv))
    return {};
  auto broadcast = conv->getOperand(0).getDefiningOp<vector::BroadcastOp>();
  auto type = broadcast ? dyn_cast<IntegerType>(broadcast.getSourceType())
                        : IntegerType();
  if (!type || type.getWidth() > 16)
    return {};
  isSigned = isa<arith::SIToFPOp>(conv);
  return broadcast.getSource();
}

/// Whether every reader of `v` clamps it from both sides against constants
/// (a maximum, then a minimum, or the other way), possibly after adding a
/// constant (a zero point) first: what a quantization does to its rounded
/// quotient. With `runTimeAddends`, the zero point may also be a run-time
/// scalar broadcast to the vector, collected there (saturation then needs
/// it finite, which the caller checks when the code runs).
bool saturated(Value v, SmallVectorImpl<Value> *runTimeAddends = nullptr,
               bool afterAdd = false) {
  return !v.use_empty() && llvm::all_of(v.getUsers(), [&](Operation *u) {
    if (auto add = dyn_cast<arith::AddFOp>(u); add && !afterAdd) {
      Value other = add.getLhs() == v ? add.getRhs() : add.getLhs();
      bool isSigned;
      if (Value scalar = runTimeAddends ? broadcastScalar(other) : Value())
        runTimeAddends->push_back(scalar);
      else if (!finiteConstant(other) &&
               !(runTimeAddends && broadcastSmallInteger(other, isSigned)))
        return false;
      return saturated(add.getResult(), runTimeAddends, true);
    }
    bool max;
    if (!clampsAgainstConstant(u, v, max))
      return false;
    Value once = u->getResult(0);
    return !once.use_empty() &&
           llvm::all_of(once.getUsers(), [&](Operation *w) {
             bool max2;
             return clampsAgainstConstant(w, once, max2) && max2 != max;
           });
  });
}

/// Whether every reader of the quotient `div` rounds it to an integer and
/// saturates it (saturated).
bool roundedAndSaturated(arith::DivFOp div,
                         SmallVectorImpl<Value> *runTimeAddends = nullptr) {
  return !div->use_empty() && llvm::all_of(div->getUsers(), [&](Operation *u) {
    return isa<math::RoundEvenOp>(u) &&
           saturated(u->getResult(0), runTimeAddends);
  });
}

/// The f32 divisor of `div` when it is one constant.
std::optional<float> constantDivisor(arith::DivFOp div) {
  return constantF32(div.getRhs());
}

/// A constant f32 of `type` (a scalar or a splat vector).
Value f32Constant(OpBuilder &b, Location loc, Type type, float v) {
  FloatAttr f = b.getF32FloatAttr(v);
  if (auto vt = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vt, f));
  return arith::ConstantOp::create(b, loc, f);
}

/// The scalar f32 that `div` divides every lane of a fixed-size vector by,
/// when it is not a constant: a run-time scale broadcast to the vector.
Value runTimeDivisor(arith::DivFOp div) {
  return broadcastScalar(div.getRhs());
}

/// Constant divisors whose reciprocal and remainders stay normal for every
/// quotient a quantization rounds: correctedQuotient divides exactly by
/// them.
constexpr float kSmallestDivisor = 0x1p-60f, kLargestDivisor = 0x1p60f;

/// x / d from r = 1/d rounded to nearest and `negD` = -d (both of x's
/// type): q0 = x * r is within 1.5 ulps; one correction q1 = q0 + (x - q0 *
/// d) * r makes it faithful (within an ulp), and then the remainder x - q1
/// * d is exact and a second correction gives the correctly rounded
/// quotient q2 (Markstein's theorem: r within half an ulp of 1/d, q1
/// faithful, no underflow or overflow). For a zero x, q2 may lose the
/// quotient's sign (the corrections add zeros of opposite signs) where q0
/// keeps it; an infinite or NaN x gives a NaN q2, and so may a quotient
/// that overflows. A mul and four fmas, where a vdivps of 16 lanes takes 10
/// to 16 cycles.
struct Quotients {
  Value q0, q2;
};
Quotients correctedQuotient(OpBuilder &b, Location loc, Value x, Value r,
                            Value negD) {
  Value q0 = arith::MulFOp::create(b, loc, x, r);
  Value q1 = math::FmaOp::create(
      b, loc, math::FmaOp::create(b, loc, q0, negD, x), r, q0);
  Value q2 = math::FmaOp::create(
      b, loc, math::FmaOp::create(b, loc, q1, negD, x), r, q1);
  return {q0, q2};
}

/// Run-time divisors, and the dividends beside them, for which
/// correctedQuotient is the division's float32 bit for bit: with
/// 2^-20 <= |d| <= 2^20 and 2^-100 <= |x| <= 2^100 the quotient and the
/// remainders stay normal (compared for 200 random divisors and the range's
/// ends over all 2^23 significands at 34 exponents of x: no difference).
constexpr float kSmallestRunTimeDivisor = 0x1p-20f,
                kLargestRunTimeDivisor = 0x1p20f, kSmallestDividend = 0x1p-100f,
                kLargestDividend = 0x1p100f;

/// Whether lo <= v <= hi (`v` of `type`, a scalar or a vector), ordered:
/// NaN is outside.
Value withinRange(OpBuilder &b, Location loc, Value v, Type type, float lo,
                  float hi) {
  // One statement each: the order of the ops does not hang on the order in
  // which the compiler evaluates arguments.
  Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, v,
                                      f32Constant(b, loc, type, hi));
  Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, v,
                                      f32Constant(b, loc, type, lo));
  return arith::AndIOp::create(b, loc, above, below);
}

/// q2 where it is the quotient, q0 where x is zero (the zero of the
/// quotient's sign, which the corrections may lose) or q2 is NaN (x
/// infinite, or an overflow: q0 is then the infinity).
Value keptQuotient(OpBuilder &b, Location loc, Value x, Quotients q) {
  Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                     f32Constant(b, loc, x.getType(), 0.0f));
  Value nan =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, q.q2, q.q2);
  Value keep = arith::OrIOp::create(b, loc, nan, zero);
  return arith::SelectOp::create(b, loc, keep, q.q0, q.q2);
}

/// A run-time scalar divisor's reciprocal r = 1/d and -d, made once where
/// `b` stands (before the branch that checks d).
struct ScalarDivisor {
  Value r, negD;
};
ScalarDivisor scalarDivisor(OpBuilder &b, Location loc, Value d) {
  Value r = arith::DivFOp::create(b, loc,
                                  f32Constant(b, loc, b.getF32Type(), 1.0f), d);
  return {r, arith::NegFOp::create(b, loc, d)};
}

/// correctedQuotient of the vector x by a scalar divisor, broadcast where
/// `at` stands.
Quotients correctedByScalar(OpBuilder &at, Location loc, Value x,
                            ScalarDivisor d) {
  auto vt = cast<VectorType>(x.getType());
  Value negD = vector::BroadcastOp::create(at, loc, vt, d.negD);
  Value r = vector::BroadcastOp::create(at, loc, vt, d.r);
  return correctedQuotient(at, loc, x, r, negD);
}

/// Replaces `div` by `scf.if cond { fast(builder) } else { x / d }`.
void divideUnless(arith::DivFOp div, Value cond,
                  llvm::function_ref<Value(OpBuilder &)> fast) {
  OpBuilder b(div);
  Location loc = div.getLoc();
  auto choice = scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &then, Location l) {
        scf::YieldOp::create(then, l, fast(then));
      },
      [&](OpBuilder &otherwise, Location l) {
        scf::YieldOp::create(
            otherwise, l,
            arith::DivFOp::create(otherwise, l, div.getLhs(), div.getRhs())
                .getResult());
      });
  div.replaceAllUsesWith(choice.getResult(0));
  div.erase();
}

/// Rewrites x / d, `d` a run-time scalar broadcast to x's vector, as
/// correctedQuotient, whatever reads the quotient: one scalar division for
/// the reciprocal (LLVM merges those of one divisor), and the vector
/// division only when d is outside [2^-20, 2^20] (a branch on one scalar,
/// taken the same way for a whole run) or some lane's x is neither 0 nor
/// within [2^-100, 2^100] (subnormal, huge, infinite or NaN). A zero x
/// takes q0, the zero of the quotient's sign (which the corrections may
/// lose). So the result is the division's, bit for bit, everywhere: a
/// softmax's normalization, LayerNorm's division by the deviation. (The
/// pipeline runs the pass once; a second run would rewrite the fallback
/// divisions again.)
void divideByReciprocal(arith::DivFOp div, Value d) {
  OpBuilder b(div);
  Location loc = div.getLoc();
  auto vt = cast<VectorType>(div.getType());
  Type f32 = b.getF32Type();
  Value x = div.getLhs();
  // Ordered comparisons: a NaN divisor or dividend takes the division.
  Value absD = math::AbsFOp::create(b, loc, d);
  Value inRange = withinRange(b, loc, absD, f32, kSmallestRunTimeDivisor,
                              kLargestRunTimeDivisor);
  ScalarDivisor divisor = scalarDivisor(b, loc, d);
  divideUnless(div, inRange, [&](OpBuilder &then) -> Value {
    Quotients q = correctedByScalar(then, loc, x, divisor);
    Value absX = math::AbsFOp::create(then, loc, x);
    Value zero = arith::CmpFOp::create(then, loc, arith::CmpFPredicate::OEQ,
                                       absX, f32Constant(then, loc, vt, 0));
    Value normal =
        withinRange(then, loc, absX, vt, kSmallestDividend, kLargestDividend);
    Value fine = arith::OrIOp::create(then, loc, zero, normal);
    if (vt.getRank() != 1)
      fine = vector::ShapeCastOp::create(
          then, loc, VectorType::get({vt.getNumElements()}, then.getI1Type()),
          fine);
    Value allFine = vector::ReductionOp::create(
        then, loc, vector::CombiningKind::AND, fine);
    Value quotient = arith::SelectOp::create(then, loc, zero, q.q0, q.q2);
    auto checked = scf::IfOp::create(
        then, loc, allFine,
        [&](OpBuilder &fast, Location fl) {
          scf::YieldOp::create(fast, fl, quotient);
        },
        [&](OpBuilder &slow, Location sl) {
          scf::YieldOp::create(
              slow, sl,
              arith::DivFOp::create(slow, sl, x, div.getRhs()).getResult());
        });
    return checked.getResult(0);
  });
}

/// Rewrites a quantization's x / d (every reader rounds and saturates the
/// quotient, roundedAndSaturated), `d` a run-time scalar broadcast to x's
/// vector: for 2^-60 <= |d| <= 2^60 and finite run-time zero points
/// (`addends`), correctedQuotient with no check of x, as for a constant
/// divisor of that range (a quotient outside the normal range rounds to 0
/// or saturates either way; NaN corrections keep q0); otherwise the
/// division. One scalar branch, taken the same way for a whole run, where
/// the general form tests every vector's x as well. DynamicQuantizeLinear's
/// scale, QuantizeLinear's scale input.
void divideForQuantization(arith::DivFOp div, Value d,
                           ArrayRef<Value> addends) {
  OpBuilder b(div);
  Location loc = div.getLoc();
  Type f32 = b.getF32Type();
  Value x = div.getLhs();
  Value inRange = withinRange(b, loc, math::AbsFOp::create(b, loc, d), f32,
                              kSmallestDivisor, kLargestDivisor);
  for (Value zp : addends)
    inRange = arith::AndIOp::create(
        b, loc, inRange,
        withinRange(b, loc, zp, f32, -std::numeric_limits<float>::max(),
                    std::numeric_limits<float>::max()));
  ScalarDivisor divisor = scalarDivisor(b, loc, d);
  divideUnless(div, inRange, [&](OpBuilder &then) {
    return keptQuotient(then, loc, x, correctedByScalar(then, loc, x, divisor));
  });
}

/// Adds `nsz` to a maximumf/minimumf: NaN still propagates, the sign of a
/// zero result is not kept.
template <typename OpTy> void ignoreSignedZeros(OpTy op) {
  op.setFastmath(op.getFastmath() | arith::FastMathFlags::nsz);
}

/// When `op` is a maximumf or minimumf of a value and one f32 constant:
/// the value, the constant, and whether it is a maximum. Not maxnumf or
/// minnumf: those turn a NaN into the bound, a defined result the rewrite
/// below would not keep.
std::optional<std::tuple<Value, float, bool>> clampOf(Operation *op) {
  if (!op || !isa<arith::MaximumFOp, arith::MinimumFOp>(op))
    return std::nullopt;
  bool max = isa<arith::MaximumFOp>(op);
  for (int i = 0; i < 2; ++i)
    if (std::optional<float> c = constantF32(op->getOperand(i)))
      return std::make_tuple(op->getOperand(1 - i), *c, max);
  return std::nullopt;
}

/// Rewrites a quantization's end, `conv(clamp(roundeven(q) + zp, lo, hi))`
/// to an integer of at most 16 bits (`conv` an fptosi or fptoui; lo and hi
/// integral f32 constants within the integer's range), as the low bits of
/// `clamp(q, lo - zp, hi - zp) + M` with M = 1.5 * 2^23: that sum lies in
/// [2^23, 2^24), where floats are the integers, so adding rounds q' =
/// clamp(q, ...) to nearest, ties to the even sum, which is roundeven(q') +
/// M because M is even; its significand field is then 2^22 + roundeven(q'),
/// whose low 8 or 16 bits plus zp are the result (2^22 is a multiple of
/// 2^16). Clamping before rounding changes nothing (lo - zp and hi - zp are
/// integers and rounding is monotonic). A constant even zp joins M (M stays
/// even); an odd one, or a run-time one broadcast to the vector (an f32
/// scalar: DynamicQuantizeLinear's; or an integer of at most 16 bits
/// converted to f32: a QuantizeLinear's zero point input), is an integer
/// add after the bitcast. A following xor with the sign bit (Kiln stores
/// uint8 activations as int8 ^ 0x80) is 2^(N-1) more. A run-time f32 zp
/// takes this form when it is an integer of at most 2^21 (a scalar branch;
/// DynamicQuantizeLinear's is in [0, 255]), else the conversion as it was. Two
/// clamps, an add (and an integer add) and a truncation where the quantization
/// took a vrndscaleps (two uops), an add, two clamps, a conversion and the
/// truncation. A NaN q gives a value where the conversion was poison (maximumf
/// and minimumf pass the NaN on).
void narrowRoundedConversion(Operation *conv) {
  auto intType =
      dyn_cast<IntegerType>(getElementTypeOrSelf(conv->getResult(0)));
  if (!intType || intType.getWidth() > 16 || intType.getWidth() < 2 ||
      !conv->getResult(0).hasOneUse())
    return;
  auto outer = clampOf(conv->getOperand(0).getDefiningOp());
  if (!outer || !std::get<0>(*outer).hasOneUse())
    return;
  Operation *outerOp = conv->getOperand(0).getDefiningOp();
  Operation *innerOp = std::get<0>(*outer).getDefiningOp();
  auto inner = clampOf(innerOp);
  if (!inner || std::get<2>(*inner) == std::get<2>(*outer) ||
      !std::get<0>(*inner).hasOneUse())
    return;
  float lo = std::get<2>(*outer) ? std::get<1>(*outer) : std::get<1>(*inner);
  float hi = std::get<2>(*outer) ? std::get<1>(*inner) : std::get<1>(*outer);
  Value rounded = std::get<0>(*inner);
  float zp = 0.0f;
  Value zpScalar;  // a run-time f32 zero point
  Value zpInteger; // a run-time integer one, converted to f32
  bool zpSigned = false;
  Operation *addOp = nullptr;
  if (auto add = rounded.getDefiningOp<arith::AddFOp>()) {
    addOp = add;
    for (int i = 0; i < 2; ++i) {
      if (std::optional<float> c = constantF32(add->getOperand(i)))
        zp = *c;
      else if (!(zpScalar = broadcastScalar(add->getOperand(i))) &&
               !(zpInteger =
                     broadcastSmallInteger(add->getOperand(i), zpSigned)))
        continue;
      rounded = add->getOperand(1 - i);
      break;
    }
    if (rounded == add.getResult() || !rounded.hasOneUse())
      return;
  }
  auto round = rounded.getDefiningOp<math::RoundEvenOp>();
  if (!round)
    return;
  int64_t width = intType.getWidth();
  bool isSigned = isa<arith::FPToSIOp>(conv);
  double minValue = isSigned ? -std::ldexp(1.0, width - 1) : 0.0;
  double maxValue =
      isSigned ? std::ldexp(1.0, width - 1) - 1 : std::ldexp(1.0, width) - 1;
  constexpr float kLargestZeroPoint = 0x1p21f;
  auto integral = [&](float v) {
    return std::isfinite(v) && std::trunc(v) == v &&
           std::fabs(v) <= kLargestZeroPoint;
  };
  if (!integral(lo) || !integral(hi) || !integral(zp) || lo > hi ||
      lo < minValue || hi > maxValue)
    return;
  Operation *replaced = conv;
  int64_t flipBits = 0;
  if (auto flip = dyn_cast<arith::XOrIOp>(*conv->getUsers().begin())) {
    APInt bits;
    Value other =
        flip.getLhs() == conv->getResult(0) ? flip.getRhs() : flip.getLhs();
    if (matchPattern(other, m_ConstantInt(&bits)) && bits.isSignMask()) {
      replaced = flip;
      flipBits = int64_t(1) << (width - 1);
    }
  }
  bool evenConstant = !zpScalar && !zpInteger && std::fmod(zp, 2.0f) == 0.0f;
  OpBuilder b(replaced);
  Location loc = conv->getLoc();
  Value q = round.getOperand();
  Type type = q.getType();
  Type i32 = b.getI32Type();
  if (auto vt = dyn_cast<VectorType>(type))
    i32 = vt.clone(i32);
  Type f32 = b.getF32Type();
  auto scalarOrSplat = [&](OpBuilder &at, Value scalar) -> Value {
    if (auto vt = dyn_cast<VectorType>(type))
      return vector::BroadcastOp::create(at, loc, vt.clone(scalar.getType()),
                                         scalar);
    return scalar;
  };
  auto fast = [&](OpBuilder &at) -> Value {
    // The clamp's bounds lo - zp and hi - zp, exact (integers under 2^22).
    Value zpF32 = zpScalar;
    if (zpInteger && zpSigned)
      zpF32 = arith::SIToFPOp::create(at, loc, f32, zpInteger);
    else if (zpInteger)
      zpF32 = arith::UIToFPOp::create(at, loc, f32, zpInteger);
    auto bound = [&](float c) -> Value {
      if (!zpF32)
        return f32Constant(at, loc, type, c - zp);
      return scalarOrSplat(
          at,
          arith::SubFOp::create(at, loc, f32Constant(at, loc, f32, c), zpF32));
    };
    auto minOp = arith::MinimumFOp::create(at, loc, q, bound(hi));
    auto maxOp = arith::MaximumFOp::create(at, loc, minOp, bound(lo));
    // A NaN q made the conversion poison, so the clamps may assume none
    // (nnan): against bounds known only at run time LLVM then needs no
    // compare and blend to pass a NaN on, one vminps / vmaxps each.
    minOp.setFastmath(arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
    maxOp.setFastmath(arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
    float bias = 0x1.8p23f;
    if (evenConstant)
      bias += zp + float(flipBits);
    Value sum =
        arith::AddFOp::create(at, loc, maxOp, f32Constant(at, loc, type, bias));
    Value bits = arith::BitcastOp::create(at, loc, i32, sum);
    if (!evenConstant) {
      Value offset;
      if (zpF32)
        offset = arith::AddIOp::create(
            at, loc, arith::FPToSIOp::create(at, loc, at.getI32Type(), zpF32),
            arith::ConstantIntOp::create(at, loc, flipBits, 32));
      else
        offset =
            arith::ConstantIntOp::create(at, loc, int64_t(zp) + flipBits, 32);
      bits = arith::AddIOp::create(at, loc, bits, scalarOrSplat(at, offset));
    }
    return arith::TruncIOp::create(at, loc, replaced->getResult(0).getType(),
                                   bits);
  };
  Value result;
  if (!zpScalar) {
    result = fast(b);
  } else {
    // roundeven(zp) == zp and |zp| <= 2^21, ordered (NaN fails).
    Value whole = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ,
        math::RoundEvenOp::create(b, loc, zpScalar), zpScalar);
    Value small = withinRange(b, loc, zpScalar, f32, -kLargestZeroPoint,
                              kLargestZeroPoint);
    SmallVector<Operation *> chain = {round};
    chain.append({addOp, innerOp, outerOp, conv});
    if (replaced != conv)
      chain.push_back(replaced);
    auto choice = scf::IfOp::create(
        b, loc, arith::AndIOp::create(b, loc, whole, small),
        [&](OpBuilder &then, Location l) {
          scf::YieldOp::create(then, l, fast(then));
        },
        [&](OpBuilder &otherwise, Location l) {
          IRMapping map;
          for (Operation *op : chain)
            otherwise.clone(*op, map);
          scf::YieldOp::create(otherwise, l,
                               map.lookup(replaced->getResult(0)));
        });
    result = choice.getResult(0);
  }
  replaced->getResult(0).replaceAllUsesWith(result);
  // The old chain, last op first, each now unused.
  SmallVector<Operation *> dead;
  if (replaced != conv)
    dead.push_back(replaced);
  dead.append({conv, outerOp, innerOp});
  if (addOp)
    dead.push_back(addOp);
  dead.push_back(round);
  for (Operation *op : dead)
    if (op->use_empty())
      op->erase();
}

struct CheapFloatOpsPass
    : mlir::kiln::impl::CheapFloatOpsPassBase<CheapFloatOpsPass> {
  void runOnOperation() override {
    SmallVector<arith::DivFOp> divisions;
    SmallVector<std::pair<arith::DivFOp, Value>> runTimeDivisions;
    getOperation().walk([&](arith::DivFOp div) {
      if (constantDivisor(div))
        divisions.push_back(div);
      else if (Value d = runTimeDivisor(div))
        runTimeDivisions.push_back({div, d});
    });
    for (auto [div, d] : runTimeDivisions) {
      SmallVector<Value> addends;
      if (roundedAndSaturated(div, &addends))
        divideForQuantization(div, d, addends);
      else
        divideByReciprocal(div, d);
    }
    SmallVector<std::pair<arith::FPToSIOp, math::RoundEvenOp>> conversions;
    getOperation().walk([&](Operation *op) {
      if (auto max = dyn_cast<arith::MaximumFOp>(op))
        ignoreSignedZeros(max);
      if (auto min = dyn_cast<arith::MinimumFOp>(op))
        ignoreSignedZeros(min);
      auto conv = dyn_cast<arith::FPToSIOp>(op);
      if (!conv)
        return;
      auto round = conv.getIn().getDefiningOp<math::RoundEvenOp>();
      if (round && getElementTypeOrSelf(conv.getIn()).isF32() &&
          getElementTypeOrSelf(conv.getType()).isInteger(32) &&
          !(isa<VectorType>(conv.getType()) &&
            cast<VectorType>(conv.getType()).isScalable()))
        conversions.push_back({conv, round});
    });
    // Division by a power of two is a multiply. A quantization's x / scale,
    // rounded to an integer and saturated, is a multiply and an fma where
    // they round alike (a vdivps takes 10 to 20 cycles, as long as a whole
    // int8 product of small K that it requantizes); quotients outside the
    // normal range, where they may not, round to 0 or saturate either way.
    llvm::DenseMap<uint32_t, std::optional<std::pair<float, float>>> known;
    for (arith::DivFOp div : divisions) {
      float d = *constantDivisor(div);
      int exponent;
      bool powerOfTwo = std::fabs(std::frexp(d, &exponent)) == 0.5f;
      if (!powerOfTwo && !roundedAndSaturated(div))
        continue;
      auto [it, inserted] = known.try_emplace(bitsOf(d));
      if (inserted)
        it->second = exactReciprocal(d);
      OpBuilder b(div);
      Location loc = div.getLoc();
      Type type = div.getType();
      Value x = div.getLhs();
      if (!it->second) {
        // No two-constant form rounds as the division: the corrected
        // quotient does, in five operations.
        if (!(std::fabs(d) >= kSmallestDivisor &&
              std::fabs(d) <= kLargestDivisor))
          continue;
        // Within the quantization's range q2 is the division's quotient;
        // a zero x keeps q0 (the zero of the quotient's sign), and where
        // q2 is NaN (x infinite, or an overflow) so does q0. Past the f32
        // range q0 and x / d may differ (an infinity against the largest
        // float), but both saturate against the finite clamps.
        div.replaceAllUsesWith(keptQuotient(
            b, loc, x,
            correctedQuotient(b, loc, x, f32Constant(b, loc, type, 1.0f / d),
                              f32Constant(b, loc, type, -d))));
        div.erase();
        continue;
      }
      auto [hi, lo] = *it->second;
      Value h = f32Constant(b, loc, type, hi);
      Value q = lo == 0.0f ? arith::MulFOp::create(b, loc, x, h).getResult()
                           : math::FmaOp::create(
                                 b, loc, x, h,
                                 arith::MulFOp::create(
                                     b, loc, x, f32Constant(b, loc, type, lo)))
                                 .getResult();
      div.replaceAllUsesWith(q);
      div.erase();
    }
    for (auto [op, round] : conversions) {
      OpBuilder b(op);
      op.replaceAllUsesWith(
          lrintOf(b, op.getLoc(), round.getOperand(), op.getType()));
      op.erase();
      if (round->use_empty())
        round.erase();
    }
    SmallVector<Operation *> narrowConversions;
    getOperation().walk([&](Operation *op) {
      if (isa<arith::FPToSIOp, arith::FPToUIOp>(op) &&
          getElementTypeOrSelf(op->getOperand(0)).isF32())
        narrowConversions.push_back(op);
    });
    for (Operation *op : narrowConversions)
      narrowRoundedConversion(op);
  }
};

} // namespace
