// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-cpu-cheap-float-ops))" | FileCheck %s

// Round to nearest even, then convert: one lrint (vcvtps2dq on x86); a 2-D
// vector row by row.
// CHECK-LABEL: func.func @vec
// CHECK-NOT: math.roundeven
// CHECK: %[[R:.+]] = llvm.intr.lrint(%arg0) : (vector<16xf32>) -> vector<16xi32>
// CHECK: return %[[R]]
func.func @vec(%x: vector<16xf32>) -> vector<16xi32> {
  %r = math.roundeven %x : vector<16xf32>
  %i = arith.fptosi %r : vector<16xf32> to vector<16xi32>
  return %i : vector<16xi32>
}

// CHECK-LABEL: func.func @rows
// CHECK: %[[A:.+]] = vector.extract %arg0[0] : vector<8xf32> from vector<2x8xf32>
// CHECK: %[[LA:.+]] = llvm.intr.lrint(%[[A]]) : (vector<8xf32>) -> vector<8xi32>
// CHECK: %[[I0:.+]] = vector.insert %[[LA]], %{{.+}} [0] : vector<8xi32> into vector<2x8xi32>
// CHECK: %[[B:.+]] = vector.extract %arg0[1] : vector<8xf32> from vector<2x8xf32>
// CHECK: %[[LB:.+]] = llvm.intr.lrint(%[[B]]) : (vector<8xf32>) -> vector<8xi32>
// CHECK: %[[I1:.+]] = vector.insert %[[LB]], %[[I0]] [1] : vector<8xi32> into vector<2x8xi32>
// CHECK: return %[[I1]]
func.func @rows(%x: vector<2x8xf32>) -> vector<2x8xi32> {
  %r = math.roundeven %x : vector<2x8xf32>
  %i = arith.fptosi %r : vector<2x8xf32> to vector<2x8xi32>
  return %i : vector<2x8xi32>
}

// The rounding has another user: it stays for that one.
// CHECK-LABEL: func.func @shared
// CHECK: %[[R:.+]] = math.roundeven %arg0
// CHECK: %[[L:.+]] = llvm.intr.lrint(%arg0) : (f32) -> i32
// CHECK: return %[[L]], %[[R]]
func.func @shared(%x: f32) -> (i32, f32) {
  %r = math.roundeven %x : f32
  %i = arith.fptosi %r : f32 to i32
  return %i, %r : i32, f32
}

// A truncation toward zero alone, or a conversion to another width, is
// left as it is.
// CHECK-LABEL: func.func @others
// CHECK: arith.fptosi %arg0 : vector<16xf32> to vector<16xi32>
// CHECK: math.roundeven
// CHECK: arith.fptosi %{{.+}} : vector<16xf32> to vector<16xi64>
// CHECK-NOT: lrint
func.func @others(%x: vector<16xf32>) -> (vector<16xi32>, vector<16xi64>) {
  %t = arith.fptosi %x : vector<16xf32> to vector<16xi32>
  %r = math.roundeven %x : vector<16xf32>
  %w = arith.fptosi %r : vector<16xf32> to vector<16xi64>
  return %t, %w : vector<16xi32>, vector<16xi64>
}

// Every maximum and minimum ignores the sign of a zero result: clamps
// against constants become one vmaxps or vminps each, a maximum of two
// run-time values (max pooling) three instructions instead of six.
// CHECK-LABEL: func.func @clamps
// CHECK: arith.maximumf %arg0, %{{.+}} fastmath<nsz> : vector<16xf32>
// CHECK: arith.minimumf %{{.+}}, %{{.+}} fastmath<nsz> : vector<16xf32>
// CHECK: arith.maximumf %{{.+}}, %{{.+}} fastmath<nsz> : f32
// CHECK: arith.maximumf %arg0, %arg2 fastmath<nsz> : vector<16xf32>
// CHECK: arith.minimumf %arg0, %{{.+}} fastmath<nsz> : vector<16xf32>
func.func @clamps(%x: vector<16xf32>, %s: f32, %y: vector<16xf32>) -> (vector<16xf32>, f32, vector<16xf32>, vector<16xf32>) {
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %six = arith.constant dense<6.0> : vector<16xf32>
  %one = arith.constant 1.0 : f32
  %nan = arith.constant dense<0x7FC00000> : vector<16xf32>
  %0 = arith.maximumf %x, %zero : vector<16xf32>
  %1 = arith.minimumf %0, %six : vector<16xf32>
  %2 = arith.maximumf %one, %s : f32
  %3 = arith.maximumf %x, %y : vector<16xf32>
  %4 = arith.minimumf %x, %nan : vector<16xf32>
  return %1, %2, %3, %4 : vector<16xf32>, f32, vector<16xf32>, vector<16xf32>
}

