// RUN: kiln-opt %s --split-input-file --kiln-arena-allocation | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-arena-allocation=alignment=128 | FileCheck %s --check-prefix=ALIGN128

// Every buffer becomes a view of one trailing i8 arena argument at a 64-byte
// aligned offset. The three buffers (200, 100 and 12 bytes) are live at the
// same time, so each takes its own aligned range: 256 + 128 + 64 bytes.
// (They are written largest first, so that the offsets are the same whether
// buffers are placed in program order or largest first.)
// CHECK: module attributes {kiln.arena_bytes = 448 : i64}
// CHECK-LABEL: func.func @three_buffers
// CHECK-SAME: (%{{.+}}: memref<4xf32>, %{{.+}}: memref<4xf32>, %[[ARENA:.+]]: memref<448xi8> {kiln.arena})
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[O0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[O256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[O384:.+]] = arith.constant 384 : index
// CHECK-DAG: %[[A:.+]] = memref.view %[[ARENA]][%[[O0]]][] : memref<448xi8> to memref<50xf32>
// CHECK-DAG: %[[B:.+]] = memref.view %[[ARENA]][%[[O256]]][] : memref<448xi8> to memref<5x10xf16>
// CHECK-DAG: %[[C:.+]] = memref.view %[[ARENA]][%[[O384]]][] : memref<448xi8> to memref<12xi8>
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill {{.+}} outs(%[[A]] :
// CHECK: linalg.fill {{.+}} outs(%[[B]] :
// CHECK: linalg.fill {{.+}} outs(%[[C]] :
// CHECK: return
// ALIGN128: module attributes {kiln.arena_bytes = 512 : i64}
// ALIGN128-LABEL: func.func @three_buffers
// ALIGN128-SAME: memref<512xi8> {kiln.arena}
// ALIGN128-DAG: arith.constant 0 : index
// ALIGN128-DAG: arith.constant 256 : index
// ALIGN128-DAG: arith.constant 384 : index
func.func @three_buffers(%x: memref<4xf32>, %out: memref<4xf32>) {
  %f = arith.constant 1.0 : f32
  %h = arith.constant 1.0 : f16
  %i = arith.constant 1 : i8
  %a = memref.alloc() {alignment = 64 : i64} : memref<50xf32>
  %b = memref.alloc() : memref<5x10xf16>
  %c = memref.alloc() : memref<12xi8>
  linalg.fill ins(%f : f32) outs(%a : memref<50xf32>)
  linalg.fill ins(%h : f16) outs(%b : memref<5x10xf16>)
  linalg.fill ins(%i : i8) outs(%c : memref<12xi8>)
  %sa = memref.subview %a[0] [4] [1] : memref<50xf32> to memref<4xf32, strided<[1]>>
  linalg.copy ins(%sa : memref<4xf32, strided<[1]>>) outs(%out : memref<4xf32>)
  linalg.copy ins(%b : memref<5x10xf16>) outs(%b : memref<5x10xf16>)
  linalg.copy ins(%c : memref<12xi8>) outs(%c : memref<12xi8>)
  return
}

// -----

// A 400-byte buffer then a 40-byte one: the second starts at the next aligned
// offset after the first (448), and the arena holds both (512).
// CHECK: module attributes {kiln.arena_bytes = 512 : i64}
// CHECK-LABEL: func.func @sizes_round_up
// CHECK-SAME: %[[ARENA:[^ ]+]]: memref<512xi8> {kiln.arena}
// CHECK-DAG: %[[O0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[O448:.+]] = arith.constant 448 : index
// CHECK-DAG: %[[BIG:.+]] = memref.view %[[ARENA]][%[[O0]]][] : memref<512xi8> to memref<100xf32>
// CHECK-DAG: %[[SMALL:.+]] = memref.view %[[ARENA]][%[[O448]]][] : memref<512xi8> to memref<10xf32>
// CHECK: linalg.fill {{.+}} outs(%[[BIG]] : memref<100xf32>)
// CHECK: linalg.fill {{.+}} outs(%[[SMALL]] : memref<10xf32>)
func.func @sizes_round_up(%out: memref<10xf32>) {
  %f = arith.constant 1.0 : f32
  %big = memref.alloc() : memref<100xf32>
  %small = memref.alloc() : memref<10xf32>
  linalg.fill ins(%f : f32) outs(%big : memref<100xf32>)
  linalg.fill ins(%f : f32) outs(%small : memref<10xf32>)
  %s = memref.subview %big[0] [10] [1] : memref<100xf32> to memref<10xf32, strided<[1]>>
  linalg.add ins(%s, %small : memref<10xf32, strided<[1]>>, memref<10xf32>) outs(%out : memref<10xf32>)
  return
}

// -----

// memref.copy would call into a runtime library: it becomes linalg.copy.
// Deallocations go away with their buffers.
// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[X:.+]]: memref<4xf32>, %[[OUT:.+]]: memref<4xf32>, %[[ARENA:.+]]: memref<64xi8> {kiln.arena})
// CHECK: %[[T:.+]] = memref.view %[[ARENA]]
// CHECK: linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[T]] : memref<4xf32>)
// CHECK: linalg.copy ins(%[[T]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @copies(%x: memref<4xf32>, %out: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  memref.copy %x, %t : memref<4xf32> to memref<4xf32>
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// The module records the largest arena of its functions; each function gets
// its own arena argument. Declarations are left alone.
// CHECK: module attributes {kiln.arena_bytes = 128 : i64}
// CHECK-LABEL: func.func private @external(memref<4xf32>)
// CHECK-LABEL: func.func @small
// CHECK-SAME: memref<64xi8> {kiln.arena}
// CHECK-LABEL: func.func @large
// CHECK-SAME: memref<128xi8> {kiln.arena}
func.func private @external(memref<4xf32>)
func.func @small() {
  %a = memref.alloc() : memref<4xf32>
  func.call @external(%a) : (memref<4xf32>) -> ()
  return
}
func.func @large() {
  %a = memref.alloc() : memref<32xf32>
  %s = memref.subview %a[0] [4] [1] : memref<32xf32> to memref<4xf32, strided<[1]>>
  %c = memref.cast %s : memref<4xf32, strided<[1]>> to memref<4xf32>
  func.call @external(%c) : (memref<4xf32>) -> ()
  return
}

// -----

// Buffers whose lifetimes do not overlap share bytes: %b is allocated after
// the last use of %a, so both live at offset 0 of a 64-byte arena.
// CHECK-LABEL: func.func @disjoint_lifetimes_share
// CHECK-SAME: %[[ARENA:[^ ]+]]: memref<64xi8> {kiln.arena}
// CHECK-SAME: kiln.arena_bytes = 64 : i64, kiln.arena_lower_bound = 64 : i64
// CHECK: %[[OA:.+]] = arith.constant 0 : index
// CHECK: %[[A:.+]] = memref.view %[[ARENA]][%[[OA]]][] : memref<64xi8> to memref<16xf32>
// CHECK: linalg.copy ins(%[[A]] :
// CHECK: %[[OB:.+]] = arith.constant 0 : index
// CHECK: %[[B:.+]] = memref.view %[[ARENA]][%[[OB]]][] : memref<64xi8> to memref<16xf32>
// CHECK: linalg.copy ins(%[[B]] :
func.func @disjoint_lifetimes_share(%x: memref<16xf32>, %out1: memref<16xf32>, %out2: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  linalg.copy ins(%a : memref<16xf32>) outs(%out1 : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.copy ins(%b : memref<16xf32>) outs(%out2 : memref<16xf32>)
  return
}

// -----

// A buffer carried through a loop is live as long as the loop's result is:
// %b is allocated after the loop but before %r (which is %a) is read, so the
// two must not overlap.
// CHECK-LABEL: func.func @loop_carried_buffer
// CHECK-SAME: %[[ARENA:[^ ]+]]: memref<192xi8> {kiln.arena}
// CHECK: %[[OA:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.+]] = memref.view %[[ARENA]][%[[OA]]][] : memref<192xi8> to memref<32xf32>
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[A]])
// CHECK: %[[OB:.+]] = arith.constant 128 : index
// CHECK-NEXT: %[[B:.+]] = memref.view %[[ARENA]][%[[OB]]][] : memref<192xi8> to memref<16xf32>
func.func @loop_carried_buffer(%x: memref<32xf32>, %y: memref<16xf32>, %out: memref<32xf32>, %out2: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<32xf32>
  linalg.copy ins(%x : memref<32xf32>) outs(%a : memref<32xf32>)
  %r = scf.for %i = %c1 to %c4 step %c1 iter_args(%cur = %a) -> (memref<32xf32>) {
    scf.yield %cur : memref<32xf32>
  }
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%y : memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.copy ins(%r : memref<32xf32>) outs(%out : memref<32xf32>)
  linalg.copy ins(%b : memref<16xf32>) outs(%out2 : memref<16xf32>)
  return
}

// -----

// Likewise a view keeps its buffer alive: %b is allocated after the last
// direct use of %a, but before %a is read through the subview.
// CHECK-LABEL: func.func @view_keeps_buffer_alive
// CHECK-SAME: %[[ARENA:[^ ]+]]: memref<192xi8> {kiln.arena}
// CHECK: %[[OA:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[ARENA]][%[[OA]]][] : memref<192xi8> to memref<32xf32>
// CHECK: %[[OB:.+]] = arith.constant 128 : index
// CHECK-NEXT: memref.view %[[ARENA]][%[[OB]]][] : memref<192xi8> to memref<16xf32>
func.func @view_keeps_buffer_alive(%x: memref<32xf32>, %y: memref<16xf32>, %out: memref<16xf32>, %out2: memref<16xf32>) {
  %a = memref.alloc() : memref<32xf32>
  linalg.copy ins(%x : memref<32xf32>) outs(%a : memref<32xf32>)
  %half = memref.subview %a[0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%y : memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.copy ins(%half : memref<16xf32, strided<[1]>>) outs(%out : memref<16xf32>)
  linalg.copy ins(%b : memref<16xf32>) outs(%out2 : memref<16xf32>)
  return
}

// -----

// A small buffer allocated inside a loop (a tile tiling could not keep in
// registers) becomes one stack buffer that every iteration reuses: at the
// top of the parallel loop's body (made once per task), or of the function
// for a sequential loop. It takes no arena space.
// CHECK-LABEL: func.func @loop_scratch
// CHECK-NEXT: %[[S:.+]] = memref.alloca() {alignment = 64 : i64} : memref<3x16xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill {{.+}} outs(%[[S]] :
// CHECK: scf.forall
// CHECK-NEXT: %[[T:.+]] = memref.alloca() {alignment = 64 : i64} : memref<2x16xf32>
// CHECK: scf.for
// CHECK: linalg.fill {{.+}} outs(%[[T]] :
func.func @loop_scratch(%out: memref<3x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloc() {alignment = 64 : i64} : memref<3x16xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<3x16xf32>)
    memref.copy %t, %out : memref<3x16xf32> to memref<3x16xf32>
  }
  scf.forall (%j) in (2) {
    scf.for %i = %c0 to %c4 step %c1 {
      %u = memref.alloc() {alignment = 64 : i64} : memref<2x16xf32>
      linalg.fill ins(%zero : f32) outs(%u : memref<2x16xf32>)
      %v = memref.subview %out[0, 0] [2, 16] [1, 1] : memref<3x16xf32> to memref<2x16xf32, strided<[16, 1]>>
      memref.copy %u, %v : memref<2x16xf32> to memref<2x16xf32, strided<[16, 1]>>
    }
  }
  return
}

