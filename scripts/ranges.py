"""The ranges the chapters state for what their training programs print, in machine-readable form.

A chapter that states a trained figure as a range measured over trainings (seeds, machine kinds) writes, right after the
paragraph or table that states it, one marker per figure:

    <!-- range: 04-bottleneck 97–100 /^\\s+5\\s+(\\S+) %/ -->

A marker is a line of its own. PROGRAM is the tutorial whose output prints the figure; LOW–HIGH the range as the paragraph states it (the same text
must appear in that paragraph, so that prose and marker cannot part); /REGEX/ a Python regular expression whose first
group captures the figure from exactly one line of the program's output (a trailing % or thousands commas are
dropped); a marker ending in `×100` states in per cent a figure the program prints as a fraction (0.9930 → 99.3 %).
A figure is inside its range when, rounded to the decimals of the range's bounds, LOW ≤ figure ≤ HIGH.

Read by scripts/check_docs.py (every marker well formed, stated beside it, and true of the committed output in
docs/output/) and by scripts/make_figures --check --portable (true of a fresh run on this machine, with any --seed).
"""
import pathlib
import re

MARK = re.compile(r"<!--\s*range:\s*(\S+)\s+(-?[\d.]+)–(-?[\d.]+)\s+/(.*)/(\s+×100)?\s*-->")


class Range:
    def __init__(self, doc, line, program, low, high, pattern, paragraph, scale=1):
        self.doc, self.line, self.program, self.scale = doc, line, program, scale
        self.low_text, self.high_text, self.pattern = low, high, pattern
        self.paragraph = paragraph

    @property
    def where(self):
        return f"{self.doc}:{self.line}"

    def decimals(self):
        return max(len(t.split(".")[1]) if "." in t else 0 for t in (self.low_text, self.high_text))

    def figure(self, output):
        """The figure the marker reads from `output` (a program's standard output), or an error message."""
        try:
            regex = re.compile(self.pattern)
        except re.error as e:
            return None, f"bad regular expression /{self.pattern}/: {e}"
        found = [m for m in (regex.search(line) for line in output.splitlines()) if m]
        if len(found) != 1:
            return None, f"/{self.pattern}/ matches {len(found)} lines of {self.program}'s output, not one"
        text = found[0].group(1).rstrip("%").replace(",", "")
        try:
            return float(text) * self.scale, None
        except ValueError:
            return None, f"/{self.pattern}/ captured {text!r}, not a number"

    def check(self, output):
        """None when the output's figure is inside the range, else what is wrong."""
        value, error = self.figure(output)
        if error:
            return f"{self.where}: {error}"
        rounded = round(value, self.decimals())
        if not float(self.low_text) <= rounded <= float(self.high_text):
            return (f"{self.where}: {self.program} printed {value / self.scale:g}, outside the stated range "
                    f"{self.low_text}–{self.high_text} (/{self.pattern}/)")
        return None


def paragraph_before(lines, index):
    """The lines of the paragraph (or table) just above line `index`, back to a blank line or another marker."""
    start = index
    while start > 0 and lines[start - 1].strip() and not MARK.search(lines[start - 1]):
        start -= 1
    # a run of markers shares the paragraph above the first of them
    while start > 0 and MARK.search(lines[start - 1]):
        start -= 1
        while start > 0 and lines[start - 1].strip() and not MARK.search(lines[start - 1]):
            start -= 1
    return "\n".join(line for line in lines[start:index] if not MARK.search(line))


def ranges(source, program=None):
    """Every range marker in docs/*.md (the chapters), optionally only those of one program."""
    found = []
    for doc in sorted((pathlib.Path(source) / "docs").glob("*.md")):
        lines = doc.read_text().splitlines()
        for index, line in enumerate(lines):
            m = MARK.match(line.strip())
            if m and (program is None or m.group(1) == program):
                found.append(Range(f"docs/{doc.name}", index + 1, m.group(1), m.group(2), m.group(3), m.group(4),
                                   paragraph_before(lines, index), 100 if m.group(5) else 1))
    return found