// A quantization's x / scale, rounded and saturated: x * hi + x * lo (hi
// near 1 / 0.02, lo the rest) in a multiply and an fma, which round as the
// division does for every x (checked over all 2^23 significands at compile
// time). The zero point may come between the rounding and the clamps.
// CHECK-LABEL: func.func @quantize
// CHECK-NOT: arith.divf
// CHECK-DAG: %[[HI:.+]] = arith.constant dense<5.000000e+01> : vector<16xf32>
// CHECK-DAG: %[[LO:.+]] = arith.constant dense<1.11758709E-6> : vector<16xf32>
// CHECK: %[[XLO:.+]] = arith.mulf %arg0, %[[LO]] : vector<16xf32>
// CHECK: %[[Q:.+]] = math.fma %arg0, %[[HI]], %[[XLO]] : vector<16xf32>
// CHECK: math.roundeven %[[Q]]
func.func @quantize(%x: vector<16xf32>) -> vector<16xi32> {
  %s = arith.constant dense<0.02> : vector<16xf32>
  %zp = arith.constant dense<128.0> : vector<16xf32>
  %lo = arith.constant dense<0.0> : vector<16xf32>
  %hi = arith.constant dense<255.0> : vector<16xf32>
  %d = arith.divf %x, %s : vector<16xf32>
  %r = math.roundeven %d : vector<16xf32>
  %a = arith.addf %r, %zp : vector<16xf32>
  %c = arith.maximumf %a, %lo : vector<16xf32>
  %c2 = arith.minimumf %c, %hi : vector<16xf32>
  %i = arith.fptosi %c2 : vector<16xf32> to vector<16xi32>
  return %i : vector<16xi32>
}

