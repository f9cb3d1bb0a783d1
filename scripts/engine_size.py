"""The reference engine stays small enough to read in one sitting (meson test "engine").

docs/reference/tape.md's table "Reading the engine" lists the files of autograd/ in reading order, each row with its
lines of code (neither blank nor comment lines). This recounts every row, checks that the rows cover every file of
autograd/ exactly once, that the sentence below the table states the two totals, and that the numbered rows (the
reading order) hold at most 2,000 lines of code. A failure names the row, the number stated and the number counted.

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


errors, seen, ordered, everything = [], [], 0, 0
text = doc.read_text()
for row in re.findall(r"^\| *([0-9]+|–) *\| *(.+?) *\| *.+? *\| *([0-9,]+) *\|$", text, re.M):
    number, cell, stated = row[0], row[1], int(row[2].replace(",", ""))
    paths = files_of(cell)
    counted = sum(code_lines(p) for p in paths)
    seen += paths
    everything += counted
    if number != "–":
        ordered += counted
    if counted != stated:
        errors.append(f"row {number} ({cell}): the table says {stated} lines of code, counted {counted}")
missing = sorted(p.name for p in engine.iterdir() if p.suffix in (".hpp", ".cpp") and p not in seen)
twice = sorted({p.name for p in seen if seen.count(p) > 1})
if missing:
    errors.append("files of autograd/ the table does not list: " + ", ".join(missing))
if twice:
    errors.append("files the table lists twice: " + ", ".join(twice))
totals = re.search(r"([0-9,]+) in the reading order, ([0-9,]+) in the folder", text)
if not totals:
    errors.append("the sentence 'N in the reading order, M in the folder' is missing below the table")
elif [int(t.replace(",", "")) for t in totals.groups()] != [ordered, everything]:
    errors.append(f"the totals say {totals.group(1)} and {totals.group(2)}, counted {ordered:,} and {everything:,}")
if ordered > LIMIT:
    errors.append(f"the reading order holds {ordered:,} lines of code, more than {LIMIT:,}")
for e in errors:
    print("error:", e)
print(f"engine: {len(seen)} files, {ordered:,} lines of code in the reading order, {everything:,} in autograd/")
sys.exit(1 if errors or not seen else 0)
