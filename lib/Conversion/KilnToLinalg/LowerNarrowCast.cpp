//===- LowerNarrowCast.cpp - casts to and from ONNX's narrow types -------===//
//
// The float8 formats, float4 (e2m1) and the 4-bit and 2-bit integers are
// stored a byte each (the format's bits in the low bits, upper bits zero), so
// after KilnToLinalg their tensors are i8 and a cast computes the format with
// integer arithmetic on that byte: LLVM has no such types, and the rules
// (ONNX's Cast tables: round to nearest even, saturate by default, the FNUZ
// formats' single NaN and unsigned zero) are not those of any arith op.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "kiln/Dialect/Kiln/IR/ElementsUtils.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A small float format: exponent and mantissa bits, bias, and how it spells
/// what does not fit.
struct Format {
  unsigned expBits, manBits;
  int bias;
  enum Kind { IEEE, FN, FNUZ, NoSpecials } kind;
  unsigned maxCode; // largest finite magnitude, sign bit clear
};

std::optional<Format> formatOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return Format{4, 3, 7, Format::FN, 0x7e};
  if (isa<Float8E4M3FNUZType>(t))
    return Format{4, 3, 8, Format::FNUZ, 0x7f};
  if (isa<Float8E5M2Type>(t))
    return Format{5, 2, 15, Format::IEEE, 0x7b};
  if (isa<Float8E5M2FNUZType>(t))
    return Format{5, 2, 16, Format::FNUZ, 0x7f};
  if (isa<Float4E2M1FNType>(t))
    return Format{2, 1, 1, Format::NoSpecials, 0x7};
  return std::nullopt;
}

struct Emitter {
  OpBuilder &b;
  Location l;

  Type i32() { return b.getI32Type(); }
  Value c32(int64_t v) {
    return arith::ConstantOp::create(b, l, b.getI32IntegerAttr((int32_t)v));
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, l, b.getF32FloatAttr((float)v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, l, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, l, x, y); }
  Value band(Value x, int64_t m) { return arith::AndIOp::create(b, l, x, c32(m)); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, l, x, y); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, l, x, c32(n)); }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, l, x, c32(n)); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, l, p, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, int64_t y) { return cmp(p, x, c32(y)); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, l, c, x, y);
  }
  Value select(Value c, int64_t x, Value y) { return select(c, c32(x), y); }
  Value bitsOf(Value f) { return arith::BitcastOp::create(b, l, i32(), f); }
  Value floatOf(Value i) {
    return arith::BitcastOp::create(b, l, b.getF32Type(), i);
  }
  /// The stored byte (i8) widened to i32 without its sign.
  Value byteToI32(Value v) { return arith::ExtUIOp::create(b, l, i32(), v); }
  Value i32ToByte(Value v) {
    return arith::TruncIOp::create(b, l, b.getI8Type(), v);
  }

  /// The f32 value of a byte of format `f`.
  Value decode(Value byte, const Format &f) {
    using P = arith::CmpIPredicate;
    unsigned width = f.expBits + f.manBits;
    Value x = band(byteToI32(byte), (1 << (width + 1)) - 1);
    Value sign = shl(shr(x, width), 31);
    Value exp = band(shr(x, f.manBits), (1 << f.expBits) - 1);
    Value man = band(x, (1 << f.manBits) - 1);
    Value normal = bor(shl(add(exp, c32(127 - f.bias)), 23),
                       shl(man, 23 - f.manBits));
    Value subnormal = bitsOf(arith::MulFOp::create(
        b, l, arith::UIToFPOp::create(b, l, b.getF32Type(), man),
        f32(std::ldexp(1.0, 1 - f.bias - (int)f.manBits))));
    Value bits = bor(select(cmp(P::eq, exp, 0), subnormal, normal), sign);
    Value nanBits = c32(0x7fc00000);
    switch (f.kind) {
    case Format::FN:
      bits = select(cmp(P::eq, band(x, 0x7f), 0x7f), nanBits, bits);
      break;
    case Format::FNUZ:
      bits = select(cmp(P::eq, x, 0x80), nanBits, bits);
      break;
    case Format::IEEE: {
      Value top = cmp(P::eq, exp, (1 << f.expBits) - 1);
      Value inf = bor(c32(0x7f800000), sign);
      Value special = select(cmp(P::eq, man, 0), inf, nanBits);
      bits = select(top, special, bits);
      break;
    }
    case Format::NoSpecials:
      break;
    }
    return floatOf(bits);
  }

  /// The byte of format `f` nearest to the f32 `v` (ties to even), with
  /// ONNX's saturation rules.
  Value encode(Value v, const Format &f, bool saturate) {
    using P = arith::CmpIPredicate;
    unsigned width = f.expBits + f.manBits;
    Value bits = bitsOf(v);
    Value sign = shr(bits, 31);
    Value abs = band(bits, 0x7fffffff);
    Value absF = floatOf(abs);
    Value isNan = cmp(P::ugt, abs, 0x7f800000);
    // Normal results: round the f32 bits to the format's mantissa (a carry
    // into the exponent is the next binade), then rebias.
    unsigned shift = 23 - f.manBits;
    Value lsb = band(shr(abs, shift), 1);
    Value rounded =
        shr(add(add(abs, c32((1 << (shift - 1)) - 1)), lsb), shift);
    Value normal = sub(rounded, c32((127 - f.bias) << f.manBits));
    // Subnormal results: a multiple of the smallest subnormal, rounded to
    // nearest even in f32 (the scaling by a power of two is exact).
    float minNormal = std::ldexp(1.0f, 1 - f.bias);
    Value small = arith::MinimumFOp::create(b, l, absF, f32(minNormal));
    Value scaled = arith::MulFOp::create(
        b, l, small, f32(std::ldexp(1.0, (int)f.manBits - 1 + f.bias)));
    Value subnormal = arith::FPToUIOp::create(
        b, l, i32(), math::RoundEvenOp::create(b, l, scaled));
    Value isSmall = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT,
                                          absF, f32(minNormal));
    Value code = select(isSmall, subnormal, normal);
    Value overflow = cmp(P::sgt, code, f.maxCode);
    int64_t tooBig = f.maxCode;
    if (!saturate && f.kind == Format::FN)
      tooBig = 0x7f;
    else if (!saturate && f.kind == Format::IEEE)
      tooBig = 0x7c;
    code = select(overflow, tooBig, code);
    Value result = bor(shl(sign, width), code);
    switch (f.kind) {
    case Format::FN:
    case Format::IEEE:
      result = select(isNan, bor(shl(sign, width), c32(0x7f)), result);
      break;
    case Format::FNUZ: {
      // One NaN (0x80), which also takes overflow without saturation, and
      // no negative zero.
      result = select(cmp(P::eq, code, 0), 0, result);
      Value nan = isNan;
      if (!saturate)
        nan = arith::OrIOp::create(b, l, nan, overflow);
      result = select(nan, 0x80, result);
      break;
    }
    case Format::NoSpecials:
      // e2m1 has no NaN: ONNX's reference gives the sign bit alone (-0).
      result = select(isNan, 0x8, result);
      break;
    }
    return i32ToByte(result);
  }

  /// f8E8M0 (2^(e - 127), 0xff NaN): the f32 value of a byte.
  Value decodeE8M0(Value byte) {
    using P = arith::CmpIPredicate;
    Value e = byteToI32(byte);
    Value bits = select(cmp(P::eq, e, 0), 0x00400000, shl(e, 23));
    return floatOf(select(cmp(P::eq, e, 0xff), 0x7fc00000, bits));
  }

  /// The f8E8M0 byte of the f32 `v` (its magnitude; ONNX leaves negative
  /// values undefined), rounded as `mode` says.
  Value encodeE8M0(Value v, StringRef mode, bool saturate) {
    using P = arith::CmpIPredicate;
    Value abs = band(bitsOf(v), 0x7fffffff);
    Value exp = shr(abs, 23), man = band(abs, 0x7fffff);
    Value up;
    if (mode == "down")
      up = cmp(P::ne, c32(0), c32(0)); // never
    else if (mode == "nearest")
      up = cmp(P::uge, man, 0x400000);
    else
      up = cmp(P::ne, man, 0);
    // f32 subnormals are below 2^-126: 2^-127 (code 0) or, rounding up past
    // it, 2^-126.
    Value subUp = mode == "up"        ? cmp(P::ugt, man, 0x400000)
                  : mode == "nearest" ? cmp(P::uge, man, 0x600000)
                                      : up;
    Value isSub = cmp(P::eq, exp, 0);
    Value code = select(isSub, arith::ExtUIOp::create(b, l, i32(), subUp),
                        add(exp, arith::ExtUIOp::create(b, l, i32(), up)));
    Value isNan = cmp(P::ugt, abs, 0x7f800000);
    Value overflow = cmp(P::sgt, code, 0xfe);
    code = select(overflow, saturate ? 0xfe : 0xff, code);
    if (!saturate)
      code = select(cmp(P::ult, abs, 0x00400000), 0xff, code);
    return i32ToByte(select(isNan, 0xff, code));
  }
};
} // namespace

