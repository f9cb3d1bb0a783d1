"""The machine a benchmark ran on, as `attend info --json` reports it (apps/info.cpp): every bench/ tool prints it as
its first JSON line, {"machine": {...}}, so that a figure always names the CPU (vendor, family, model, features),
OpenBLAS's kernels and whether OPENBLAS_CORETYPE chose them, oneDNN's instructions and each precision's kernel."""
import json
import os
import subprocess


def attend_beside(program):
    """The `attend` program of the build that holds `program` (BUILD/bench/NAME or BUILD/apps/attend)."""
    program = os.path.abspath(program)
    if os.path.basename(program) == "attend":
        return program
    return os.path.join(os.path.dirname(os.path.dirname(program)), "apps", "attend")


def machine(program):
    """`attend info --json` of the build that holds `program`, or {"error": why} when it cannot be run."""
    attend = attend_beside(program)
    try:
        run = subprocess.run([attend, "info", "--json"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": "%s: %s" % (attend, e)}
    if run.returncode != 0:
        return {"error": "%s info exited with %d: %s" % (attend, run.returncode, run.stderr.strip()[-300:])}
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError as e:
        return {"error": "%s info printed no JSON (%s): %s" % (attend, e, run.stdout[:300])}


def print_machine(program):
    """Prints {"machine": ...} as one JSON line (the tools' first). On a CPU OpenBLAS does not know, where attend
    replaced OpenBLAS's kernels with the ones that fit (runtime/cpu.hpp), sets OPENBLAS_CORETYPE to those for every
    program the tool starts afterwards, PyTorch's OpenBLAS included, so that both sides multiply on the same kernels;
    the line then says so ("reference_coretype"). An OPENBLAS_CORETYPE already set is left as it is."""
    info = machine(program)
    blas = info.get("openblas", {})
    if blas.get("replaced") and "OPENBLAS_CORETYPE" not in os.environ:
        os.environ["OPENBLAS_CORETYPE"] = blas["core"]
        info["reference_coretype"] = blas["core"]
    print(json.dumps({"machine": info}), flush=True)
