// A chain of 300 elementwise ops fuses into loop nests of at most 128
// operations (127 math ops and the yield), not into one body of 300: LLVM's
// code generation time grows with the square of a basic block's size.
// RUN: %python %S/Inputs/elementwise_chain.py 300 | kiln-opt --pass-pipeline="builtin.module(func.func(kiln-fuse-elementwise))" | FileCheck %s
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