Value mlir::kiln::narrowCastScalar(OpBuilder &b, Location l, Value x,
                                   Type from, Type to, bool saturate,
                                   StringRef roundMode) {
  Emitter e{b, l};
  Type f32 = b.getF32Type();
  // First the value in a type arith knows: f32 for the floats, i8 (sign- or
  // zero-extended) for the small integers.
  Value v = x;
  bool vUnsigned = from.isUnsignedInteger();
  if (std::optional<Format> f = formatOf(from)) {
    v = e.decode(x, *f);
  } else if (isa<Float8E8M0FNUType>(from)) {
    v = e.decodeE8M0(x);
  } else if (auto fromInt = dyn_cast<IntegerType>(from);
             fromInt && isNarrowType(from)) {
    unsigned w = fromInt.getWidth();
    // Shift the value to the top of the byte and back: arithmetic for the
    // signed types, logical for the unsigned ones.
    Value up = arith::ShLIOp::create(
        b, l, x, arith::ConstantOp::create(b, l, b.getI8IntegerAttr(8 - w)));
    Value n = arith::ConstantOp::create(b, l, b.getI8IntegerAttr(8 - w));
    v = vUnsigned ? Value(arith::ShRUIOp::create(b, l, up, n))
                  : Value(arith::ShRSIOp::create(b, l, up, n));
  }
  if (!isNarrowType(to))
    return castScalar(b, l, v, signlessType(to), vUnsigned,
                      to.isUnsignedInteger());
  if (auto toInt = dyn_cast<IntegerType>(to)) {
    // Like any integer conversion, keeping the low bits.
    Value wide = castScalar(b, l, v, b.getI32Type(), vUnsigned, false);
    Value low = e.band(wide, (1 << toInt.getWidth()) - 1);
    return e.i32ToByte(low);
  }
  Value vf = castScalar(b, l, v, f32, vUnsigned, false);
  if (isa<Float8E8M0FNUType>(to))
    return e.encodeE8M0(vf, roundMode, saturate);
  std::optional<Format> f = formatOf(to);
  assert(f && "isNarrowType and formatOf disagree");
  return e.encode(vf, *f, saturate);
}
