"""Checks the ONNX op table (lib/Conversion/OnnxToKiln/OpTable.cpp) against the
sources and docs/ops.md: rows sorted by domain and op type, each (op type,
domain, since-version) once, since-versions ascending, each converter defined
in the file its row names and declared under that file in Converters.h, and
every op in docs/ops.md's table with the files of its converters.

usage: check_op_table.py REPO_ROOT
"""
import os
import re
import sys

root = sys.argv[1]
src = os.path.join(root, "lib", "Conversion", "OnnxToKiln")
table = open(os.path.join(src, "OpTable.cpp")).read()
ROW = re.compile(r'^\s*\{"(\w+)",\s*\{([\d, ]+)\},\s*(\w+),\s*"([\w.]+)"(?:,\s*(\w+))?\},', re.M)
rows = [(m[1], m[5] or "", [int(v) for v in m[2].split(",")], m[3], m[4])
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

for e in errors:
    print("error:", e)
print(f"{len(rows)} rows, {len(seen)} (op, since-version) pairs, {len(errors)} errors")
sys.exit(1 if errors else 0)