// A power of two is a multiply by its exact reciprocal (lo is 0), whatever
// reads it. 0.7 has no such pair (some x / 0.7 rounds the other way): it
// takes the reciprocal with two fma corrections, which rounds as the
// division does; a zero x, or one whose corrections are NaN (infinite,
// overflowing), keeps x * (1/d). A quotient rounded but clamped from one side only or not
// at all (past the f32 range the two may differ), and one read before
// rounding, stay divisions.
// CHECK-LABEL: func.func @kept
// CHECK-DAG: %[[FOUR:.+]] = arith.constant 4.000000e+00 : f32
// CHECK-DAG: arith.mulf %arg0, %[[FOUR]] : f32
// CHECK-DAG: %[[R:.+]] = arith.constant 1.42857146 : f32
// CHECK-DAG: %[[NEGD:.+]] = arith.constant -0.699999988 : f32
// CHECK: %[[Q0:.+]] = arith.mulf %arg0, %[[R]] : f32
// CHECK: %[[E0:.+]] = math.fma %[[Q0]], %[[NEGD]], %arg0 : f32
// CHECK: %[[Q1:.+]] = math.fma %[[E0]], %[[R]], %[[Q0]] : f32
// CHECK: %[[E1:.+]] = math.fma %[[Q1]], %[[NEGD]], %arg0 : f32
// CHECK: %[[Q2:.+]] = math.fma %[[E1]], %[[R]], %[[Q1]] : f32
// CHECK: %[[ZERO:.+]] = arith.cmpf oeq, %arg0, %{{.+}} : f32
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[Q2]], %[[Q2]] : f32
// CHECK: %[[KEEP:.+]] = arith.ori %[[NAN]], %[[ZERO]] : i1
// CHECK: %[[Q:.+]] = arith.select %[[KEEP]], %[[Q0]], %[[Q2]] : f32
// CHECK: math.roundeven %[[Q]]
// CHECK-NOT: math.fma
// CHECK: arith.divf %arg0, %{{.+}} : f32
// CHECK: arith.divf %arg0, %{{.+}} : f32
// CHECK: arith.divf %arg0, %{{.+}} : f32
func.func @kept(%x: f32) -> (f32, f32, f32, f32, f32) {
  %quarter = arith.constant 0.25 : f32
  %s = arith.constant 0.7 : f32
  %t = arith.constant 0.02 : f32
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %0 = arith.divf %x, %quarter : f32
  %3 = arith.divf %x, %s : f32
  %4 = math.roundeven %3 : f32
  %5 = arith.maximumf %4, %lo : f32
  %6 = arith.minimumf %5, %hi : f32
  %7 = arith.divf %x, %t : f32
  %8 = math.roundeven %7 : f32
  %9 = arith.maximumf %8, %lo : f32
  %10 = arith.divf %x, %t : f32
  %11 = math.roundeven %10 : f32
  %12 = arith.divf %x, %t : f32
  %13 = arith.maximumf %12, %lo : f32
  %14 = arith.minimumf %13, %hi : f32
  return %0, %6, %9, %11, %14 : f32, f32, f32, f32, f32
}

// A clamp against an infinity bounds nothing: 0.7's quotient, rounded and
// "clamped" to [-inf, 127], keeps its division (past the f32 range x * (1/d)
// and x / d may differ, and nothing would saturate them).
// CHECK-LABEL: func.func @kept_infinite_bound
// CHECK-NOT: math.fma
// CHECK: arith.divf %arg0, %{{.+}} : f32
func.func @kept_infinite_bound(%x: f32) -> f32 {
  %s = arith.constant 0.7 : f32
  %lo = arith.constant 0xFF800000 : f32
  %hi = arith.constant 127.0 : f32
  %0 = arith.divf %x, %s : f32
  %1 = math.roundeven %0 : f32
  %2 = arith.maximumf %1, %lo : f32
  %3 = arith.minimumf %2, %hi : f32
  return %3 : f32
}

// A scale a hostile model sets to 0 (or a subnormal, whose reciprocal
// overflows) has no reciprocal pair: the division stays, rounding and
// clamping what x / 0 gives.
// CHECK-LABEL: func.func @zero_scale
// CHECK: arith.divf %arg0, %{{.+}} : f32
// CHECK: arith.divf %arg0, %{{.+}} : f32
func.func @zero_scale(%x: f32) -> (f32, f32) {
  %zero = arith.constant 0.0 : f32
  %tiny = arith.constant 1.0e-40 : f32
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %0 = arith.divf %x, %zero : f32
  %1 = math.roundeven %0 : f32
  %2 = arith.maximumf %1, %lo : f32
  %3 = arith.minimumf %2, %hi : f32
  %4 = arith.divf %x, %tiny : f32
  %5 = math.roundeven %4 : f32
  %6 = arith.maximumf %5, %lo : f32
  %7 = arith.minimumf %6, %hi : f32
  return %3, %7 : f32, f32
}

