"""`attend data fetch` against a local HTTP server (tests/fetch/archives.py; no internet needed).

    fetch_test.py ATTEND failures   every way a fetch can fail, on a small archive made here: each gives one line on
                                    standard error, exit status 1 (2 for a usage error), and leaves no file behind
                                    but the part of a download a next run resumes (then checked to be resumed);
    fetch_test.py ATTEND real       the five data sets as archives made from the data this machine has (found by the
                                    program's own rule: attend data where), fetched into an empty folder: every file
                                    byte-identical (SHA-256) to the copy they were made from; a stopped download
                                    resumed to the same bytes; a second run finds them already there. Without the
                                    data: skipped (exit 77) with the reason naming the missing file.
"""
import hashlib
import pathlib
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import archives  # noqa: E402

ATTEND = sys.argv[1]
FAILURES = 0


def check(condition, what):
    global FAILURES
    if not condition:
        FAILURES += 1
        print("FAILED:", what)
    return condition


def fetch(*args):
    return subprocess.run([ATTEND, "data", "fetch", *args], capture_output=True, text=True, timeout=120)


def files_in(folder):
    return sorted(str(p.relative_to(folder)) for p in pathlib.Path(folder).rglob("*") if p.is_file())


def one_line_failure(run, status, parts, what):
    lines = run.stderr.splitlines()
    check(run.returncode == status, f"{what}: exit status {run.returncode}, expected {status}; {run.stderr}")
    check(len(lines) == 1 and lines[0].startswith("attend: error: "), f"{what}: not one error line: {run.stderr!r}")
    for part in parts:
        check(part in run.stderr, f"{what}: {part!r} not in {run.stderr!r}")


def sources_file(folder, entries):
    path = pathlib.Path(folder) / "sources.json"
    path.write_text("{" + ", ".join(f'"{k}": {{"url": "{u}", "sha256": "{s}"}}' for k, (u, s) in entries.items()) + "}")
    return str(path)


def failures():
    work = pathlib.Path(tempfile.mkdtemp(prefix="attend-fetch-"))
    served = work / "served"
    served.mkdir()
    with zipfile.ZipFile(served / "tiny.zip", "w") as z:  # stored, so that half the file is half the member
        z.writestr("hin.txt", "".join(f"English {k}.\tHindi {k}.\tcredit {k}\n" for k in range(4000)))
    tiny_sha = archives.sha256(served / "tiny.zip")
    tiny_size = (served / "tiny.zip").stat().st_size
    with archives.Server(served) as server:
        def run(url, sha, *extra, name="hin-eng"):
            out = work / "out"
            return fetch(name, "--dir", str(out), "--sources", sources_file(work, {name: (url, sha)}), *extra), out

        # the server's file is not the one recorded: deleted, nothing written
        got, out = run(server.url("tiny.zip"), "0" * 64)
        one_line_failure(got, 1, [server.url("tiny.zip"), "SHA-256 " + tiny_sha, "expected " + "0" * 64], "wrong sum")
        check(files_in(out) == [], f"wrong sum left {files_in(out)}")
        # a shorter file served as if whole
        got, out = run(server.url("short/tiny.zip"), tiny_sha)
        one_line_failure(got, 1, ["expected " + tiny_sha, f"{tiny_size // 2:,} bytes"], "truncated")
        check(files_in(out) == [], f"truncated left {files_in(out)}")
        # the connection closed in the middle: the part is kept, and the next run asks for the rest only
        got, out = run(server.url("stop/tiny.zip"), tiny_sha)
        part = out / "downloads" / "hin-eng.zip.part"
        one_line_failure(got, 1, [server.url("stop/tiny.zip"), f"{tiny_size // 2:,} bytes kept in {part}"], "stopped")
        check(files_in(out) == ["downloads/hin-eng.zip.part"], f"stopped left {files_in(out)}")
        del server.requests[:]
        got, out = run(server.url("tiny.zip"), tiny_sha)
        check(server.requests == [("/tiny.zip", f"bytes={tiny_size // 2}-")], f"not resumed: {server.requests}")
        # … and the whole archive is right, but what it makes is not the recorded hin-eng: nothing is written
        one_line_failure(got, 1, ["tatoeba/hin-eng.tsv made from hin.txt", "not the recorded version"], "not recorded")
        check(files_in(out) == [], f"a wrong conversion left {files_in(out)}")
        # a server that sends nothing
        got, out = run(server.url("stall/tiny.zip"), tiny_sha, "--stall-seconds", "1")
        one_line_failure(got, 1, [server.url("stall/tiny.zip"), "download " + server.url("stall/tiny.zip")], "stall")
        check(files_in(out) == [], f"stall left {files_in(out)}")
        # no server at all (no network): the address and how to place the file by hand
        got, out = run("http://127.0.0.1:9/hin-eng.zip", tiny_sha)
        one_line_failure(got, 1, ["http://127.0.0.1:9/hin-eng.zip", f"put it at {out}/downloads/hin-eng.zip"], "no net")
        check(files_in(out) == [], f"no network left {files_in(out)}")
        # an archive placed by hand that is not the recorded one: named, and kept (it is the user's)
        placed = work / "out" / "downloads" / "hin-eng.zip"
        placed.parent.mkdir(parents=True)
        placed.write_bytes(b"not a zip")
        got, out = run(server.url("tiny.zip"), tiny_sha)
        one_line_failure(got, 1, [f"{placed}: SHA-256"], "placed by hand")
        check(placed.read_bytes() == b"not a zip", "a file placed by hand was changed")
        placed.unlink()
        placed.parent.rmdir()
    # usage errors: exit 2, one line
    one_line_failure(fetch("klingon-eng"), 2, ['no data set "klingon-eng"', "spa-eng, eng-fra"], "unknown name")
    bad = work / "bad.json"
    bad.write_text('{"spa-eng": "http://x"}')
    one_line_failure(fetch("spa-eng", "--sources", str(bad)), 2, [f"--sources {bad}", '"spa-eng" must be'], "sources")


