"""A server process for the serving benchmarks (bench/compare_serve, bench/serve_equality): started on a free port,
and stopped."""
import re
import select
import signal
import subprocess


def start(argv):
    """A server process and its port, read from its ready line."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    ready, _, _ = select.select([process.stdout], [], [], 120)
    line = process.stdout.readline() if ready else ""
    m = re.search(r"listening on http://[^ ]+:(\d+)", line)
    if not m:
        process.kill()
        raise RuntimeError(f"{argv[0]} did not start: {line!r}")
    return process, int(m.group(1))


def stop(process):
    """SIGTERM, then SIGKILL if the server has not exited within 60 s."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
