"""Whether the test cases skipped in CI are ones this machine may skip: usage check_skips.py ALLOWED BUILD...

Reads each build's test-skips.json (written by scripts/test_summary.py: reason -> what it skipped) and ALLOWED
(.ci/allowed-skips: a /proc/cpuinfo flag, then the start of a reason). A skip is allowed when its reason starts with an
allowed one and this CPU lacks that flag (a CPU with the instructions must run the arithmetic). Prints each skip as
allowed or not, and exits 1 when any is not allowed.
"""
import json
import pathlib
import sys


def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The flags of the first processor in /proc/cpuinfo."""
    for line in pathlib.Path(cpuinfo).read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def allowed_rules(path):
    """(flag, reason start) of every rule in the file."""
    rules = []
    for line in pathlib.Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            flag, reason = line.split(None, 1)
            rules.append((flag, reason.strip()))
    return rules


def verdict(reason, rules, flags):
    """Why a skip with this reason is allowed here, or None when it is not."""
    for flag, start in rules:
        if reason.startswith(start):
            return f"allowed: this CPU has no {flag}" if flag not in flags else None
    return None


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    rules, flags = allowed_rules(argv[1]), cpu_flags()
    bad = 0
    for build in argv[2:]:
        path = pathlib.Path(build) / "test-skips.json"
        skips = json.loads(path.read_text()) if path.exists() else {}
        for reason, names in skips.items():
            why = verdict(reason, rules, flags)
            bad += why is None
            print(f"ci: {build}: {len(names)} skipped ({why or 'NOT allowed on this machine'}): {reason}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
