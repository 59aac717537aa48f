// RUN: kiln-opt %s --split-input-file --kiln-arena-allocation -verify-diagnostics

// A buffer allocated in a loop would need a fresh slot per iteration; one
// over 16 KiB is too large to become a stack buffer instead.
func.func @alloc_in_loop(%out: memref<8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{buffer 'memref<8192xf32>' is allocated inside a loop; it cannot live in the arena}}
    %t = memref.alloc() : memref<8192xf32>
    memref.copy %t, %out : memref<8192xf32> to memref<8192xf32>
  }
  return
}

// -----

// One of run-time size over 16 KiB at its bound (256 x 32 floats) cannot
// either.
func.func @runtime_alloc_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %s = affine.min affine_map<()[s0] -> (s0, 256)>()[%n]
  scf.forall (%j) in (2) {
    // expected-error @+1 {{buffer 'memref<?x32xf32>' is allocated inside a loop; it cannot live in the arena}}
    %u = memref.alloc(%s) : memref<?x32xf32>
    linalg.fill ins(%zero : f32) outs(%u : memref<?x32xf32>)
  }
  return
}

// -----

// A small buffer that leaves its iteration (yielded) cannot be shared by
// the iterations either.
func.func @alloc_yielded(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %out) -> (memref<4xf32>) {
    // expected-error @+1 {{buffer 'memref<4xf32>' is allocated inside a loop; it cannot live in the arena}}
    %t = memref.alloc() : memref<4xf32>
    scf.yield %t : memref<4xf32>
  }
  return
}

// -----

func.func @dynamic_alloc(%n: index) {
  // A size that traces back to no bounded symbol (an argument here).
  // expected-error @+1 {{buffer 'memref<?xf32>' has a dynamic size without an upper bound; it cannot live in the arena}}
  %t = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

func.func @strided_alloc() {
  // expected-error @+1 {{buffer 'memref<4x4xf32, strided<[8, 1]>>' has no identity layout}}
  %t = memref.alloc() : memref<4x4xf32, strided<[8, 1]>>
  return
}


// -----

// In a loop over the graph (kiln.graph_loop) a buffer gets one arena slot,
// but not one that leaves its iteration: the next iteration would write the
// slot it still reads.
func.func @graph_loop_yielded(%out: memref<8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %out) -> (memref<8192xf32>) {
    // expected-error @+1 {{buffer 'memref<8192xf32>' outlives the iteration of the graph loop that allocates it; it cannot have one arena slot}}
    %t = memref.alloc() : memref<8192xf32>
    scf.yield %t : memref<8192xf32>
  } {kiln.graph_loop}
  return
}
