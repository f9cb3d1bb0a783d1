"""Keeps the docs from rotting. Run by `meson test` (test "docs").

1. Quoted code: a Markdown line `<!-- code: tutorials/01-autograd.cpp forward -->` followed by a fenced block must
   match, line for line, the region between `// [docs:forward]` and the next `// [docs:end]` of that file (both
   dedented). A chapter quoting a region that is gone or changed fails.
2. Commands: in a ```console block, each line starting with `$ ` is a command and the lines after it (up to the next
   `$ ` or the end of the block) are its expected output. Commands whose program is in the build folder
   (`build/...`) are run from the source folder with `build/` replaced by the real build folder, and their output
   must match exactly (trailing spaces ignored; a line `...` matches any number of lines). Commands that install or
   build (`scripts/...`) are run by CI itself and are skipped here.

Usage: check_docs.py SOURCE_DIR BUILD_DIR
"""
import pathlib
import re
import shlex
import subprocess
import sys
import textwrap

source = pathlib.Path(sys.argv[1]).resolve()
build = pathlib.Path(sys.argv[2]).resolve()
errors = []
checked_regions = checked_commands = 0

MARK = re.compile(r"<!--\s*code:\s*(\S+)\s+(\S+)\s*-->")


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


def matches(expected, actual):
    """Line-by-line comparison where an expected line '...' matches any run of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


docs = sorted((source / "docs").rglob("*.md")) + [source / "README.md"]
for doc in docs:
    lines = doc.read_text().splitlines()
    rel = doc.relative_to(source)
    i = 0
    while i < len(lines):
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
        if lines[i].startswith("```console"):
            _, body, after = fenced_block(lines, i)
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
                if not argv[0].startswith("build/"):
                    continue
                argv[0] = str(build / argv[0][len("build/") :])
                checked_commands += 1
                try:
                    run = subprocess.run(argv, cwd=source, capture_output=True, text=True, timeout=600)
                except OSError as e:
                    errors.append(f"{rel}: cannot run `{command}`: {e}")
                    continue
                actual = [line.rstrip() for line in run.stdout.splitlines()]
                while expected and not expected[-1]:
                    expected.pop()
                if not matches(expected, actual):
                    errors.append(f"{rel}: output of `{command}` differs from the doc:\n--- doc\n" + "\n".join(expected)
                                  + "\n--- actual\n" + "\n".join(actual))
                elif run.returncode != 0:
                    errors.append(f"{rel}: `{command}` exited with status {run.returncode}")
            i = after
            continue
        i += 1

for e in errors:
    print("error:", e)
print(f"docs: {checked_regions} quoted regions and {checked_commands} commands checked, {len(errors)} problems")
sys.exit(1 if errors or checked_regions + checked_commands == 0 else 0)
