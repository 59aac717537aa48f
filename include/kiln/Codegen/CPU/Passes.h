//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
#ifndef KILN_CODEGEN_CPU_PASSES_H
#define KILN_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "kiln/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Codegen/CPU/Passes.h.inc"

/// Arena size in bytes, set by the arena pass on each function and (the
/// largest) on the module.
inline constexpr const char *kArenaBytesAttr = "kiln.arena_bytes";
/// The lower bound of the arena size (largest live sum), per function.
inline constexpr const char *kArenaLowerBoundAttr = "kiln.arena_lower_bound";
/// Per function: one dictionary per buffer {size, offset, first, last,
/// producer, type}, in allocation order.
inline constexpr const char *kMemoryPlanAttr = "kiln.memory_plan";
/// On the module when a kiln.guard survived to code generation: the message
/// of each guard, indexed by (status word - 1). The status word is an i32 at
/// offset 0 of the arena, in a reserved block of kGuardStatusBytes.
inline constexpr const char *kGuardMessagesAttr = "kiln.guard_messages";
inline constexpr int64_t kGuardStatusBytes = 64;
/// On a linalg.fill: array<i64: offsets..., sizes...> of the box that is
/// overwritten before it is read; --kiln-cpu-fill-borders fills the rest.
inline constexpr const char *kFillBorderAttr = "kiln.fill_border";
/// On a loop (scf.forall or scf.for) that writes every element of the one
/// tensor it carries and never reads what that tensor held: the kernels of
/// --kiln-cpu-vnni-matmul. --kiln-cpu-tile-and-vectorize may then start it
/// from a slice of another tensor (a padded interior, a concatenation's
/// part) instead of its empty tensor, as it does a linalg op's init.
inline constexpr const char *kOverwrittenOutsAttr = "kiln.overwritten_outs";
} // namespace mlir::kiln

#endif
