#!/usr/bin/env python3
"""Builds and runs the four programs of examples/ as a user's own project would, one way per call:

  reuse.py meson      SOURCE BUILD   examples/ as a Meson project, attend in its subprojects/ folder through
                                     examples/subprojects/attend.wrap ([provide]); checks that only the libraries of
                                     attend are built there (no program, tutorials, benchmarks or tests)
  reuse.py pkg-config SOURCE BUILD   `meson install --destdir` of BUILD, then examples/Makefile (pkg-config --static)
  reuse.py cmake      SOURCE BUILD   the same install, then examples/CMakeLists.txt (find_package(attend CONFIG)); also
                                     checks the version file (0.1 accepted, 0.2 and 1.0 refused)

Each program must exit with 0 (it checks that it learned) and print its first and last progress lines. Work happens in
BUILD/tests/reuse/<way>/, emptied first. Exit status 0 when everything held; every failure is printed."""
import json
import os
import shutil
import subprocess
import sys

PROGRAMS = {  # program → a line its output must contain
    "fit": "step 2000: mean squared error",
    "classify": "step 400: loss",
    "pointer": "step 300: loss",
    "language_model": "the text continued exactly",
}


def run(cmd, cwd=None, env=None):
    print("$", " ".join(cmd), flush=True)
    result = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(result.stdout, end="", flush=True)
    if result.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited with status {result.returncode}")
    return result.stdout


def need(program, package):
    if shutil.which(program) is None:
        raise RuntimeError(f"{program} not found: apt-get install {package} (scripts/setup installs it)")


def copy_examples(source, work):
    examples = os.path.join(work, "examples")
    shutil.copytree(os.path.join(source, "examples"), examples, symlinks=True)
    return examples


def run_programs(folder):
    for name, expected in PROGRAMS.items():
        out = run([os.path.join(folder, name)])
        if expected not in out:
            raise RuntimeError(f"{name} did not print '{expected}'")


def install(build, work):
    """meson install of BUILD into WORK/stage; returns the staged prefix and libdir."""
    stage = os.path.join(work, "stage")
    run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", stage])
    options = {o["name"]: o["value"] for o in
               json.loads(run_quiet(["meson", "introspect", "--buildoptions", build]))}
    prefix = stage + options["prefix"]
    libdir = os.path.join(options["prefix"], options["libdir"])  # an absolute libdir stays as it is
    return prefix, stage + libdir, options["prefix"]


def run_quiet(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True).stdout


def check_installed_headers(prefix):
    """Every header an installed header includes with quotes is installed too."""
    root = os.path.join(prefix, "include", "attend")
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            for line_number, line in enumerate(open(path, encoding="utf-8"), 1):
                if line.startswith('#include "'):
                    included = line.split('"')[1]
                    if not os.path.exists(os.path.join(root, included)):
                        raise RuntimeError(f"{os.path.relpath(path, root)}:{line_number} includes {included}, "
                                           "which is not installed (add it to the folder's *_headers in meson.build)")


def way_meson(source, build, work):
    examples = copy_examples(source, work)
    os.symlink(source, os.path.join(examples, "subprojects", "attend"))
    out_dir = os.path.join(work, "build")
    # plain: no optimisation flags — the fastest compile; the programs are small. -Dwerror: the examples and attend's
    # libraries, built as a subproject, compile without warnings.
    run(["meson", "setup", out_dir, examples, "--buildtype=plain", "-Dwerror=true"])
    targets = json.loads(run_quiet(["meson", "introspect", "--targets", out_dir]))
    attend_targets = sorted(t["name"] for t in targets if t.get("subproject") == "attend")
    allowed = {"attend-io", "attend-autograd", "attend-runtime", "attend-kernels", "attend-precision", "attend-ops", "attend-nn", "attend-optim",
               "attend-models", "attend-data", "attend-plot"}
    extra = [t for t in attend_targets if t not in allowed]
    if extra:
        raise RuntimeError("as a subproject attend should build only its libraries, but it also defines: "
                           + ", ".join(extra))
    print("attend's targets as a subproject:", ", ".join(attend_targets))
    run(["ninja", "-C", out_dir])
    run_programs(out_dir)


def way_pkg_config(source, build, work):
    need("make", "make")
    prefix, libdir, configured_prefix = install(build, work)
    check_installed_headers(prefix)
    # The .pc files name the prefix they were configured with; a staged install moves it, as installing with
    # --prefix STAGE would have written it.
    pc_dir = os.path.join(libdir, "pkgconfig")
    for name in os.listdir(pc_dir):
        path = os.path.join(pc_dir, name)
        text = open(path, encoding="utf-8").read()
        open(path, "w", encoding="utf-8").write(text.replace(f"prefix={configured_prefix}\n", f"prefix={prefix}\n", 1))
    examples = copy_examples(source, work)
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dir)
    run(["make", "-C", examples], env=env)
    run_programs(examples)


def way_cmake(source, build, work):
    need("cmake", "cmake")
    prefix, _, _ = install(build, work)
    examples = copy_examples(source, work)
    out_dir = os.path.join(work, "build")
    run(["cmake", "-S", examples, "-B", out_dir, "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release",
         "-DCMAKE_COMPILE_WARNING_AS_ERROR=ON"])
    run(["cmake", "--build", out_dir, "--parallel", "2"])
    run_programs(out_dir)
    # The version file: attend 0.1.x satisfies a request for 0.1, not one for 0.2 or 1.0.
    for wanted, found in [("0.1", True), ("0.2", False), ("1.0", False)]:
        probe = os.path.join(work, "version-" + wanted)
        os.makedirs(probe)
        open(os.path.join(probe, "CMakeLists.txt"), "w").write(
            "cmake_minimum_required(VERSION 3.16)\nproject(probe CXX)\n"
            f"find_package(attend {wanted} CONFIG)\n"
            'message(STATUS "attend_FOUND=${attend_FOUND} attend_VERSION=${attend_VERSION}")\n')
        out = run(["cmake", "-S", probe, "-B", os.path.join(probe, "build"), "-DCMAKE_PREFIX_PATH=" + prefix])
        if (f"attend_FOUND=1" in out) != found:
            raise RuntimeError(f"find_package(attend {wanted}) should {'' if found else 'not '}find attend")


def main():
    way, source, build = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    work = os.path.join(build, "tests", "reuse", way)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ways = {"meson": way_meson, "pkg-config": way_pkg_config, "cmake": way_cmake}
    try:
        ways[way](source, build, work)
    except RuntimeError as error:
        print(f"reuse {way}: FAILED: {error}")
        return 1
    print(f"reuse {way}: the three examples built and learned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
