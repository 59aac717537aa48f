"""Checks the ONNX op table (lib/Conversion/OnnxToKiln/OpTable.cpp) against the
sources and docs/ops.md: rows sorted by domain and op type, each (op type,
domain, since-version) once, since-versions ascending, each converter defined
in the file its row names and declared under that file in Converters.h, and
every op in docs/ops.md's table with the files of its converters.

It also generates docs/ops.md's "Versions" section (between its markers)
from the table and OnnxVersions.inc, and fails when the page is stale.

usage: check_op_table.py REPO_ROOT [--write-docs]
"""
import os
import re
import sys

root = sys.argv[1]
src = os.path.join(root, "lib", "Conversion", "OnnxToKiln")
table = open(os.path.join(src, "OpTable.cpp")).read()
ROW = re.compile(r'^\s*\{"(\w+)",\s*\{([\d, ]+)\},\s*(\w+),\s*"([\w.]+)"(?:,\s*(\w+))?\},', re.M)
DOMAINS = {"": "", "kTraining": "ai.onnx.preview.training", "kMicrosoft": "com.microsoft"}
rows = [(m[1], DOMAINS.get(m[5] or "", m[5]), [int(v) for v in m[2].split(",")], m[3], m[4])
        for m in ROW.finditer(table)]
errors = []
listed = table.count('{"')
if len(rows) != listed:
    errors.append(f"OpTable.cpp: {listed} rows, {len(rows)} understood")
keys = [(dom != "", dom, op.lower()) for op, dom, *_ in rows]
if keys != sorted(keys):
    errors.append("OpTable.cpp: rows are not sorted by domain, then op type")
seen = set()
for op, dom, since, conv, file in rows:
    if since != sorted(set(since)):
        errors.append(f"{op}: since-versions {since} are not ascending")
    for v in since:
        if (op, dom, v) in seen:
            errors.append(f"{op} {v}: listed twice")
        seen.add((op, dom, v))
    if conv == "nullptr":
        continue
    path = os.path.join(src, file)
    if not os.path.exists(path) or \
            f"mlir::kiln::{conv}(OnnxNode &node)" not in open(path).read():
        errors.append(f"{op}: {conv} is not defined in {file}")

# OnnxVersions.inc (ONNX 1.23's versions): a row lists only real
# since-versions of ops ONNX defines, since the pass converts a node only
# through the row that lists the exact version its opset means.
spec = {}
for m in re.finditer(r'^\{"([\w.]*)", "(\w+)", (\d+), (?:true|false)\},$',
                     open(os.path.join(src, "OnnxVersions.inc")).read(), re.M):
    spec.setdefault((m[2], m[1]), set()).add(int(m[3]))
if len(spec) < 200:
    errors.append(f"OnnxVersions.inc: {len(spec)} ops understood")
for op, dom, since, conv, file in rows:
    versions = spec.get((op, dom))
    if versions is None:
        continue  # an op ONNX 1.23 does not define
    for v in since:
        if v not in versions:
            errors.append(f"{op} {v}: not a since-version of {op} in ONNX 1.23 "
                          f"({', '.join(map(str, sorted(versions)))})")

# Converters.h: "// File.cpp" banners, each followed by its converters.
decls, banner = {}, None
for line in open(os.path.join(src, "Converters.h")):
    if re.match(r"// \w+\.cpp$", line.strip()):
        banner = line.strip()[3:]
    elif banner:
        for conv in re.findall(r"\bconvert\w+", line):
            decls[conv] = banner
for op, dom, since, conv, file in rows:
    if conv != "nullptr" and decls.get(conv) != file:
        errors.append(f"Converters.h: {conv} is not declared under // {file}")

# docs/ops.md: each op in a row that names its files.
files = {}
for op, dom, since, conv, file in rows:
    files.setdefault(op, set()).add(file)
documented = {}
for line in open(os.path.join(root, "docs", "ops.md")):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if not line.startswith("| ") or len(cells) != 4:
        continue
    for op in re.findall(r"\b[A-Z]\w+\b", cells[0]):
        documented.setdefault(op, set()).update(re.findall(r"`([\w.]+\.cpp)`", cells[2]))
for op, fs in files.items():
    if not fs <= documented.get(op, set()):
        errors.append(f"docs/ops.md: {op} must name {', '.join(sorted(fs))}")

# docs/ops.md's generated "Versions" section.
BEGIN, END = "<!-- versions:begin -->", "<!-- versions:end -->"
converted = {}
for op, dom, since, conv, file in rows:
    converted.setdefault((op, dom), set()).update(since)
lines = ["| op | versions converted | ONNX 1.23 versions not converted |",
         "|---|---|---|"]
for (op, dom), vs in sorted(converted.items(), key=lambda k: (k[0][1] != "", k[0][1], k[0][0].lower())):
    missing = sorted(v for v in spec.get((op, dom), ()) if v not in vs)
    name = op if not dom else f"{dom}.{op}"
    lines.append(f"| {name} | {', '.join(map(str, sorted(vs)))} | "
                 f"{', '.join(map(str, missing)) or '-'} |")
absent = sorted(f"{dom + '.' if dom else ''}{op}" for (op, dom) in spec
                if (op, dom) not in converted)
lines += ["", f"ONNX 1.23 ops Kiln does not convert ({len(absent)}): " + ", ".join(absent) + "."]
generated = "\n".join(lines)
docs_path = os.path.join(root, "docs", "ops.md")
docs = open(docs_path).read()
if BEGIN not in docs or END not in docs:
    errors.append(f"docs/ops.md: no {BEGIN} ... {END} section")
else:
    head, rest = docs.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    if current.strip() != generated.strip():
        if "--write-docs" in sys.argv:
            open(docs_path, "w").write(f"{head}{BEGIN}\n{generated}\n{END}{tail}")
        else:
            errors.append("docs/ops.md: the Versions section is stale; run "
                          "test/Conversion/OnnxToKiln/Inputs/check_op_table.py . --write-docs")

for e in errors:
    print("error:", e)
print(f"{len(rows)} rows, {len(seen)} (op, since-version) pairs, {len(errors)} errors")
sys.exit(1 if errors else 0)