// A divisor known only at run time, broadcast to the vector (a quantization's
// scale, a softmax's sum): the scalar reciprocal before the branch, the
// multiply with two fma corrections, and the vector division only for a
// divisor outside [2^-20, 2^20] or a vector with an x neither 0 nor within
// [2^-100, 2^100]. A zero x takes x * r (the zero of the quotient's sign).
// CHECK-LABEL: func.func @run_time_scale
// CHECK: %[[ABS:.+]] = math.absf %arg1 : f32
// CHECK-DAG: %[[LE:.+]] = arith.cmpf ole, %[[ABS]], %{{.+}} : f32
// CHECK-DAG: %[[GE:.+]] = arith.cmpf oge, %[[ABS]], %{{.+}} : f32
// CHECK: %[[IN:.+]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK: %[[R:.+]] = arith.divf %{{.+}}, %arg1 : f32
// CHECK: %[[NEG:.+]] = arith.negf %arg1 : f32
// CHECK: %[[Q:.+]] = scf.if %[[IN]] -> (vector<2x16xf32>) {
// CHECK:   %[[Q0:.+]] = arith.mulf %arg0, %{{.+}} : vector<2x16xf32>
// CHECK-COUNT-3: math.fma
// CHECK:   %[[Q2:.+]] = math.fma
// CHECK:   %[[AX:.+]] = math.absf %arg0 : vector<2x16xf32>
// CHECK:   %[[ZERO:.+]] = arith.cmpf oeq, %[[AX]]
// CHECK:   %[[FINE:.+]] = arith.ori %[[ZERO]], %{{.+}} : vector<2x16xi1>
// CHECK:   %[[FLAT:.+]] = vector.shape_cast %[[FINE]] : vector<2x16xi1> to vector<32xi1>
// CHECK:   %[[ALL:.+]] = vector.reduction <and>, %[[FLAT]] : vector<32xi1> into i1
// CHECK:   %[[SEL:.+]] = arith.select %[[ZERO]], %[[Q0]], %[[Q2]]
// CHECK:   scf.if %[[ALL]] -> (vector<2x16xf32>) {
// CHECK:     scf.yield %[[SEL]]
// CHECK:   } else {
// CHECK:     arith.divf %arg0, %{{.+}} : vector<2x16xf32>
// CHECK: } else {
// CHECK:   arith.divf %arg0, %{{.+}} : vector<2x16xf32>
// CHECK: }
// CHECK: math.roundeven %[[Q]]
func.func @run_time_scale(%x: vector<2x16xf32>, %s: f32, %zp: vector<2x16xf32>) -> vector<2x16xf32> {
  %lo = arith.constant dense<0.0> : vector<2x16xf32>
  %hi = arith.constant dense<255.0> : vector<2x16xf32>
  %b = vector.broadcast %s : f32 to vector<2x16xf32>
  %d = arith.divf %x, %b : vector<2x16xf32>
  %r = math.roundeven %d : vector<2x16xf32>
  %a = arith.addf %r, %zp : vector<2x16xf32>
  %c = arith.maximumf %a, %lo : vector<2x16xf32>
  %c2 = arith.minimumf %c, %hi : vector<2x16xf32>
  return %c2 : vector<2x16xf32>
}

// The same whatever reads the quotient (it is the division's bit for bit).
// A scalar division stays.
// CHECK-LABEL: func.func @run_time_any_reader
// CHECK: scf.if
// CHECK: arith.mulf %arg0
// CHECK: scf.if
// CHECK: arith.mulf %arg2
// CHECK: %[[C:.+]] = arith.divf %arg3, %arg1 : f32
// CHECK: return %{{.+}}, %{{.+}}, %[[C]]
func.func @run_time_any_reader(%x: vector<16xf32>, %s: f32, %y: vector<16xf32>, %z: f32) -> (vector<16xf32>, vector<16xf32>, f32) {
  %b = vector.broadcast %s : f32 to vector<16xf32>
  %d = arith.divf %x, %b : vector<16xf32>
  %e = arith.divf %y, %b : vector<16xf32>
  %f = arith.divf %z, %s : f32
  return %d, %e, %f : vector<16xf32>, vector<16xf32>, f32
}

