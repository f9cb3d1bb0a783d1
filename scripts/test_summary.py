"""Counts test cases after `meson test` and prints the closing line "N passed, N failed, N skipped".

Reads meson-logs/testlog.json (one JSON object per meson test) and, for Boost.Test programs, the JUnit file each one
writes as <test name>.junit.xml (per-case results). A program that crashed or was stopped by a sanitizer writes no
JUnit file; it then counts as one failed case, so a crash can never look like a pass. Exits 1 when nothing ran.

A skipped case is one whose precondition failed (tests/needs_data.hpp: the course's data is not found;
tests/needs_precision.hpp: this CPU or build cannot run a precision) or a program that exited 77 (Meson's SKIP: a
tutorial or test that needs the data or a browser). Each reason is listed once, with the cases it skipped, before the
closing line.
Also writes <build>/test-summary.txt ("passed failed skipped") for .ci/run to add up several builds, and
<build>/test-skips.json (each skip's reason and what it skipped) for scripts/check_skips.py.
"""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET

build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
log = build / "meson-logs" / "testlog.json"
if not log.exists():
    print("test summary: no meson test log in", log)
    print("0 passed, 0 failed, 0 skipped")
    sys.exit(1)


def reason_in(text):
    """The line that says why a case or program was skipped: the one naming the data, precision or other precondition
    it needs, else the last one."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in lines:
        at = max(line.find("needs data:"), line.find("needs precision "))
        if at < 0 and "precondition failed: " in line:  # any other precondition's message (needs amx_int8: …)
            at = line.find("precondition failed: ") + len("precondition failed: ")
        if at >= 0:
            return line[at:].rstrip("'\"")  # Boost quotes a precondition's message
    skipped = [line for line in lines if "skipped" in line]
    return (skipped or lines or ["no reason given"])[-1]


def skipped_cases(root):
    """(case name, reason) of every skipped test case of a JUnit document."""
    found = []
    for case in root.iter("testcase"):
        if case.find("skipped") is None:
            continue
        out = case.find("system-out")
        name = (case.get("classname", "") + "/" + case.get("name", "")).strip("/")
        found.append((name, reason_in(out.text if out is not None else "")))
    return found


junit_files = {p.name[: -len(".junit.xml")]: p for p in build.rglob("*.junit.xml") if p.parent.name != "meson-logs"}
passed = failed = skipped = 0
skips = {}  # reason -> names of what it skipped
for line in log.read_text().splitlines():
    if not line.strip():
        continue
    test = json.loads(line)
    name = test["name"].split(" / ")[-1]  # "project:suite / name"
    ok = test["result"] in ("OK", "EXPECTEDFAIL")
    junit = junit_files.get(name)
    if junit is None:
        if test["result"] == "SKIP":
            skipped += 1
            skips.setdefault(reason_in(test.get("stdout", "") + "\n" + test.get("stderr", "")), []).append(name)
        else:
            passed, failed = passed + ok, failed + (not ok)
        continue
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    # Boost's "tests" leaves out the skipped cases; every case, run or not, is a <testcase>
    cases = sum(1 for _ in root.iter("testcase")) or sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped_here = skipped_cases(root)
    if not ok and bad == 0:
        bad = 1  # the program failed outside any case (crash, sanitizer, timeout)
    print(f"  {name}: {cases - bad - len(skipped_here)} of {cases} Boost test cases passed" +
          (f", {len(skipped_here)} skipped" if skipped_here else ""))
    for case, reason in skipped_here:
        skips.setdefault(reason, []).append(f"{name}: {case}")
    passed, failed, skipped = passed + cases - bad - len(skipped_here), failed + bad, skipped + len(skipped_here)

for reason, names in skips.items():
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    print(f"  skipped {len(names)} ({shown}): {reason}")
(build / "test-summary.txt").write_text(f"{passed} {failed} {skipped}\n")
(build / "test-skips.json").write_text(json.dumps(skips, indent=1) + "\n")
if passed + failed + skipped == 0:
    print("test summary: no test ran")
    print("0 passed, 0 failed, 0 skipped")
    sys.exit(1)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
