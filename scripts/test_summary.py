"""Counts test cases after `meson test` and prints the closing line "N passed, N failed".

Reads meson-logs/testlog.json (one JSON object per meson test) and, for Boost.Test programs, the JUnit file each one
writes as <test name>.junit.xml (per-case results). A program that crashed or was stopped by a sanitizer writes no
JUnit file; it then counts as one failed case, so a crash can never look like a pass. Exits 1 when nothing ran.
Also writes <build>/test-summary.txt ("passed failed") for .ci/run to add up several builds.
"""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET

build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
log = build / "meson-logs" / "testlog.json"
if not log.exists():
    print("test summary: no meson test log in", log)
    print("0 passed, 0 failed")
    sys.exit(1)

junit_files = {p.name[: -len(".junit.xml")]: p for p in build.rglob("*.junit.xml") if p.parent.name != "meson-logs"}
passed = failed = 0
for line in log.read_text().splitlines():
    if not line.strip():
        continue
    test = json.loads(line)
    name = test["name"].split(" / ")[-1]  # "project:suite / name"
    ok = test["result"] in ("OK", "EXPECTEDFAIL", "SKIP")
    junit = junit_files.get(name)
    if junit is None:
        passed, failed = passed + ok, failed + (not ok)
        continue
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    cases = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    if not ok and bad == 0:
        bad = 1  # the program failed outside any case (crash, sanitizer, timeout)
    print(f"  {name}: {cases - bad - skipped} of {cases} Boost test cases passed")
    passed, failed = passed + cases - bad - skipped, failed + bad

(build / "test-summary.txt").write_text(f"{passed} {failed}\n")
if passed + failed == 0:
    print("test summary: no test ran")
    print("0 passed, 0 failed")
    sys.exit(1)
print(f"{passed} passed, {failed} failed")