// -----

// The same for a buffer of run-time size that is at most 16 KiB at the
// symbols' maxima (the slice of an ArgMin's unread values that each task
// of a parallel loop copies; TileStrategy.cpp): a stack buffer of its
// run-time size, made at the top of the parallel loop's body, or before a
// sequential loop nest, where its sizes are known.
// CHECK-LABEL: func.func @runtime_loop_scratch
// CHECK: %[[N:.+]] = affine.min
// CHECK-NEXT: %[[S:.+]] = memref.alloca(%[[N]]) {alignment = 64 : i64} : memref<2x?xf32>
// CHECK-NEXT: scf.for
// CHECK: linalg.fill {{.+}} outs(%[[S]] :
// CHECK: scf.forall
// CHECK-NEXT: %[[T:.+]] = memref.alloca(%[[N]]) {alignment = 64 : i64} : memref<?x16xf32>
// CHECK-NEXT: scf.for
// CHECK: linalg.fill {{.+}} outs(%[[T]] :
func.func @runtime_loop_scratch(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %s = affine.min affine_map<()[s0] -> (s0, 256)>()[%n]
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloc(%s) {alignment = 64 : i64} : memref<2x?xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<2x?xf32>)
  }
  scf.forall (%j) in (2) {
    scf.for %i = %c0 to %c4 step %c1 {
      %u = memref.alloc(%s) {alignment = 64 : i64} : memref<?x16xf32>
      linalg.fill ins(%zero : f32) outs(%u : memref<?x16xf32>)
    }
  }
  return
}

