"""Archives like the ones `attend data fetch` downloads, and an HTTP server on 127.0.0.1 that serves them.

make_archives(data_dir, out_dir) builds, from a data folder that holds the course's files, one archive per data set
with the member `attend data fetch` reads, undoing each recorded conversion (the columns swapped back, the attribution
lines put back as a third column, the digits unzipped): converting them again must give the same bytes. The archives'
own bytes differ from the upstream ones (zip's dates and compression), so the test gives their SHA-256 with --sources.

Server(folder) serves the folder's files with HTTP range requests (206), as the public hosts do, and three faults by
path prefix: /stop/NAME sends the headers of the whole file and half its bytes, then closes the connection; /short/NAME
sends the first half as if it were the whole file; /stall/NAME sends the headers and then nothing. It records each
request's path and Range header.

Run as a program (python3 tests/fetch/archives.py DATA_DIR) it makes the archives in a temporary folder, serves
them and prints the --sources file to give `attend data fetch`, until interrupted: how a clone without the data gets it
from a copy on another machine (and how the acceptance of docs/data.md was checked).
"""
import gzip
import hashlib
import http.server
import json
import os
import pathlib
import sys
import tempfile
import threading
import zipfile


def _lines(path):
    return pathlib.Path(path).read_bytes().decode("utf-8").split("\n")[:-1]


def _zip(out, members):
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def _columns(rows, order):
    return "".join("\t".join(row[k] for k in order) + "\n" for row in rows).encode("utf-8")


def make_archives(data_dir, out_dir):
    """Writes spa-eng.zip, eng-fra.zip, hin-eng.zip, eng-jpn.zip and digits.zip in out_dir; returns {name: path}."""
    data, out = pathlib.Path(data_dir), pathlib.Path(out_dir)
    made = {}
    spa = [line.split("\t") for line in _lines(data / "tatoeba/spa-eng.tsv")]
    made["spa-eng"] = ("spa-eng/spa.txt", _columns(spa, [1, 0]))
    made["eng-fra"] = ("data/eng-fra.txt", (data / "tatoeba/eng-fra.tsv").read_bytes())
    for name, member, order in (("hin-eng", "hin.txt", [1, 0]), ("eng-jpn", "jpn.txt", [0, 1])):
        pairs = [line.split("\t") for line in _lines(data / f"tatoeba/{name}.tsv")]
        credits = _lines(data / f"tatoeba/attribution/{name}.attribution.txt")
        rows = [[pair[order[0]], pair[order[1]], credit] for pair, credit in zip(pairs, credits)]
        made[name] = (member, _columns(rows, [0, 1, 2]))
    # UCI's file ends with an empty line and lines with CR LF in some copies: the conversion drops both
    digits = gzip.decompress((data / "digits/digits.csv.gz").read_bytes()).replace(b"\n", b"\r\n") + b"\r\n"
    made["digits"] = ("optdigits.tes", digits)
    paths = {}
    for name, (member, payload) in made.items():
        paths[name] = out / f"{name}.zip"
        _zip(paths[name], {member: payload, "_about.txt": b"made by tests/fetch/archives.py\n"})
    return paths


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.requests.append((self.path, self.headers.get("Range")))
        fault, _, name = self.path.lstrip("/").partition("/")
        if fault not in ("stop", "short", "stall"):
            fault, name = "", self.path.lstrip("/")
        path = pathlib.Path(self.server.folder) / name
        if not name or "/" in name or not path.is_file():
            self.send_error(404)
            return
        body = path.read_bytes()
        start = 0
        ranged = self.headers.get("Range", "")
        if ranged.startswith("bytes=") and ranged.endswith("-") and not fault:
            start = int(ranged[6:-1])
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        if fault == "short":
            body = body[: len(body) // 2]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if fault == "stall":
            self.server.release.wait(30)
            return
        self.wfile.write(body[start : len(body) // 2] if fault == "stop" else body[start:])
        self.wfile.flush()
        if fault == "stop":
            self.close_connection = True


class Server:
    """A threaded HTTP server on 127.0.0.1 (a free port) serving `folder`, stopped by stop() or `with`."""

    def __init__(self, folder):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.folder = folder
        self.httpd.requests = []
        self.httpd.release = threading.Event()
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    @property
    def requests(self):
        return self.httpd.requests

    def stop(self):
        self.httpd.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: archives.py DATA_DIR")
    folder = tempfile.mkdtemp(prefix="attend-archives-")
    paths = make_archives(sys.argv[1], folder)
    server = Server(folder)
    sources = {name: {"url": server.url(path.name), "sha256": sha256(path)} for name, path in paths.items()}
    sources_file = os.path.join(folder, "sources.json")
    pathlib.Path(sources_file).write_text(json.dumps(sources, indent=1) + "\n")
    print(f"serving {folder} on port {server.port}; give: attend data fetch --sources {sources_file}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