def real():
    names = ["spa-eng", "eng-fra", "hin-eng", "eng-jpn", "digits"]
    where = subprocess.run([ATTEND, "data", "where", *names], capture_output=True, text=True)
    if where.returncode != 0:
        print("skipped: needs the data sets to make their archives:", where.stderr.strip().removeprefix("attend: error: "))
        sys.exit(77)
    data_dir = pathlib.Path(where.stdout.splitlines()[0]).parent.parent
    work = pathlib.Path(tempfile.mkdtemp(prefix="attend-fetch-real-"))
    served = work / "served"
    served.mkdir()
    paths = archives.make_archives(data_dir, served)
    expected = {}  # every file the five sets write, with the SHA-256 of the copy the archives were made from
    for name in names:
        for f in ["tatoeba/%s.tsv" % name, "tatoeba/attribution/%s.attribution.txt" % name, "digits/digits.csv.gz"]:
            if (data_dir / f).is_file() and (name == "digits") == f.startswith("digits"):
                expected[f] = hashlib.sha256((data_dir / f).read_bytes()).hexdigest()
    # hin-eng with one credit line changed: its first file comes out right, its second not, so neither is written
    with zipfile.ZipFile(paths["hin-eng"]) as z:
        changed = z.read("hin.txt").replace(b"CC-BY 2.0 (France)", b"CC-BY 2.0 (Frankreich)", 1)
    with zipfile.ZipFile(served / "hin-eng-changed.zip", "w") as z:
        z.writestr("hin.txt", changed)
    with archives.Server(served) as server:
        url, sha = server.url("hin-eng-changed.zip"), archives.sha256(served / "hin-eng-changed.zip")
        got = fetch("hin-eng", "--dir", str(work / "changed"), "--sources", sources_file(work, {"hin-eng": (url, sha)}))
        one_line_failure(got, 1, ["tatoeba/attribution/hin-eng.attribution.txt made from hin.txt"], "changed credit")
        check(files_in(work / "changed") == [], f"a half-right archive left {files_in(work / 'changed')}")
    with archives.Server(served) as server:
        entries = {name: (server.url(path.name), archives.sha256(path)) for name, path in paths.items()}
        entries["spa-eng"] = (server.url("stop/spa-eng.zip"), entries["spa-eng"][1])
        out = work / "out"
        stopped = fetch("--dir", str(out), "--sources", sources_file(work, entries))
        one_line_failure(stopped, 1, ["bytes kept in"], "stopped mid-file")
        entries["spa-eng"] = (server.url("spa-eng.zip"), entries["spa-eng"][1])
        got = fetch("--dir", str(out), "--sources", sources_file(work, entries))
        check(got.returncode == 0, f"fetch failed: {got.stderr}")
        check(any(r[1] and r[0] == "/spa-eng.zip" for r in server.requests), f"not resumed: {server.requests}")
        check(files_in(out) == sorted(expected), f"fetched {files_in(out)}, expected {sorted(expected)}")
        for f, sha in expected.items():
            if (out / f).is_file():
                check(hashlib.sha256((out / f).read_bytes()).hexdigest() == sha, f"{f} differs from {data_dir / f}")
        again = fetch("--dir", str(out), "--sources", sources_file(work, entries))
        check(again.returncode == 0 and again.stdout.count("already in") == len(names), f"second run: {again.stdout}")
    print(f"{len(expected)} files fetched, byte-identical to {data_dir}")


if sys.argv[2] == "failures":
    failures()
else:
    real()
print("FAILED" if FAILURES else "passed", FAILURES)
sys.exit(1 if FAILURES else 0)
