#!/usr/bin/python3
"""Times kiln-plan on synthetic traces of 1k, 10k and 100k buffers.

Two kinds of trace, both from test/plan/make_traces.py:
  dag          random layer-like DAGs in a random topological order, long
               reads reaching back at most --dag-window tensors (a fixed
               window keeps the live set realistic as the graph grows)
  transformer  deep unfused transformer encoders (decomposed LayerNorm/GELU)

For each it prints the buffer count, the most buffers live at once, how far
greedy-by-size and the full search land from the lower bound, the planner's
own time (kiln-plan --stats) and the wall time of the whole command (reading
and writing JSON included), best of --repeat runs.

--stress also plans 40 harder random DAGs (300-3000 ops, unbounded or
windowed long reads, random or construction order) and prints how often
greedy and the search reach the lower bound: a check of the search beyond
the test corpus.

    /usr/bin/python3 bench/plan/bench_plan.py [--kiln-plan build/bin/kiln-plan]
"""
import argparse
import importlib.util
import json
import os
import random
import re
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_make_traces():
    path = os.path.join(ROOT, "test", "plan", "make_traces.py")
    spec = importlib.util.spec_from_file_location("make_traces", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_trace(mt, kind, n, path, window):
    rng = random.Random(n)
    if kind == "dag":
        g = mt.random_dag(rng, n + 1, 4, window=window)
        order = g.schedule(rng)
    else:
        # An unfused pre-norm layer has 41 buffers.
        g = mt.transformer(rng, max(1, n // 41), 128, 768, 1, False, 4)
        order = g.schedule()
    bufs = g.buffers(order)
    with open(path, "w") as f:
        json.dump({"alignment": 64, "buffers": bufs}, f)
    return len(bufs)


def stress(mt, kiln_plan, tmp):
    rows = []
    for i in range(40):
        n = [300, 1000, 2000, 3000][i % 4]
        rng = random.Random(5000 + i)
        g = mt.random_dag(rng, n, 4, window=[None, 64, 256][i % 3])
        bufs = g.buffers(g.schedule(rng if i % 2 else None))
        path = os.path.join(tmp, f"stress{i}.json")
        with open(path, "w") as f:
            json.dump({"alignment": 64, "buffers": bufs}, f)
        p = subprocess.run([kiln_plan, "--stats", path], check=True,
                           capture_output=True, text=True)
        out = json.loads(p.stdout)
        greedy = int(re.search(r"greedy by size (\d+)", p.stderr).group(1)) \
            / out["lower_bound_bytes"]
        ms = float(re.search(r"planned in ([\d.e+-]+) ms", p.stderr).group(1))
        rows.append((greedy, out["arena_bytes"] == out["lower_bound_bytes"],
                     out["arena_bytes"] / out["lower_bound_bytes"], ms))
    k = len(rows)
    print(f"stress: {k} random DAGs; greedy at the lower bound "
          f"{100 * sum(r[0] == 1.0 for r in rows) / k:.1f}%, mean "
          f"{sum(r[0] for r in rows) / k:.4f}; search at the lower bound "
          f"{100 * sum(r[1] for r in rows) / k:.1f}%, mean "
          f"{sum(r[2] for r in rows) / k:.4f}, max {max(r[2] for r in rows):.4f}"
          f"; planning {max(r[3] for r in rows):.0f} ms at most")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln-plan",
                    default=os.path.join(ROOT, "build", "bin", "kiln-plan"))
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--kinds", default="dag,transformer")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dag-window", type=int, default=256)
    ap.add_argument("--search-iterations", type=int, default=None)
    ap.add_argument("--stress", action="store_true")
    args = ap.parse_args()
    mt = load_make_traces()
    extra = []
    if args.search_iterations is not None:
        extra = ["--search-iterations", str(args.search_iterations)]

    print(f"{'trace':<12} {'buffers':>8} {'live':>5} {'greedy':>8} "
          f"{'search':>8} {'plan ms':>9} {'wall ms':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            for n in (int(s) for s in args.sizes.split(",")):
                path = os.path.join(tmp, f"{kind}{n}.json")
                count = make_trace(mt, kind, n, path, args.dag_window)
                walls = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    subprocess.run([args.kiln_plan, *extra, path], check=True,
                                   stdout=subprocess.DEVNULL)
                    walls.append((time.perf_counter() - t0) * 1e3)
                p = subprocess.run([args.kiln_plan, "--stats", *extra, path],
                                   check=True, capture_output=True, text=True)
                live = re.search(r"at most (\d+) live", p.stderr).group(1)
                greedy, search = re.findall(r"\(([\d.]+)x\)", p.stderr)
                ms = float(re.search(r"planned in ([\d.e+-]+) ms",
                                     p.stderr).group(1))
                print(f"{kind:<12} {count:>8} {live:>5} {greedy:>8} "
                      f"{search:>8} {ms:>9.1f} {min(walls):>9.1f}")
        if args.stress:
            stress(mt, args.kiln_plan, tmp)


if __name__ == "__main__":
    main()