// -----

// A dynamic size bounded by affine.min (what --kiln-bind-symbolic-shapes
// makes of a symbol) gets the space of its largest value: 2 x 512 floats,
// and the view keeps the run-time size.
// CHECK-LABEL: func.func @bounded_alloc
// CHECK-SAME: %{{.*}}: memref<4096xi8> {kiln.arena}) attributes {kiln.arena_bytes = 4096
// CHECK: %[[S:.*]] = affine.min
// CHECK: memref.view %{{.*}}[%{{.*}}][%[[S]]] : memref<4096xi8> to memref<2x?xf32>
func.func @bounded_alloc(%n: index) {
  %zero = arith.constant 0.0 : f32
  %s = affine.min affine_map<()[s0] -> (s0, 512)>()[%n]
  %t = memref.alloc(%s) : memref<2x?xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<2x?xf32>)
  return
}

// -----

// A size computed from a bounded symbol by affine.apply (shape reification
// of a collapsed or expanded tensor: 2 x seq rows, a quarter of them) gets
// the space of the expression at the symbol's largest value: (2 x 512) x 32
// floats and (512 ceildiv 4) x 32 (they do not live at once: one offset).
// CHECK-LABEL: func.func @bounded_apply
// CHECK-SAME: %{{.*}}: memref<131072xi8> {kiln.arena}) attributes {kiln.arena_bytes = 131072
// CHECK-SAME: size = 131072
// CHECK-SAME: size = 16384
// CHECK: memref.view {{.+}} to memref<?x32xf32>
// CHECK: memref.view {{.+}} to memref<?x32xf32>
func.func @bounded_apply(%n: index) {
  %zero = arith.constant 0.0 : f32
  %s = affine.min affine_map<()[s0] -> (s0, 512)>()[%n]
  %rows = affine.apply affine_map<()[s0] -> (s0 * 2)>()[%s]
  %quarter = affine.apply affine_map<()[s0] -> (s0 ceildiv 4)>()[%s]
  %t = memref.alloc(%rows) : memref<?x32xf32>
  %u = memref.alloc(%quarter) : memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<?x32xf32>)
  linalg.fill ins(%zero : f32) outs(%u : memref<?x32xf32>)
  return
}

