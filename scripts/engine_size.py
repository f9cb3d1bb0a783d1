"""The reference engine stays small enough to read in one sitting (meson test "engine").

docs/reference/tape.md's table "Reading the engine" lists the files of autograd/ in reading order, each row numbered
and with its lines of code (neither blank nor comment lines). This recounts every row, checks that the rows cover every
file of autograd/ exactly once (every file of the folder is in the reading order: a row without a number is an error),
that the sentence below the table states the folder's total, and that the folder holds at most 2,000 lines of code. A
failure names the row, the number stated and the number counted.

Usage: engine_size.py SOURCE_DIR"""
import pathlib
import re
import sys

LIMIT = 2000
source = pathlib.Path(sys.argv[1]).resolve()
engine = source / "autograd"
doc = source / "docs" / "reference" / "tape.md"


def code_lines(path):
    count, in_block = 0, False
    for line in path.read_text().splitlines():
        s = line.strip()
        if in_block:
            in_block = "*/" not in s
            continue
        if not s or s.startswith("//"):
            continue
        if s.startswith("/*"):
            in_block = "*/" not in s
            continue
        count += 1
    return count


def files_of(cell):
    names = []
    for pattern in re.findall(r"`([^`]+)`", cell):
        found = sorted(engine.glob(pattern))
        if not found:
            raise SystemExit(f"error: {doc.relative_to(source)}: `{pattern}` matches no file in autograd/")
        names += found
    return names


errors, seen, everything = [], [], 0
text = doc.read_text()
for row in re.findall(r"^\| *([0-9]+|[–-]) *\| *(.+?) *\| *.+? *\| *([0-9,]+) *\|$", text, re.M):
    number, cell, stated = row[0], row[1], int(row[2].replace(",", ""))
    paths = files_of(cell)
    counted = sum(code_lines(p) for p in paths)
    seen += paths
    everything += counted
    if not number.isdigit():
        errors.append(f"row {number} ({cell}) has no place in the reading order: every file of autograd/ needs one")
    if counted != stated:
        errors.append(f"row {number} ({cell}): the table says {stated} lines of code, counted {counted}")
missing = sorted(p.name for p in engine.iterdir() if p.suffix in (".hpp", ".cpp") and p not in seen)
twice = sorted({p.name for p in seen if seen.count(p) > 1})
if missing:
    errors.append("files of autograd/ the table does not list: " + ", ".join(missing))
if twice:
    errors.append("files the table lists twice: " + ", ".join(twice))
total = re.search(r"([0-9,]+) in the folder, all of them in the reading order", text)
if not total:
    errors.append("the sentence 'N in the folder, all of them in the reading order' is missing below the table")
elif int(total.group(1).replace(",", "")) != everything:
    errors.append(f"the total says {total.group(1)}, counted {everything:,}")
if everything > LIMIT:
    errors.append(f"autograd/ holds {everything:,} lines of code, more than {LIMIT:,}")
for e in errors:
    print("error:", e)
print(f"engine: {len(seen)} files, {everything:,} lines of code in autograd/, all in the reading order")
sys.exit(1 if errors or not seen else 0)
