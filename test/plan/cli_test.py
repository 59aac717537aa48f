#!/usr/bin/python3
"""kiln-plan's command line: output, options, every error path, exit codes.

    cli_test.py KILN_PLAN TRACES_DIR

Exit codes under test: 0 success, 2 bad usage or input (with one
"kiln-plan: error: ..." line on stderr and nothing on stdout). Every trace
in TRACES_DIR must plan and validate through the CLI.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

KILN_PLAN = sys.argv[1]
TRACES = sys.argv[2]
failures = []


def run(args, stdin=None):
    return subprocess.run([KILN_PLAN, *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def check(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}")


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


PLAN = {"alignment": 64, "buffers": [
    {"id": "t7", "size": 4096, "first": 3, "last": 9},
    {"id": "t8", "size": 100, "first": 4, "last": 5},
    {"id": "t9", "size": 2000, "first": 10, "last": 12},
    {"id": "empty", "size": 0, "first": 0, "last": 12},
]}


def happy_paths(tmp):
    path = write(tmp, "plan.json", json.dumps(PLAN))
    p = run([path])
    check("happy.exit", p.returncode == 0, p.stderr)
    check("happy.quiet", p.stderr == "", p.stderr)
    out = json.loads(p.stdout)
    check("happy.keys", list(out) == ["arena_bytes", "lower_bound_bytes",
                                      "offsets"], p.stdout)
    check("happy.ids", list(out["offsets"]) == ["t7", "t8", "t9", "empty"],
          p.stdout)
    # t7 and t8 overlap (4096 + 128); t9 reuses their bytes.
    check("happy.bound", out["lower_bound_bytes"] == 4224, p.stdout)
    check("happy.arena", out["arena_bytes"] == 4224, p.stdout)
    offs = out["offsets"]
    check("happy.disjoint", offs["t8"] >= 4096 or offs["t7"] >= 128, p.stdout)
    check("happy.aligned", all(o % 64 == 0 for o in offs.values()), p.stdout)
    check("happy.empty", offs["empty"] == 0, p.stdout)

    p2 = run(["-"], stdin=json.dumps(PLAN))
    check("stdin", p2.returncode == 0 and p2.stdout == p.stdout, p2.stderr)

    p = run(["--validate", path])
    check("validate", p.returncode == 0 and "plan is valid" in p.stderr,
          p.stderr)
    p = run(["--stats", path])
    check("stats", p.returncode == 0 and "lower bound 4224" in p.stderr
          and "planned in" in p.stderr, p.stderr)
    for args in (["--search-iterations", "0"], ["--search-iterations=7"],
                 ["--search-iterations", "100000"]):
        p = run([*args, path])
        check(f"iterations {args}", p.returncode == 0 and
              json.loads(p.stdout)["arena_bytes"] == 4224, p.stderr)
    p = run(["--help"])
    check("help", p.returncode == 0 and "usage: kiln-plan" in p.stdout,
          p.stdout)

    # Alignment is optional (64); other fields are ignored.
    doc = {"source": "x", "buffers": [
        {"id": "a", "size": 1, "first": 0, "last": 0, "op": "conv"}]}
    p = run(["-"], stdin=json.dumps(doc))
    check("defaults", p.returncode == 0 and
          json.loads(p.stdout)["arena_bytes"] == 64, p.stdout + p.stderr)
    p = run(["-"], stdin='{"alignment": 1, "buffers": []}')
    check("empty list", p.returncode == 0 and json.loads(p.stdout) ==
          {"arena_bytes": 0, "lower_bound_bytes": 0, "offsets": {}},
          p.stdout + p.stderr)
    # Ids are printed as JSON strings, escapes included.
    doc = {"buffers": [{"id": 'q"\\\u00e9', "size": 8, "first": 0,
                        "last": 1}]}
    p = run(["-"], stdin=json.dumps(doc))
    check("escaped id", p.returncode == 0 and
          list(json.loads(p.stdout)["offsets"]) == ['q"\\\u00e9'], p.stdout)


def buffers_doc(**fields):
    b = {"id": "t0", "size": 64, "first": 0, "last": 1}
    for k, v in fields.items():
        if v is None:
            del b[k]
        else:
            b[k] = v
    return json.dumps({"alignment": 64, "buffers": [b]})


def error_paths(tmp):
    good = write(tmp, "good.json", json.dumps(PLAN))
    big = 2 ** 62
    cases = [
        ("malformed json", ["-"], '{"buffers": [', "malformed JSON"),
        ("empty input", ["-"], "", "malformed JSON"),
        ("trailing garbage", ["-"], '{"buffers": []} x', "malformed JSON"),
        ("not an object", ["-"], "[]", "must be a JSON object"),
        ("missing buffers", ["-"], '{"alignment": 64}', 'missing "buffers"'),
        ("buffers not array", ["-"], '{"buffers": {}}', "must be an array"),
        ("buffer not object", ["-"], '{"buffers": [3]}', "must be an object"),
        ("missing id", ["-"], buffers_doc(id=None), 'has no "id"'),
        ("missing size", ["-"], buffers_doc(size=None), 'has no "size"'),
        ("missing first", ["-"], buffers_doc(first=None), 'has no "first"'),
        ("missing last", ["-"], buffers_doc(last=None), 'has no "last"'),
        ("id not string", ["-"], buffers_doc(id=7), "id must be a string"),
        ("negative size", ["-"], buffers_doc(size=-5),
         "size must be a non-negative integer, got -5"),
        ("fractional size", ["-"], buffers_doc(size=1.5),
         "size must be a non-negative integer"),
        ("string size", ["-"], buffers_doc(size="64"),
         "size must be a non-negative integer"),
        ("huge size", ["-"], buffers_doc(size=10 ** 30),
         "size must be a non-negative integer"),
        ("fractional step", ["-"], buffers_doc(first=0.5),
         "first must be an integer step"),
        ("step too large", ["-"], buffers_doc(last=2 ** 64 - 1),
         "last must be an integer step"),
        ("last before first", ["-"], buffers_doc(first=5, last=4),
         "ends (last 4) before it starts (first 5)"),
        ("duplicate ids", ["-"], json.dumps({"buffers": [
            {"id": "x", "size": 1, "first": 0, "last": 0},
            {"id": "y", "size": 1, "first": 0, "last": 0},
            {"id": "x", "size": 1, "first": 1, "last": 1}]}),
         "duplicate id 'x' (buffers[0] and buffers[2])"),
        ("alignment 48", ["-"], '{"alignment": 48, "buffers": []}',
         "power of two, got 48"),
        ("alignment 0", ["-"], '{"alignment": 0, "buffers": []}',
         "power of two, got 0"),
        ("negative alignment", ["-"], '{"alignment": -64, "buffers": []}',
         '"alignment" must be a non-negative integer'),
        ("alignment string", ["-"], '{"alignment": "64", "buffers": []}',
         '"alignment" must be a non-negative integer'),
        ("sizes overflow", ["-"], json.dumps({"buffers": [
            {"id": str(i), "size": big, "first": 0, "last": 0}
            for i in range(3)]}), "more than 2^63 bytes"),
        ("no such file", [os.path.join(tmp, "nope.json")], None,
         "cannot open"),
        ("unknown option", ["--fast", good], None, "unknown option '--fast'"),
        ("no input", [], None, "no input file"),
        ("two inputs", [good, good], None, "expected one input file"),
        ("iterations missing", ["--search-iterations"], None, "needs a value"),
        ("iterations negative", ["--search-iterations", "-1", good], None,
         "expects a non-negative integer"),
        ("iterations text", ["--search-iterations", "many", good], None,
         "expects a non-negative integer, got 'many'"),
        ("iterations suffix", ["--search-iterations=5x", good], None,
         "expects a non-negative integer, got '5x'"),
        ("iterations too big", ["--search-iterations", "99999999999", good],
         None, "expects a non-negative integer"),
        ("directory", [tmp], None, "is a directory"),
    ]
    for name, args, stdin, message in cases:
        p = run(args, stdin)
        check(f"{name}.exit", p.returncode == 2,
              f"exit {p.returncode}, stderr {p.stderr!r}")
        check(f"{name}.message", p.stderr.startswith("kiln-plan: error: ")
              and message in p.stderr and p.stderr.count("\n") == 1,
              repr(p.stderr))
        check(f"{name}.stdout", p.stdout == "", repr(p.stdout))


def corpus():
    paths = sorted(glob.glob(os.path.join(TRACES, "*.json")))
    check("corpus.found", len(paths) >= 100, f"{len(paths)} traces")
    for path in paths:
        p = run(["--validate", path])
        name = os.path.basename(path)
        check(f"corpus {name}", p.returncode == 0 and
              "plan is valid" in p.stderr, p.stderr)
        if p.returncode == 0:
            out = json.loads(p.stdout)
            with open(path) as f:
                ids = [b["id"] for b in json.load(f)["buffers"]]
            check(f"corpus {name} ids", list(out["offsets"]) == ids)
            check(f"corpus {name} bound",
                  out["arena_bytes"] >= out["lower_bound_bytes"])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        happy_paths(tmp)
        error_paths(tmp)
    corpus()
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all kiln-plan CLI checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