// -----

// A window's output size over a bounded symbol (a stride-2 convolution and a
// ceil_mode pooling, docs/shapes.md): an affine expression with a negative
// constant, and an affine.min of two expressions; each counts at the
// symbol's largest value, 512: (512 - 1) floordiv 2 + 1 = 256 rows of 32
// floats (32768 bytes), and min((512 - 3) ceildiv 2 + 1, 512 ceildiv 2) =
// 256 again (the max with 0 keeps the bound; the two do not live at once:
// one offset).
// CHECK-LABEL: func.func @window_sizes
// CHECK-SAME: attributes {kiln.arena_bytes = 32768
// CHECK: memref.view {{.+}} to memref<?x32xf32>
// CHECK: memref.view {{.+}} to memref<?x32xf32>
func.func @window_sizes(%n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %s = affine.min affine_map<()[s0] -> (s0, 512)>()[%n]
  %conv = affine.apply affine_map<()[s0] -> ((s0 - 1) floordiv 2 + 1)>()[%s]
  %pool = affine.min affine_map<()[s0] -> ((s0 - 3) ceildiv 2 + 1, s0 ceildiv 2)>()[%s]
  %pool0 = arith.maxsi %pool, %c0 : index
  %t = memref.alloc(%conv) : memref<?x32xf32>
  %u = memref.alloc(%pool0) : memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<?x32xf32>)
  linalg.fill ins(%zero : f32) outs(%u : memref<?x32xf32>)
  return
}