def malformed(source):
    """Lines that start a range marker the pattern above does not read."""
    bad = []
    for doc in sorted((pathlib.Path(source) / "docs").glob("*.md")):
        for index, line in enumerate(doc.read_text().splitlines()):
            if re.match(r"\s*<!--\s*range:", line) and not MARK.match(line.strip()):
                bad.append(f"docs/{doc.name}:{index + 1}: a range marker not of the form "
                           "<!-- range: PROGRAM LOW–HIGH /REGEX/ [×100] -->")
    return bad


def problems(source, outputs):
    """What the docs check reports: malformed markers, ranges not stated in their paragraph, committed figures
    outside their range. `outputs` maps a program's name to its committed output text."""
    found = malformed(source)
    for r in ranges(source):
        stated = f"{r.low_text}–{r.high_text}"
        if stated not in r.paragraph:
            found.append(f"{r.where}: the range {stated} is not stated in the paragraph above the marker")
        if r.program not in outputs:
            found.append(f"{r.where}: no output docs/output/{r.program}.txt")
            continue
        problem = r.check(outputs[r.program])
        if problem:
            found.append(problem + " (the committed output)")
    return found


def widen(source, logs):
    """Widens every range to hold the figures in `logs` (the `range: DOC:LINE /PATTERN/ LOW–HIGH: FIGURE` lines
    scripts/make_figures --check --portable prints), in its marker and in the paragraph that states it; ranges that share a paragraph and a range stay one
    range. Returns what changed, one line each."""
    seen = {}  # (doc, pattern) -> figures: a marker is known by its pattern, which stays when lines move
    for text in logs:
        for m in re.finditer(r"^range: (\S+):\d+ /(.*)/ \S+: (\S+)$", text, re.M):
            if m.group(3) != "not found":
                seen.setdefault((m.group(1), m.group(2)), []).append(float(m.group(3)))
    changes = []
    for doc in sorted({where[0] for where in seen}):
        path = pathlib.Path(source) / doc
        lines = path.read_text().splitlines()
        groups = {}  # (paragraph, stated range) -> the markers' lines and every figure they saw
        for r in ranges(source):
            if r.doc == doc and (doc, r.pattern) in seen:
                key = (r.paragraph, f"{r.low_text}–{r.high_text}")
                groups.setdefault(key, (r, []))[1].extend(seen[(doc, r.pattern)])
        for (paragraph, stated), (r, figures) in groups.items():
            # rounded as check() rounds them
            low = min(float(r.low_text), round(min(figures), r.decimals()))
            high = max(float(r.high_text), round(max(figures), r.decimals()))
            wider = f"{low:.{r.decimals()}f}–{high:.{r.decimals()}f}"
            if wider == stated:
                continue
            start = r.line - 1
            while start > 0 and lines[start - 1].strip():
                start -= 1
            end = r.line
            while end < len(lines) and lines[end].strip():
                end += 1
            for k in range(start, end):  # the paragraph states it anywhere; a marker as its own field
                old = f" {stated} " if MARK.match(lines[k].strip()) else stated
                lines[k] = lines[k].replace(old, old.replace(stated, wider))
            changes.append(f"{doc}:{r.line}: {stated} → {wider} ({len(figures)} figures seen)")
        path.write_text("\n".join(lines) + "\n")
    return changes


if __name__ == "__main__":
    import sys

    if len(sys.argv) < 3 or sys.argv[1] != "widen":
        sys.exit("usage: ranges.py widen LOG...   (LOG: what scripts/make_figures --check --portable printed)")
    root = pathlib.Path(__file__).resolve().parent.parent
    for change in widen(root, [pathlib.Path(p).read_text() for p in sys.argv[2:]]):
        print(change)
