"""Keeps the docs from rotting. Run by `meson test` (test "docs").

1. Quoted code: a Markdown line `<!-- code: tutorials/01-autograd.cpp forward -->` followed by a fenced block must
   match, line for line, the region between `// [docs:forward]` and the next `// [docs:end]` of that file (both
   dedented). A chapter quoting a region that is gone or changed fails.
2. Commands: in a ```console block, each line starting with `$ ` is a command and the lines after it (up to the next
   `$ ` or the end of the block) are its expected output. Commands whose program is in the build folder
   (`build/...`) are run from the source folder with `build/` replaced by the real build folder, and their output
   must match exactly (trailing spaces ignored; a line `...` matches any number of lines). Commands that install or
   build (`scripts/...`) are run by CI itself and are skipped here.
3. Quoted output: a line `<!-- output: 08-attention-decoder -->` followed by a fenced block: the block's lines must
   appear contiguously in docs/output/08-attention-decoder.txt (the program's output, written by scripts/make_figures;
   trailing spaces ignored; a line `...` matches any run of lines). A missing output file is an error. Wall-clock
   timings change from run to run, so a quoted line that starts with `time:` matches any line that starts with
   `time:` (programs print every timing on such a line; scripts/make_figures --check ignores them likewise).
   Inside a command's expected output, a `…` within a line matches any text (a time, a path).
   A ```console block preceded by lines `<!-- serve: NAME: TRAIN-FLAGS -->` runs against a real server: each NAME is a
   model trained once by `attend train TRAIN-FLAGS --out NAME.safetensors` in a scratch folder, `attend serve` serves
   them on a free port, and the block's `$ curl` commands are run with `localhost:8080` replaced by its address; the
   server is stopped (SIGTERM, exit 0) after the block.
   A block whose commands or served models read the course's data (`--data NAME` of a data set, or `--task digits`,
   whose default it is) runs only where the program finds that data (`attend data where`); otherwise it is skipped, and a check with
   no problem but skipped blocks exits 77 (Meson's "skipped") naming the missing file.
4. Pictures: every image `![alt](path)` with a relative path in a docs page must exist (relative to the page), e.g.
   `![...](figures/11-step-time.svg)` in docs/*.md needs docs/figures/11-step-time.svg.
5. The precisions: the table under "## The precisions" of docs/reference/adding-a-precision.md names exactly the
   precisions of precision/meson.build's `precisions = [...]`, one row each, in that order.
6. References, not diaries: a commit hash (7 to 40 hexadecimal digits, at least one of them a letter and one a digit,
   standing alone) appears only on a line that says "measured at" (a figure's commit); history lives in git and the
   issues' notes. And no page tells a reader to run with `--figures docs/`, which would overwrite the committed
   pictures in their checkout: chapters say `scripts/run N` (pictures under build/), and scripts/make_figures alone
   redraws docs/figures.
7. Stated ranges: a marker `<!-- range: PROGRAM LOW–HIGH /REGEX/ -->` after a paragraph that states a trained figure
   as a range (scripts/ranges.py says how it reads): the paragraph states LOW–HIGH, and the figure the regular
   expression captures from docs/output/PROGRAM.txt is inside it. scripts/make_figures --check --portable checks the
   same markers against a fresh run on any machine.

8. Notation: every letter in a chapter's equation table (a row `| (N.M) | equation | meaning |`, code spans aside)
   has a row in docs/notation.md: the letter with its subscript as written, or the letter alone.

Usage: check_docs.py SOURCE_DIR BUILD_DIR
       check_docs.py --update-quotes SOURCE_DIR   rewrites every quoted code block (1.) from its region, keeping the
                                                  block's indentation; checks nothing else. For a refactoring or a
                                                  reformatting that moved quoted code: review the diff it leaves.
"""
import atexit
import pathlib
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap

update_quotes = len(sys.argv) > 1 and sys.argv[1] == "--update-quotes"
if update_quotes:
    sys.argv.pop(1)
    sys.argv.append(sys.argv[1])  # no build folder: nothing is run
source = pathlib.Path(sys.argv[1]).resolve()
build = pathlib.Path(sys.argv[2]).resolve()
errors = []
checked_regions = checked_commands = checked_outputs = checked_images = 0

MARK = re.compile(r"<!--\s*code:\s*(\S+)\s+(\S+)\s*-->")
OUTPUT_MARK = re.compile(r"<!--\s*output:\s*(\S+)\s*-->")
SERVE_MARK = re.compile(r"<!--\s*serve:\s*([\w.-]+):\s*(.*?)\s*-->")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*([^)\s]+)")
COMMIT = re.compile(r"(?<!\w)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?!\w)")