// A quantization's end: round, add an even zero point, clamp within the
// integer's range, convert to 8 bits, and flip the sign bit (uint8 stored as
// int8 ^ 0x80). The clamp moves before the rounding (by the zero point), and
// adding 1.5 * 2^23 + zp + 128 rounds to an integer whose low byte is the
// result: two clamps, an add and a truncation. The clamps may assume no NaN
// (nnan): a NaN q made the conversion poison.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: math.roundeven
// CHECK: %[[HI:.+]] = arith.constant dense<2.550000e+02> : vector<16xf32>
// CHECK: %[[MIN:.+]] = arith.minimumf %arg0, %[[HI]] fastmath<nnan,nsz>
// CHECK: %[[LO:.+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: %[[MAX:.+]] = arith.maximumf %[[MIN]], %[[LO]] fastmath<nnan,nsz>
// CHECK: %[[BIAS:.+]] = arith.constant dense<0x4B400000> : vector<16xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[MAX]], %[[BIAS]] : vector<16xf32>
// CHECK: %[[BITS:.+]] = arith.bitcast %[[SUM]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[Y:.+]] = arith.trunci %[[BITS]] : vector<16xi32> to vector<16xi8>
// CHECK-NOT: arith.xori
// CHECK: return %[[Y]]
func.func @narrow(%x: vector<16xf32>) -> vector<16xi8> {
  %zp = arith.constant dense<-128.0> : vector<16xf32>
  %lo = arith.constant dense<-128.0> : vector<16xf32>
  %hi = arith.constant dense<127.0> : vector<16xf32>
  %flip = arith.constant dense<-128> : vector<16xi8>
  %r = math.roundeven %x : vector<16xf32>
  %a = arith.addf %r, %zp : vector<16xf32>
  %c = arith.maximumf %a, %lo : vector<16xf32>
  %c2 = arith.minimumf %c, %hi : vector<16xf32>
  %i = arith.fptosi %c2 : vector<16xf32> to vector<16xi8>
  %y = arith.xori %i, %flip : vector<16xi8>
  return %y : vector<16xi8>
}

// Unsigned, no zero point, the clamps the other way round, no flip: the
// bias is 1.5 * 2^23 alone.
// CHECK-LABEL: func.func @narrow_unsigned
// CHECK: arith.minimumf %arg0, %{{.+}} fastmath<nnan,nsz> : vector<16xf32>
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = arith.addf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: arith.trunci %{{.+}} : vector<16xi32> to vector<16xi8>
func.func @narrow_unsigned(%x: vector<16xf32>) -> vector<16xi8> {
  %lo = arith.constant dense<0.0> : vector<16xf32>
  %hi = arith.constant dense<255.0> : vector<16xf32>
  %r = math.roundeven %x : vector<16xf32>
  %c = arith.minimumf %r, %hi : vector<16xf32>
  %c2 = arith.maximumf %c, %lo : vector<16xf32>
  %i = arith.fptoui %c2 : vector<16xf32> to vector<16xi8>
  return %i : vector<16xi8>
}

// Kept: a clamp beyond the integer's range, a clamp from one side only, a
// rounded value read twice, and clamps by maxnumf / minnumf (which turn a
// NaN into the bound, a defined result the add would not give).
// CHECK-LABEL: func.func @narrow_kept
// CHECK-COUNT-4: math.roundeven
// CHECK-NOT: arith.bitcast
func.func @narrow_kept(%x: vector<16xf32>) -> (vector<16xi8>, vector<16xi8>, vector<16xi8>, vector<16xf32>, vector<16xi8>) {
  %lo = arith.constant dense<-128.0> : vector<16xf32>
  %hi = arith.constant dense<127.0> : vector<16xf32>
  %wide = arith.constant dense<300.0> : vector<16xf32>
  %r1 = math.roundeven %x : vector<16xf32>
  %c1 = arith.maximumf %r1, %lo : vector<16xf32>
  %d1 = arith.minimumf %c1, %wide : vector<16xf32>
  %i1 = arith.fptosi %d1 : vector<16xf32> to vector<16xi8>
  %r2 = math.roundeven %x : vector<16xf32>
  %d2 = arith.minimumf %r2, %hi : vector<16xf32>
  %i2 = arith.fptosi %d2 : vector<16xf32> to vector<16xi8>
  %r3 = math.roundeven %x : vector<16xf32>
  %c3 = arith.maximumf %r3, %lo : vector<16xf32>
  %d3 = arith.minimumf %c3, %hi : vector<16xf32>
  %i3 = arith.fptosi %d3 : vector<16xf32> to vector<16xi8>
  %r4 = math.roundeven %x : vector<16xf32>
  %c4 = arith.maxnumf %r4, %lo : vector<16xf32>
  %d4 = arith.minnumf %c4, %hi : vector<16xf32>
  %i4 = arith.fptosi %d4 : vector<16xf32> to vector<16xi8>
  return %i1, %i2, %i3, %r3, %i4 : vector<16xi8>, vector<16xi8>, vector<16xi8>, vector<16xf32>, vector<16xi8>
}

