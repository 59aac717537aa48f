//===- Contract.h - the kiln.* attributes phases leave for each other -*- C++ -*-===//
//
// Every discardable `kiln.*` attribute, and the few symbol names, that one
// phase of the compile leaves for a later one, declared once. Each entry says
// who sets it, who reads it, and what it holds. The Kiln dialect owns the
// `kiln.` prefix: its attribute verifier (KilnDialect.cpp) knows the kind of
// value each name carries and rejects unknown `kiln.*` names, so a misspelled
// or retyped attribute fails verification instead of being silently ignored.
// --kiln-verify-codegen-input checks what code generation may assume of the
// linalg it is given (lib/Codegen/Common/VerifyCodegenInput.cpp).
//
// Plain C++ with no MLIR dependency: lib/Runner reads kObservePrefix too.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_KILN_IR_CONTRACT_H
#define KILN_DIALECT_KILN_IR_CONTRACT_H

#include <cstdint>

namespace mlir::kiln {

//===----------------------------------------------------------------------===//
// Set by the importer, read by the pipeline.
//===----------------------------------------------------------------------===//

/// Module, string: SHA-256 of the ONNX file, hex (the model's `hash`).
inline constexpr const char *kModelHashAttr = "kiln.model_hash";

//===----------------------------------------------------------------------===//
// Set by the pipeline or the graph passes, read by the graph passes.
//===----------------------------------------------------------------------===//

/// Module, array of strings: ONNX node names that --kiln-quantize-dynamic,
/// --kiln-quantize-static, --kiln-bf16-matmul and --kiln-fp16-compute leave
/// in f32 (kiln-compile --keep-fp32).
inline constexpr const char *kKeepFp32Attr = "kiln.keep_fp32";
/// Module, array of strings: node names the accuracy budget search
/// (--max-accuracy-drop) keeps in f32; treated like kKeepFp32Attr, with
/// "accuracy budget" as the reason in the remark.
inline constexpr const char *kKeepFp32BudgetAttr = "kiln.keep_fp32_budget";
/// Module, array of `array<f32: lo, hi>`: for --kiln-quantize-static, the
/// calibrated range of the input of each node that
/// --kiln-observe-quant-inputs observes, in its order.
inline constexpr const char *kActivationRangesAttr = "kiln.activation_ranges";
/// Module, array of strings, set by --kiln-observe-quant-inputs: the ONNX
/// node name of each observed node, in index order ("?" for a node without
/// one).
inline constexpr const char *kObservedNodesAttr = "kiln.observed_nodes";
/// Not an attribute: the prefix of the names (`onnx.name`) of the results
/// --kiln-observe-quant-inputs adds; calibration (lib/Runner) reads them.
inline constexpr const char *kObservePrefix = "kiln.observe:";
/// Unit, on a MatMul/Gemm/Conv graph op that --kiln-fp16-compute converted.
inline constexpr const char *kFp16NodeAttr = "kiln.fp16";
/// Unit, on a depthwise kiln.conv2d whose input --precision=bf16 rounded to
/// bf16 (through a kiln.cast pair that the lowering reads through: the
/// convolution reads the bf16 tensor).
inline constexpr const char *kBf16InputAttr = "kiln.bf16_input";

//===----------------------------------------------------------------------===//
// Set by --kiln-convert-kiln-to-linalg, read by code generation.
//===----------------------------------------------------------------------===//

/// Unit, on the linalg.generic made of kiln.dynamic_quant_matmul's integer
/// product (u8 x packed s8 -> i32); --kiln-cpu-vnni-matmul replaces it with
/// a vpdpbusd micro-kernel.
inline constexpr const char *kInt8MatmulAttr = "kiln.int8_matmul";
/// Unit, on its epilogue: the generic that reads the i32 result [M, P, R]
/// with inputs (acc, scale [M] f32, zero point [M] i32, weight scale [P, R]
/// f32, weight sums [P, R] i32[, bias [P, R] f32]) and computes
/// f32(acc - zp * sums) * (scale * wscale) [+ bias]; the kernel applies it
/// to its registers when it is the product's only user.
inline constexpr const char *kInt8EpilogueAttr = "kiln.int8_epilogue";
/// Integer (the kernel height KH), on the linalg.generic made of
/// kiln.static_quant_depthwise_conv2d's integer product: loops (n, oh, ow,
/// c, kq, kw, t), acc[n, oh, ow, c] += zext(u8 input[n, oh s0 + (4 kq + t)
/// d0, ow s1 + kw d1, c]) * sext(weights[kq, kw, c, t]) in i32, from a zero
/// fill, with zero weights where 4 kq + t >= KH. --kiln-cpu-tile-and-vectorize
/// tiles it like a depthwise convolution and gives each tile a vpdpbusd
/// kernel (VnniDepthwise.cpp).
inline constexpr const char *kInt8DepthwiseAttr = "kiln.int8_depthwise";
/// Unit, on the linalg.generic that sums a convolution with a few output
/// channels (F <= a quarter register) in vector lanes of input channels:
/// loops (n, oh, ow, f, l, kh, kw, cb), partial[n, oh, ow, f, l] +=
/// x[n, oh s0 + kh d0, ow s1 + kw d1, cb, l] * w[kh, kw, cb, l, f] over an
/// [N, H, W, C / L, L] view of the input, from a zero fill; a second generic
/// adds the L lanes into the convolution's output (ConvLanePartials.cpp).
/// --kiln-cpu-tile-and-vectorize gives it tiles of several output pixels
/// by all lanes, each an FMA chain of its own.
inline constexpr const char *kLanePartialsAttr = "kiln.lane_partials";
/// Unit, on the linalg.generic made of kiln.bf16_matmul's product (bf16 rows
/// [M, Kp / 2, 2] times packed bf16 weights [P, Kp / 2, 16, 2] -> f32
/// [M, P, 16], from a zero fill). Tiling leaves it whole; after
/// bufferization --kiln-cpu-amx-matmul replaces it with AMX tile loops.
inline constexpr const char *kBf16MatmulAttr = "kiln.bf16_matmul";
/// Unit, on the math.roundeven of static int8's activation quantization
/// (round(x / scale), then + zero point, clamp, convert):
/// --kiln-fold-requantization may fold the scale, zero point and clamps into
/// the producer's epilogue. Only these are rewritten: the QDQ/QLinear
/// lowerings keep ONNX's exact rounding.
inline constexpr const char *kRequantAttr = "kiln.requant";
/// Unit, on the three linalg.generics of a float tensor's maximum and
/// negated minimum taken in one pass (DynamicQuantizeLinear's range; see
/// minMaxInBlocks in LowerTensor.cpp): kMinMaxPartialsAttr on the blocked
/// pass (maxima of x and -x over a [blocks, rows, lanes] view of the flat
/// tensor into [blocks, 2, lanes]), kMinMaxCombineAttr on the reduction of
/// those partials over (blocks, lanes) into [2], kMinMaxRestAttr on the one
/// that folds in the elements left after the blocks. When the tensor is the
/// result of a tiled parallel loop, --kiln-cpu-tile-and-vectorize computes
/// the partials in that loop, from each tile as it is written, and the
/// combine reads them instead (the tensor is not read again).
inline constexpr const char *kMinMaxPartialsAttr = "kiln.min_max_partials";
inline constexpr const char *kMinMaxCombineAttr = "kiln.min_max_combine";
inline constexpr const char *kMinMaxRestAttr = "kiln.min_max_rest";
/// Unit, on the zero fill of a padded tensor whose padding only ever meets
/// zero weights: static int8's rows padded along K (integer products, so any
/// value times 0 adds exactly 0). Once --kiln-cpu-mark-border-fills has found
/// that the interior is overwritten (kFillBorderAttr), --kiln-cpu-fill-borders
/// drops the fill instead of filling the border. A bf16 or f32 padding must
/// stay zero (an Inf or NaN times 0 is NaN), and so must dynamic int8's (its
/// rows' ranges read the padding).
inline constexpr const char *kUnreadPaddingAttr = "kiln.unread_padding";
/// Integer, on the module that proveBatchIndependence (lib/Pipeline/
/// BatchVariants.cpp) converts at a probe batch size P: the ONNX conversion
/// then keeps P from vanishing into a folded Min, Max, Equal, Mod or Div,
/// refuses a Loop of P iterations, and fails where a constant holding P reaches
/// an op as data (not only as sizes), since a model that reads its batch size
/// as data (a trip count `min(x.size(0), 3)`, a condition `x.size(0) == 1`) is
/// not an independent batch: each batch variant would read its own size, not
/// the call's.
inline constexpr const char *kBatchProbeAttr = "kiln.batch_probe";
/// String, on the call to kGuardFailedFn that a kiln.guard lowers to: the
/// message of the guard. --kiln-arena-allocation numbers the guards and
/// collects their messages into kGuardMessagesAttr.
inline constexpr const char *kGuardMessageAttr = "kiln.guard_message";
/// String and integer, on a kiln.guard the ONNX conversion builds where a
/// weight fixes a graph input's dim_param (a Conv's channels, an LSTM's
/// input size, lib/Conversion/OnnxToKiln/SizedOps.cpp pinDims): the
/// dim_param and that size. kiln-compile --check suggests `--dim C=3`
/// (lib/Pipeline/Check.cpp); nothing later reads them.
inline constexpr const char *kFixedSymbolAttr = "kiln.fixed_symbol";
inline constexpr const char *kFixedSizeAttr = "kiln.fixed_size";
/// Not an attribute: the placeholder function a failed kiln.guard calls.
inline constexpr const char *kGuardFailedFn = "__kiln_guard_failed";
/// Not an attribute: the runtime function (runtime/src/runtime.c) a
/// kiln.random calls once per execution for its key: uint64_t(uint64_t seed,
/// uint32_t seeded).
inline constexpr const char *kRandomKeyFn = "__kiln_random_key";

//===----------------------------------------------------------------------===//
// Set and read inside code generation.
//===----------------------------------------------------------------------===//

/// Unit, replaces kInt8MatmulAttr on an int8 product that the AMX kernel
/// takes instead of the VNNI one (--kiln-cpu-vnni-matmul{amx=true} marks
/// those with 16-column panels and K padded to 64): u8 rows [M, K4, 4] times
/// s8 weights [P, K4, 16, 4] -> i32 [M, P, 16], from a zero fill.
inline constexpr const char *kAmxInt8MatmulAttr = "kiln.amx_int8_matmul";
/// Unit, on the elementwise generic that is the only reader of an AMX
/// product's result (through reshapes), set by --kiln-cpu-mark-amx-epilogues:
/// tiling leaves it whole and moves the product next to it, and
/// --kiln-cpu-amx-matmul applies it to each block of accumulators as the
/// block leaves the tile registers, so that the accumulators never make a
/// round trip through memory.
inline constexpr const char *kAmxEpilogueAttr = "kiln.amx_epilogue";
/// Dense i64 array `offsets..., sizes...`, on a linalg.fill: the box that is
/// overwritten before it is read (--kiln-cpu-mark-border-fills);
/// --kiln-cpu-fill-borders fills only the rest.
inline constexpr const char *kFillBorderAttr = "kiln.fill_border";
/// Unit, on a loop (scf.forall or scf.for) that writes every element of the
/// one tensor it carries and never reads what that tensor held: the kernels
/// of --kiln-cpu-vnni-matmul. Later rewrites may then start it from a slice
/// of another tensor (a padded interior, a concatenation's part) instead of
/// its empty tensor, as they do a linalg op's init.
inline constexpr const char *kOverwrittenOutsAttr = "kiln.overwritten_outs";
/// Unit, on the generic --kiln-cpu-pack-constant-rhs makes of a matmul whose
/// constant right-hand side it laid out in panels: its panel dimension is
/// one register tile, taken whole.
inline constexpr const char *kPackedRhsAttr = "kiln.packed_rhs";
/// Integer id, on a tensor.empty (or its fill) that
/// --kiln-split-shared-destinations cloned, so that CSE keeps the clones
/// apart.
inline constexpr const char *kDistinctEmptyAttr = "kiln.distinct_empty";
/// Integer id, on the loop (or fill) that fills a padded tensor, so that CSE
/// keeps the pads of one shape apart (--kiln-cpu-tile-and-vectorize).
inline constexpr const char *kDistinctFillAttr = "kiln.distinct_fill";
/// Unit, on an scf.forall of an emulated GPU block
/// (--kiln-gpu-emulate-on-host): its iterations are the block's threads and
/// run as fibers (--kiln-outline-parallel-loops); it must never become a
/// sequential loop.
inline constexpr const char *kFibersAttr = "kiln.fibers";
/// Integer id, on an scf.forall that threads share, of the kiln.parallel_if
/// before it whose `loop` is the same (--kiln-cpu-tile-and-vectorize): that
/// op says at run time whether the loop's op, at the sizes of its symbolic
/// dimensions, has the work to pay for a fork.
inline constexpr const char *kParallelIfAttr = "kiln.parallel_if";

/// Not attributes: the launchers --kiln-outline-parallel-loops declares,
/// `<prefix><outlined function>`, and the runtime functions
/// --kiln-cpu-lower-parallel-launches turns their calls into
/// (runtime/src/pool.c, runtime/src/emu.c).
inline constexpr const char *kParallelLaunchPrefix = "__kiln_parallel_launch.";
inline constexpr const char *kParallelForFn = "__kiln_parallel_for";
inline constexpr const char *kFiberLaunchPrefix = "__kiln_fiber_launch.";
inline constexpr const char *kFibersFn = "__kiln_emu_fibers";

/// Not an attribute: the largest buffer a task of a parallel loop may
/// allocate for itself (a tile that tiling could not keep in registers, or
/// the slice of a result no one reads). --kiln-arena-allocation makes each
/// such buffer a stack buffer, once per task; the CPU tiler does not split
/// an op across threads when a task would need a larger one
/// (TileStrategy.cpp, parallelLoop).
inline constexpr int64_t kMaxLoopScratchBytes = 16 * 1024;

//===----------------------------------------------------------------------===//
// Symbolic dimensions run at their run-time sizes (docs/shapes.md). Set by
// the pipeline, read and completed by --kiln-bind-symbolic-shapes.
//===----------------------------------------------------------------------===//

/// On the scf.for a kiln.loop lowers to: a loop over the graph that runs
/// its iterations one after another. Buffers its body allocates get arena
/// slots (live during the whole loop) instead of being refused.
inline constexpr const char *kGraphLoopAttr = "kiln.graph_loop";
/// On a kiln.loop while the conversion converts its body: the ONNX node it
/// comes from ("node 'n' (Loop, opset 13)"), for the messages that follow.
inline constexpr const char *kOnnxNodeAttr = "kiln.onnx_node";

/// Dense i64 array, on an entry function: the range of each symbolic
/// dimension, [min0, max0, min1, max1, ...]; symbol s is entry s of the
/// run-time `dims` argument.
inline constexpr const char *kSymbolBoundsAttr = "kiln.symbol_bounds";
/// Dense i64 array, on an entry function argument: per axis, the symbol that
/// sizes it, or -1 for a static axis.
inline constexpr const char *kSymbolsAttr = "kiln.symbols";
/// Dense i64 arrays, on the entry function after
/// --kiln-bind-symbolic-shapes, per output axis of all outputs in order:
/// the symbol the size equals (-1 static, -2 computed from the symbols), and
/// the largest size it can take.
inline constexpr const char *kOutputSymbolsAttr = "kiln.output_symbols";
inline constexpr const char *kOutputBoundsAttr = "kiln.output_bounds";
/// Unit, on the function argument --kiln-bind-symbolic-shapes appends: the
/// run-time `dims` (i64: the symbols' sizes, then every output's shape,
/// which the function writes).
inline constexpr const char *kDimsArgAttr = "kiln.dims";

//===----------------------------------------------------------------------===//
// Set by --kiln-arena-allocation (and kiln-gpu-pack-weights), read by the
// pipeline, the report and the LLVM lowering.
//===----------------------------------------------------------------------===//

/// Integer, on each function and (the largest) on the module: arena bytes.
inline constexpr const char *kArenaBytesAttr = "kiln.arena_bytes";
/// Integer, per function: the lower bound of the arena size (largest live
/// sum).
inline constexpr const char *kArenaLowerBoundAttr = "kiln.arena_lower_bound";
/// Per function, array of dictionaries: one per buffer {size, offset,
/// first, last, producer, type}, in allocation order.
inline constexpr const char *kMemoryPlanAttr = "kiln.memory_plan";
/// Module, array of strings: when a kiln.guard survived to code generation,
/// the message of each guard, indexed by (status word - 1). The status word
/// is an i32 at offset 0 of the arena, in a reserved block of
/// kGuardStatusBytes.
inline constexpr const char *kGuardMessagesAttr = "kiln.guard_messages";
inline constexpr int64_t kGuardStatusBytes = 64;
/// Unit, on the function argument --kiln-arena-allocation appends: the arena.
inline constexpr const char *kArenaArgAttr = "kiln.arena";
/// Unit, on the function argument kiln-gpu-pack-weights appends: the packed
/// weights.
inline constexpr const char *kWeightsArgAttr = "kiln.weights";

} // namespace mlir::kiln

#endif // KILN_DIALECT_KILN_IR_CONTRACT_H
