"""ONNX Runtime for the benchmarks: the npm package onnxruntime-node (CPU
provider only), installed once under bench/.node."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE_DIR = os.path.join(ROOT, "bench", ".node")


def ensure_ort():
    if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "onnxruntime-node")):
        os.makedirs(NODE_DIR, exist_ok=True)
        env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL_CUDA="skip")
        subprocess.run(["npm", "install", "--prefix", NODE_DIR, "--no-audit", "--no-fund",
                        "onnxruntime-node@1"], check=True, env=env, stdout=subprocess.DEVNULL)
