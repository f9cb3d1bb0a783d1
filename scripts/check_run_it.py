#!/usr/bin/env python3
"""A reader who follows a chapter's "Run it" changes nothing in their checkout. Run by `meson test` (test "run-it").

Every chapter docs/NN-*.md has a section "## Run it" whose first ```sh block holds the line `scripts/run N …` (N the
chapter's own number): the command a reader types. This script copies the source's tracked files as they are in the
working tree (`git ls-files`) into a scratch folder, makes it a git repository with everything staged, and there runs
each chapter's command with `--small` added and the build folder given (ATTEND_BUILD_DIR: the programs already
built; ATTEND_BUILT=1: scripts/run skips scripts/setup, so that nothing is installed or rebuilt while `meson test`
runs). It fails when a chapter has no such line, when a command exits with a status other than 0 (77, data missing,
is counted as skipped), or when afterwards the scratch checkout differs from what was copied: a file written into
docs/ (as `--figures docs/figures` did), a tracked file changed or removed.

Usage: check_run_it.py SOURCE_DIR BUILD_DIR
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SKIPPED = 77  # a chapter whose data this machine lacks (tutorials/common.hpp, data_file)


def run_it_command(page):
    """The `scripts/run N …` line of the first ```sh block under "## Run it", or None."""
    section = page.split("\n## Run it\n", 1)
    if len(section) < 2:
        return None
    block = re.search(r"```sh\n(.*?)```", section[1].split("\n## ", 1)[0], re.S)
    if not block:
        return None
    for line in block.group(1).splitlines():
        command = line.split("#", 1)[0].strip()
        if command.startswith("scripts/run "):
            return command
    return None


def copy_tracked(source, scratch):
    """The working tree's tracked files into `scratch`, staged in a repository of its own."""
    listed = subprocess.run(["git", "-C", str(source), "ls-files", "-z"], capture_output=True, check=True)
    for name in listed.stdout.decode().split("\0"):
        if not name or not (source / name).is_file():
            continue  # deleted in the working tree, or a submodule
        (scratch / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, scratch / name, follow_symlinks=False)
    subprocess.run(["git", "init", "-q", str(scratch)], check=True)
    subprocess.run(["git", "-C", str(scratch), "add", "-A"], check=True)


def changes(scratch):
    """What differs from the staged copy: changed or removed tracked files, and new files git does not ignore."""
    changed = subprocess.run(["git", "-C", str(scratch), "diff", "--name-only"], capture_output=True, text=True)
    added = subprocess.run(["git", "-C", str(scratch), "ls-files", "--others", "--exclude-standard"],
                           capture_output=True, text=True)
    return changed.stdout.split() + added.stdout.split()


def main():
    source = pathlib.Path(sys.argv[1]).resolve()
    build = pathlib.Path(sys.argv[2]).resolve()
    if not (source / ".git").exists():
        print(f"run-it: {source} is not a git checkout: there are no tracked files to copy")
        return SKIPPED
    errors, skipped, ran = [], [], 0
    env = dict(os.environ, ATTEND_BUILD_DIR=str(build), ATTEND_BUILT="1")
    with tempfile.TemporaryDirectory(prefix="attend-run-it-") as folder:
        scratch = pathlib.Path(folder) / "checkout"
        copy_tracked(source, scratch)
        for page in sorted((source / "docs").glob("[0-9][0-9]-*.md")):
            number = int(page.name[:2])
            command = run_it_command(page.read_text())
            if command is None or shlex.split(command)[1] != str(number):
                errors.append(f"docs/{page.name}: no `scripts/run {number}` line in a ```sh block under \"## Run it\"")
                continue
            run = subprocess.run(shlex.split(command) + ["--small"], cwd=scratch, env=env, capture_output=True,
                                 text=True)
            ran += 1
            if run.returncode == SKIPPED:
                skipped.append(f"docs/{page.name}: `{command} --small` lacks data: {run.stderr.strip()[-200:]}")
            elif run.returncode != 0:
                errors.append(f"docs/{page.name}: `{command} --small` exited with {run.returncode}: "
                              f"{run.stderr.strip()[-300:]}")
            changed = changes(scratch)
            if changed:
                errors.append(f"docs/{page.name}: `{command} --small` changed the checkout: {', '.join(changed[:5])}")
                subprocess.run(["git", "-C", str(scratch), "checkout", "-q", "--", "."], check=False)
                subprocess.run(["git", "-C", str(scratch), "clean", "-q", "-fd"], check=False)
    for e in errors + skipped:
        print(("error: " if e in errors else "skipped: ") + e)
    print(f"run-it: {ran} chapters' commands run in a scratch checkout, {len(errors)} problems, {len(skipped)} skipped")
    if errors or ran == 0:
        return 1
    return SKIPPED if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
