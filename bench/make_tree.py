#!/usr/bin/env python3
"""Generates a source tree for bench/tools.sh: FILES files of C, Python, TypeScript, Go and Rust
spread over nested folders, deterministic for a given seed. Each file defines a few functions and
types with generated names, so searches and definitions have known hits:
  needle_value_31337   appears in exactly 1 in 5000 files
  fn_<word>_<n>        function definitions, n in 0..999
It also writes a .gitignore and an ignored build/ folder, so ignore handling is on the hot path."""
import os, random, sys

root, files = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda", "theta", "zeta"]
kinds = [
    ("c", "static int fn_{w}_{n}(int a, int b) {{\n    return a * {n} + b;\n}}\n\nstruct Type_{w}_{n} {{ int v; }};\n"),
    ("py", "def fn_{w}_{n}(a, b):\n    return a * {n} + b\n\n\nclass Type_{w}_{n}:\n    pass\n"),
    ("ts", "export function fn_{w}_{n}(a: number, b: number): number {{\n  return a * {n} + b;\n}}\n\nexport class Type_{w}_{n} {{}}\n"),
    ("go", "func fn_{w}_{n}(a int, b int) int {{\n\treturn a*{n} + b\n}}\n\ntype Type_{w}_{n} struct{{}}\n"),
    ("rs", "pub fn fn_{w}_{n}(a: i64, b: i64) -> i64 {{\n    a * {n} + b\n}}\n\npub struct Type_{w}_{n};\n"),
]
os.makedirs(root, exist_ok=True)
with open(os.path.join(root, ".gitignore"), "w") as f:
    f.write("build/\n*.tmp\n")
for i in range(files):
    ext, template = kinds[i % len(kinds)]
    folder = os.path.join(root, "pkg%02d" % (i % 50), "mod%03d" % (i // 50 % 100))
    os.makedirs(folder, exist_ok=True)
    body = ["// generated file %d\n" % i if ext not in ("py",) else "# generated file %d\n" % i]
    for _ in range(6):
        body.append(template.format(w=rng.choice(words), n=rng.randrange(1000)))
        body.append("\n")
    if i % 5000 == 1234:
        body.append(("# " if ext == "py" else "// ") + "needle_value_31337 lives here\n")
    with open(os.path.join(folder, "file%05d.%s" % (i, ext)), "w") as f:
        f.write("".join(body))
os.makedirs(os.path.join(root, "build"), exist_ok=True)
for i in range(200):
    with open(os.path.join(root, "build", "junk%03d.c" % i), "w") as f:
        f.write("needle_value_31337 in an ignored folder\n")