// An odd zero point would round ties by the parity of the sum if it joined
// the float bias: it is an integer add after the bitcast instead.
// CHECK-LABEL: func.func @narrow_odd
// CHECK-NOT: math.roundeven
// CHECK: arith.minimumf %arg0, %{{.+}} fastmath<nnan,nsz>
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = arith.addf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: %[[BITS:.+]] = arith.bitcast %[[SUM]]
// CHECK: %[[ZP:.+]] = arith.constant 3 : i32
// CHECK: %[[SPLAT:.+]] = vector.broadcast %[[ZP]] : i32 to vector<16xi32>
// CHECK: %[[ADD:.+]] = arith.addi %[[BITS]], %[[SPLAT]]
// CHECK: arith.trunci %[[ADD]] : vector<16xi32> to vector<16xi8>
func.func @narrow_odd(%x: vector<16xf32>) -> vector<16xi8> {
  %odd = arith.constant dense<3.0> : vector<16xf32>
  %lo = arith.constant dense<-128.0> : vector<16xf32>
  %hi = arith.constant dense<127.0> : vector<16xf32>
  %r0 = math.roundeven %x : vector<16xf32>
  %a0 = arith.addf %r0, %odd : vector<16xf32>
  %c0 = arith.maximumf %a0, %lo : vector<16xf32>
  %d0 = arith.minimumf %c0, %hi : vector<16xf32>
  %i0 = arith.fptosi %d0 : vector<16xf32> to vector<16xi8>
  return %i0 : vector<16xi8>
}