def region(path, name):
    text = (source / path).read_text().splitlines()
    begin = [i for i, line in enumerate(text) if line.strip() == f"// [docs:{name}]"]
    if len(begin) != 1:
        return None
    end = next((i for i in range(begin[0] + 1, len(text)) if text[i].strip() == "// [docs:end]"), None)
    if end is None:
        return None
    return textwrap.dedent("\n".join(text[begin[0] + 1 : end])).strip("\n")


def fenced_block(lines, start):
    """The fenced block starting at or after line `start`: (language, body lines, index after the block)."""
    i = start
    while i < len(lines) and not lines[i].startswith("```"):
        i += 1
    if i == len(lines):
        return None, [], i
    lang = lines[i][3:].strip()
    j = i + 1
    while j < len(lines) and not lines[j].startswith("```"):
        j += 1
    return lang, lines[i + 1 : j], j + 1


def line_matches(expected, actual):
    """An expected output line and a printed one: equal, where a `…` in the expected line matches any text."""
    if "…" not in expected:
        return expected == actual
    return re.fullmatch(".*".join(re.escape(part) for part in expected.split("…")), actual) is not None


def matches(expected, actual):
    """Line-by-line comparison where an expected line '...' matches any run of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and line_matches(expected[0], actual[0]) and matches(expected[1:], actual[1:])


def same_line(expected, actual):
    """An output line as quoted and as printed: equal, or both a timing line (`time: ...`), whose numbers vary."""
    return expected == actual or (expected.startswith("time:") and actual.startswith("time:"))


def appears_in(expected, actual):
    """Whether the expected lines appear contiguously in actual, where an expected line '...' matches any run of
    lines. Dynamic programming over (expected line, actual line): linear in the product, whatever the '...'s."""
    n, m = len(expected), len(actual)
    # here[j]: expected[:k] matches a run of actual lines ending just before line j (any start)
    here = [True] * (m + 1)
    for k in range(n):
        if expected[k] == "...":
            reach, nxt = False, []
            for j in range(m + 1):
                reach = reach or here[j]
                nxt.append(reach)
        else:
            nxt = [False] + [here[j] and same_line(expected[k], actual[j]) for j in range(m)]
        here = nxt
    return any(here)


docs = sorted((source / "docs").rglob("*.md")) + [source / "README.md"]
trained = {}  # (name, flags) → model file, for the serve blocks


def trained_model(name, flags, rel):
    """The model `attend train FLAGS` writes, trained once per (name, flags) in a scratch folder (None: it failed)."""
    if (name, flags) not in trained:
        folder = pathlib.Path(tempfile.mkdtemp(prefix="attend-docs-"))
        atexit.register(shutil.rmtree, folder, True)
        path = folder / f"{name}.safetensors"
        argv = [str(build / "apps" / "attend"), "train"] + shlex.split(flags) + ["--out", str(path)]
        run = subprocess.run(argv, cwd=source, capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            errors.append(f"{rel}: training the served model {name} failed: {run.stderr.strip()[-300:]}")
            return None
        trained[(name, flags)] = path
    return trained[(name, flags)]


class Server:
    """`attend serve --port 0` on the given models; `address` is where it listens (None: it did not start)."""

    def __init__(self, models, rel):
        argv = [str(build / "apps" / "attend"), "serve", "--port", "0"]
        for path in models:
            argv += ["--model", str(path)]
        self.rel, self.address = rel, None
        self.process = subprocess.Popen(argv, cwd=source, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        line = self.process.stdout.readline() if ready else ""
        m = re.search(r"listening on http://(\S+) ", line)
        if m:
            self.address = m.group(1)
        else:
            errors.append(f"{rel}: attend serve did not start: {line.strip()}")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = "no exit within 30 s"
        if status != 0:
            errors.append(f"{self.rel}: attend serve ended with {status} on SIGTERM: {self.process.stderr.read()[-300:]}")


def update_quoted_blocks(doc):
    """Rewrites each quoted code block of `doc` from its region; returns how many blocks changed."""
    lines = doc.read_text().splitlines()
    changed, i = 0, 0
    while i < len(lines):
        m = MARK.search(lines[i])
        if not m or not (source / m.group(1)).exists():
            i += 1
            continue
        want = region(m.group(1), m.group(2))
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        k = j + 1
        while k < len(lines) and not lines[k].startswith("```"):
            k += 1
        body = lines[j + 1 : k]
        if want is not None and k < len(lines) and textwrap.dedent("\n".join(body)).strip("\n") != want:
            lines[j + 1 : k] = want.split("\n")
            changed += 1
        i = j + 1
    if changed:
        doc.write_text("\n".join(lines) + "\n")
    return changed


if update_quotes:
    for doc in docs:
        n = update_quoted_blocks(doc)
        if n:
            print(f"{doc.relative_to(source)}: {n} quoted blocks rewritten")
    sys.exit(0)

skipped = {}  # what a block needs that is not found -> how many blocks it kept from running


def missing_data(commands):
    """The message of `attend data where` for the data sets the commands read, or "" when all are found."""
    names = set()
    for command in commands:
        argv = shlex.split(command) if command.startswith("build/") else []
        for k, arg in enumerate(argv[:-1]):
            if arg == "--data" and "/" not in argv[k + 1] and "." not in argv[k + 1]:
                names.add(argv[k + 1])
        if "--task" in argv and argv[argv.index("--task") + 1 :][:1] == ["digits"] and "--data" not in argv:
            names.add("digits")
    if not names:
        return ""
    where = subprocess.run([str(build / "apps" / "attend"), "data", "where", *sorted(names)], capture_output=True,
                           text=True)
    return where.stderr.strip().removeprefix("attend: error: ") if where.returncode != 0 else ""


for doc in docs:
    lines = doc.read_text().splitlines()
    rel = doc.relative_to(source)
    serving = []  # the models of the next ```console block's server
    i = 0
    for number, line in enumerate(lines, 1):
        if "measured at" not in line.lower():
            for commit in COMMIT.findall(line):
                errors.append(f"{rel}:{number}: commit {commit} outside a \"measured at\" line: a page says what holds "
                              "now (a figure's commit on its \"measured at\" line); history lives in git")
        if "--figures docs/" in line:
            errors.append(f"{rel}:{number}: `--figures docs/` overwrites the committed pictures: say `scripts/run N` "
                          "(pictures under build/figures); scripts/make_figures alone redraws docs/figures")
        for target in IMAGE.findall(line):
            if re.match(r"[a-z]+:", target) or target.startswith("/"):
                continue  # not a file of the docs
            checked_images += 1
            if not (doc.parent / target.split("#")[0]).exists():
                errors.append(f"{rel}:{number}: picture {target} not found (scripts/make_figures writes docs/figures)")
    while i < len(lines):
        m = OUTPUT_MARK.search(lines[i])
        if m:
            name = m.group(1)
            _, body, after = fenced_block(lines, i + 1)
            output = source / "docs" / "output" / f"{name}.txt"
            checked_outputs += 1
            expected = [line.rstrip() for line in body]
            if not output.exists():
                errors.append(f"{rel}:{i + 1}: docs/output/{name}.txt not found (scripts/make_figures --only "
                              f"{name.split('-')[0]} writes it)")
            elif not appears_in(expected, [line.rstrip() for line in output.read_text().splitlines()]):
                errors.append(f"{rel}:{i + 1}: the quoted output does not appear in docs/output/{name}.txt:\n"
                              + "\n".join(expected))
            i = after
            continue
        m = MARK.search(lines[i])
        if m:
            path, name = m.group(1), m.group(2)
            _, body, after = fenced_block(lines, i + 1)
            want = region(path, name) if (source / path).exists() else None
            checked_regions += 1
            if want is None:
                errors.append(f"{rel}:{i + 1}: region [docs:{name}] not found (once) in {path}")
            elif textwrap.dedent("\n".join(body)).strip("\n") != want:
                errors.append(f"{rel}:{i + 1}: the quoted block differs from region [docs:{name}] of {path}")
            i = after
            continue
        m = SERVE_MARK.search(lines[i])
        if m:
            serving.append((m.group(1), m.group(2)))
            i += 1
            continue
        if lines[i].startswith("```console"):
            _, body, after = fenced_block(lines, i)
            needs = missing_data([line[2:] for line in body if line.startswith("$ ")] +
                                 [f"build/apps/attend train {flags}" for _, flags in serving])
            if needs:
                skipped[needs] = skipped.get(needs, 0) + 1
                serving = []
                i = after
                continue
            server = None
            if serving:
                models = [trained_model(name, flags, rel) for name, flags in serving]
                server = Server(models, rel) if None not in models else None
                serving = []
            k = 0
            while k < len(body):
                if not body[k].startswith("$ "):
                    k += 1
                    continue
                command = body[k][2:]
                k += 1
                expected = []
                while k < len(body) and not body[k].startswith("$ "):
                    expected.append(body[k].rstrip())
                    k += 1
                argv = shlex.split(command)
                if argv[0] == "curl" and server is not None and server.address:
                    argv = [arg.replace("localhost:8080", server.address) for arg in argv]
                elif not argv[0].startswith("build/"):
                    continue
                else:
                    argv[0] = str(build / argv[0][len("build/") :])
                checked_commands += 1
                try:
                    run = subprocess.run(argv, cwd=source, capture_output=True, text=True, timeout=600)
                except OSError as e:
                    errors.append(f"{rel}: cannot run `{command}`: {e}")
                    continue
                actual = [line.rstrip() for line in run.stdout.splitlines()]
                # blank lines at the end (a server-sent event's) cannot be shown at a block's end
                while expected and not expected[-1]:
                    expected.pop()
                while actual and not actual[-1]:
                    actual.pop()
                if not matches(expected, actual):
                    errors.append(f"{rel}: output of `{command}` differs from the doc:\n--- doc\n" + "\n".join(expected)
                                  + "\n--- actual\n" + "\n".join(actual))
                elif run.returncode != 0:
                    errors.append(f"{rel}: `{command}` exited with status {run.returncode}")
            if server is not None:
                server.stop()
            i = after
            continue
        i += 1

# docs/equations.md names program regions as `tutorials/NN-slug.cpp` region[, region]: each must exist.
equations = source / "docs" / "equations.md"
checked_references = 0
if equations.exists():
    for number, line in enumerate(equations.read_text().splitlines(), 1):
        for m in re.finditer(r"`(tutorials/[^`]+\.cpp)`\s*([^;|`]+)", line):
            program = source / m.group(1)
            text = program.read_text() if program.exists() else ""
            for name in [n.strip() for n in m.group(2).split(",") if n.strip()]:
                checked_references += 1
                if f"// [docs:{name}]" not in text:
                    errors.append(f"docs/equations.md:{number}: region [docs:{name}] not found in {m.group(1)}")

# The notation (8.): every letter of a chapter's equation table has a row in docs/notation.md.
SYMBOL = re.compile(r"(?<![A-Za-z\u0370-\u03ff])([A-Za-z\u0370-\u03ff](?:_\{[^}]*\}|_[A-Za-z0-9]+)?)(?![A-Za-z\u0370-\u03ff])")
OPERATORS = {"Σ", "Π"}  # sums and products, not letters


def notation_problems():
    """The letters (with their subscripts) in the chapters' equation tables that docs/notation.md's symbol column names
    neither as written nor by their letter alone (a row for h_i covers h_Tx; the letter without one is missing)."""
    rows = [line.split("|")[1] for line in (source / "docs" / "notation.md").read_text().splitlines()
            if line.startswith("| ") and not line.startswith("| symbol")]
    named = set(SYMBOL.findall(" ".join(rows)))
    letters = {symbol.split("_")[0] for symbol in named}
    found = []
    for doc in sorted((source / "docs").glob("[0-9][0-9]-*.md")):
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            row = re.match(r"^\| \((\d+\.\d+[a-z]?)\) \| (.*?) \| ", line)
            if not row:
                continue
            for symbol in SYMBOL.findall(re.sub(r"`[^`]*`", "", row.group(2))):
                if symbol.split("_")[0] not in letters | OPERATORS and symbol not in named:
                    found.append(f"docs/{doc.name}:{number}: ({row.group(1)}) uses {symbol}, which docs/notation.md "
                                 "does not list")
    return found


errors += notation_problems()

# The stated ranges (7.): every marker well formed, its range stated beside it, the committed output inside it.
import ranges  # noqa: E402 (scripts/ranges.py, beside this file)

stated_ranges = ranges.ranges(source)
outputs = {p.stem: p.read_text() for p in (source / "docs" / "output").glob("*.txt")}
errors += ranges.problems(source, outputs)

# The precisions' table (5.) against precision/meson.build's list.
registered = re.search(r"^precisions = \[([^\]]*)\]", (source / "precision" / "meson.build").read_text(), re.M)
page = (source / "docs" / "reference" / "adding-a-precision.md").read_text()
table = page.split("## The precisions", 1)[1].split("\n## ", 1)[0] if "## The precisions" in page else ""
listed = re.findall(r"^\| `([\w-]+)` \|", table, re.M)
names = re.findall(r"'([\w-]+)'", registered.group(1)) if registered else []
if not names or listed != names:
    errors.append(f"docs/reference/adding-a-precision.md: the precisions' table lists {listed}, precision/meson.build "
                  f"registers {names}")

for e in errors:
    print("error:", e)
print(f"docs: {checked_regions} quoted regions, {checked_commands} commands, {checked_outputs} quoted outputs, "
      f"{checked_images} pictures, {checked_references} equation references and {len(stated_ranges)} stated ranges "
      f"checked, {len(errors)} problems")
if skipped and not errors:
    for needs, blocks in skipped.items():
        print(f"docs: {blocks} command blocks skipped: needs data: {needs}")
    sys.exit(77)
sys.exit(1 if errors or checked_regions + checked_commands + checked_outputs == 0 else 0)