// -----

// A difference of sizes (a product minus a window's output, as the views of
// a 3-D pooling give): at most the largest minuend less the least value of
// what it subtracts. Sizes read from the dims argument are at least their
// symbol's minimum (the runtime checks it before the call), so 3 x 10 - 2 =
// 28 rows of 32 floats (3584 bytes); a dimension is at least 0, so 3 x 10 -
// 0 = 30 rows (3840 bytes), the larger, sets the arena.
// CHECK-LABEL: func.func @difference
// CHECK-SAME: attributes {kiln.arena_bytes = 3840
// CHECK-SAME: size = 3584
// CHECK-SAME: size = 3840
func.func @difference(%x: memref<?xf32>, %dims: memref<2xi64> {kiln.dims}) attributes {kiln.symbol_bounds = array<i64: 1, 10, 2, 4>} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %raw0 = memref.load %dims[%c0] : memref<2xi64>
  %n0 = arith.index_cast %raw0 : i64 to index
  %n = affine.min affine_map<()[s0] -> (s0, 10)>()[%n0]
  %raw1 = memref.load %dims[%c1] : memref<2xi64>
  %m0 = arith.index_cast %raw1 : i64 to index
  %m = affine.min affine_map<()[s0] -> (s0, 4)>()[%m0]
  %d = affine.apply affine_map<()[s0, s1] -> (s0 * 3 - s1)>()[%n, %m]
  %t = memref.alloc(%d) : memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<?x32xf32>)
  %k = memref.dim %x, %c0 : memref<?xf32>
  %e = affine.apply affine_map<()[s0, s1] -> (s0 * 3 - s1)>()[%n, %k]
  %u = memref.alloc(%e) : memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<?x32xf32>)
  return
}

// -----

// A buffer of a loop over the graph (kiln.graph_loop) too large for the
// stack takes one arena slot, live for the whole loop (its step) and reused
// by every iteration; the buffer before the loop is live across it too.
// CHECK-LABEL: func.func @graph_loop
// CHECK-SAME: kiln.arena_bytes = 65536
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<{{.*}}xi8> to memref<8192xf32>
// CHECK: scf.for
// CHECK: memref.view %{{.*}}[%c32768{{.*}}][] : memref<{{.*}}xi8> to memref<8192xf32>
// CHECK: } {kiln.graph_loop}
func.func @graph_loop(%in: memref<8192xf32>, %out: memref<8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<8192xf32>
  linalg.copy ins(%in : memref<8192xf32>) outs(%a : memref<8192xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloc() : memref<8192xf32>
    linalg.copy ins(%a : memref<8192xf32>) outs(%t : memref<8192xf32>)
    linalg.copy ins(%t : memref<8192xf32>) outs(%a : memref<8192xf32>)
  } {kiln.graph_loop}
  linalg.copy ins(%a : memref<8192xf32>) outs(%out : memref<8192xf32>)
  return
}