// DynamicQuantizeLinear's quantization: a run-time scale and a run-time
// zero point. The division checks only the scale (2^-60 <= |s| <= 2^60) and
// that the zero point is finite, one branch for the whole run, and keeps q0
// where x is zero or q2 is NaN; no test of x per vector. The end clamps by
// the bounds less the zero point and adds zp + 128 as an integer when zp is
// an integer of at most 2^21, and converts as before otherwise.
// CHECK-LABEL: func.func @run_time_quantization
// CHECK: %[[ABS:.+]] = math.absf %arg1 : f32
// CHECK: %[[IN:.+]] = arith.andi
// CHECK: %[[FIN:.+]] = arith.andi
// CHECK: %[[OK:.+]] = arith.andi %[[IN]], %[[FIN]] : i1
// CHECK: %[[R:.+]] = arith.divf %{{.+}}, %arg1 : f32
// CHECK: %[[Q:.+]] = scf.if %[[OK]] -> (vector<16xf32>) {
// CHECK:   %[[Q0:.+]] = arith.mulf %arg0
// CHECK-COUNT-4: math.fma
// CHECK:   %[[ZERO:.+]] = arith.cmpf oeq, %arg0
// CHECK:   %[[NAN:.+]] = arith.cmpf uno
// CHECK:   %[[KEEP:.+]] = arith.ori %[[NAN]], %[[ZERO]]
// CHECK:   %[[SEL:.+]] = arith.select %[[KEEP]], %[[Q0]]
// CHECK:   scf.yield %[[SEL]]
// CHECK: } else {
// CHECK:   arith.divf %arg0
// CHECK: }
// CHECK-NOT: vector.reduction
// CHECK: %[[RZ:.+]] = math.roundeven %arg2 : f32
// CHECK: %[[WHOLE:.+]] = arith.cmpf oeq, %[[RZ]], %arg2 : f32
// CHECK: %[[INT:.+]] = scf.if %{{.+}} -> (vector<16xi8>) {
// CHECK:   arith.subf %{{.+}}, %arg2 : f32
// CHECK:   arith.minimumf %[[Q]], %{{.+}} fastmath<nnan,nsz>
// CHECK:   arith.maximumf
// CHECK:   %[[BITS:.+]] = arith.bitcast
// CHECK:   %[[ZI:.+]] = arith.fptosi %arg2 : f32 to i32
// CHECK:   %[[OFF:.+]] = arith.addi %[[ZI]], %{{.+}} : i32
// CHECK:   %[[SPLAT:.+]] = vector.broadcast %[[OFF]] : i32 to vector<16xi32>
// CHECK:   %[[SUM:.+]] = arith.addi %[[BITS]], %[[SPLAT]]
// CHECK:   %[[T:.+]] = arith.trunci %[[SUM]] : vector<16xi32> to vector<16xi8>
// CHECK:   scf.yield %[[T]]
// CHECK: } else {
// CHECK:   math.roundeven %[[Q]]
// CHECK:   arith.fptoui
// CHECK:   arith.xori
// CHECK: }
// CHECK: return %[[INT]]
func.func @run_time_quantization(%x: vector<16xf32>, %s: f32, %zp: f32) -> vector<16xi8> {
  %lo = arith.constant dense<0.0> : vector<16xf32>
  %hi = arith.constant dense<255.0> : vector<16xf32>
  %flip = arith.constant dense<-128> : vector<16xi8>
  %b = vector.broadcast %s : f32 to vector<16xf32>
  %z = vector.broadcast %zp : f32 to vector<16xf32>
  %d = arith.divf %x, %b : vector<16xf32>
  %r = math.roundeven %d : vector<16xf32>
  %a = arith.addf %r, %z : vector<16xf32>
  %c = arith.maximumf %a, %lo : vector<16xf32>
  %c2 = arith.minimumf %c, %hi : vector<16xf32>
  %i = arith.fptoui %c2 : vector<16xf32> to vector<16xi8>
  %y = arith.xori %i, %flip : vector<16xi8>
  return %y : vector<16xi8>
}

// A QuantizeLinear whose zero point is an input: an integer broadcast and
// converted to f32, an integer and finite whatever its value, so neither
// the division nor the end checks it at run time.
// CHECK-LABEL: func.func @run_time_integer_zero_point
// CHECK: %[[IN:.+]] = arith.andi
// CHECK: scf.if %[[IN]] -> (vector<16xf32>)
// CHECK: %[[ZF:.+]] = arith.sitofp %arg2 : i8 to f32
// CHECK-NOT: scf.if
// CHECK: arith.subf %{{.+}}, %[[ZF]] : f32
// CHECK: %[[ZI:.+]] = arith.fptosi %[[ZF]] : f32 to i32
// CHECK: arith.addi %[[ZI]]
// CHECK: arith.trunci
func.func @run_time_integer_zero_point(%x: vector<16xf32>, %s: f32, %zp: i8) -> vector<16xi8> {
  %lo = arith.constant dense<-128.0> : vector<16xf32>
  %hi = arith.constant dense<127.0> : vector<16xf32>
  %b = vector.broadcast %s : f32 to vector<16xf32>
  %zi = vector.broadcast %zp : i8 to vector<16xi8>
  %z = arith.sitofp %zi : vector<16xi8> to vector<16xf32>
  %d = arith.divf %x, %b : vector<16xf32>
  %r = math.roundeven %d : vector<16xf32>
  %a = arith.addf %r, %z : vector<16xf32>
  %c = arith.maximumf %a, %lo : vector<16xf32>
  %c2 = arith.minimumf %c, %hi : vector<16xf32>
  %i = arith.fptosi %c2 : vector<16xf32> to vector<16xi8>
  return %i : vector<16xi8>
}
