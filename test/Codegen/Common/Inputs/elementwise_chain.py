"""Prints a function with a chain of N elementwise linalg.generic ops (one
math op each), for fuse-elementwise-long-chain.mlir.

usage: elementwise_chain.py N
"""
import sys

n = int(sys.argv[1])
ops = ["math.exp", "math.tanh", "arith.negf", "math.absf"]
print("#id = affine_map<(d0) -> (d0)>")
print("func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {")
print("  %e = tensor.empty() : tensor<16xf32>")
prev = "%x"
for i in range(n):
    print(f"  %v{i} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = [\"parallel\"]}}"
          f" ins({prev} : tensor<16xf32>) outs(%e : tensor<16xf32>) {{")
    print(f"  ^bb0(%i: f32, %o: f32):")
    print(f"    %r = {ops[i % 4]} %i : f32")
    print(f"    linalg.yield %r : f32")
    print(f"  }} -> tensor<16xf32>")
    prev = f"%v{i}"
print(f"  return {prev} : tensor<16xf32>")
print("}")
