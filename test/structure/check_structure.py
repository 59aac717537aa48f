#!/usr/bin/python3
"""Checks the shape of the code that makes it easy to change (docs/development.md):

1. every pass declared in a Passes.td has a source file named after it
   (FooBarPass -> FooBar.cpp under lib/) and a lit test named after its flag
   without the `kiln-` prefix and a target prefix (`kiln-cpu-tile-and-vectorize`
   -> tile-and-vectorize.mlir, or a folder of that name, under test/), and an
   entry in docs/passes.md;
2. no source file under lib/, tools/, runtime/ or python/ is over 1,000 lines
   unless its first comment says why it must be ("over 1,000 lines");
3. no function there is over 200 lines.

usage: check_structure.py REPO_ROOT
Prints every violation and exits 1 if there is any.
"""
import os
import re
import sys

MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 200
SOURCE_DIRS = ["lib", "tools", "runtime", "python"]
SOURCE_EXTS = (".cpp", ".h", ".c")


def passes(root):
    """(def name, flag, td path) of every pass."""
    found = []
    for dirpath, _, files in os.walk(os.path.join(root, "include")):
        for f in files:
            if f != "Passes.td":
                continue
            path = os.path.join(dirpath, f)
            text = open(path).read()
            for m in re.finditer(r'^def (\w+)\s*:\s*Pass<"([^"]+)"', text, re.M):
                found.append((m.group(1), m.group(2), path))
    return found


def files_under(root, dirs, exts):
    for d in dirs:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                if f.endswith(exts):
                    yield os.path.join(dirpath, f)


def check_passes(root, problems):
    sources = {os.path.splitext(os.path.basename(p))[0]
               for p in files_under(root, ["lib"], (".cpp",))}
    tests = set()
    for dirpath, dirs, files in os.walk(os.path.join(root, "test")):
        tests.update(os.path.splitext(f)[0] for f in files if f.endswith(".mlir"))
        tests.update(dirs)
    doc = open(os.path.join(root, "docs", "passes.md")).read() \
        if os.path.exists(os.path.join(root, "docs", "passes.md")) else ""
    for name, flag, td in passes(root):
        base = name[:-len("Pass")] if name.endswith("Pass") else name
        if base not in sources and base.removeprefix("Convert") not in sources:
            problems.append(f"pass {flag}: no source file {base}.cpp under lib/ ({td})")
        short = re.sub(r"^kiln-((cpu|gpu)-)?", "", flag)
        if short not in tests:
            problems.append(f"pass {flag}: no lit test {short}.mlir (or folder) under test/")
        if f"`-{flag}`" not in doc:
            problems.append(f"pass {flag}: not in docs/passes.md")


def first_comment(lines):
    text = []
    for line in lines:
        if line.startswith(("//", "/*", " *")):
            text.append(line)
        elif text:
            break
    return " ".join(text)


def function_lengths(lines):
    """(first line, length) of each function body: a brace block opened at
    the end of a line that looks like a function head, at namespace or class
    level."""
    results = []
    stack = []  # (kind, line)
    for i, raw in enumerate(lines):
        line = re.sub(r"//.*", "", raw)
        line = re.sub(r'"([^"\\]|\\.)*"', '""', line)
        line = re.sub(r"'([^'\\]|\\.)*'", "''", line)
        for ch in line:
            if ch == "{":
                head = line.strip()
                if re.match(r"(namespace\b|extern \"C\")", head):
                    kind = "ns"
                elif (re.match(r"(template\s*<.*>\s*)?(struct|class|union|enum)\b", head)
                      or head.startswith(":")) and "(" not in head.split("<")[0]:
                    kind = "type"
                elif all(k in ("ns", "type") for k, _ in stack) and \
                        (")" in head or re.search(r"\)\s*(const\s*)?(override\s*)?(->.*)?\{$", head)
                         or head == "{"):
                    kind = "fn"
                else:
                    kind = "block"
                stack.append((kind, i))
            elif ch == "}" and stack:
                kind, start = stack.pop()
                if kind == "fn":
                    results.append((start + 1, i - start + 1))
    return results


def check_sizes(root, problems):
    for path in files_under(root, SOURCE_DIRS, SOURCE_EXTS):
        rel = os.path.relpath(path, root)
        lines = open(path, errors="replace").read().split("\n")
        if len(lines) > MAX_FILE_LINES and "over 1,000 lines" not in first_comment(lines):
            problems.append(f"{rel}: {len(lines)} lines, over {MAX_FILE_LINES} "
                            "(split it by concern, or say in its first comment why not)")
        for start, length in function_lengths(lines):
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{rel}:{start}: a function of {length} lines, over "
                                f"{MAX_FUNCTION_LINES}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    problems = []
    check_passes(root, problems)
    check_sizes(root, problems)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(passes(root))} passes each with a source, a lit test and docs; "
          "no file or function over its limit")


if __name__ == "__main__":
    main()
