"""The include graph of the architecture, checked (meson test "layers"):

    apps, tutorials, exercises -> models -> nn -> ops -> precision -> runtime -> autograd;   data, plot -> autograd/tensor.hpp (beside models);
    plot -> autograd/tape.hpp (printing and drawing a tape: plot/print.hpp)
    nn, data, plot, apps -> io (files written whole; io includes nothing of the project)

Each folder below may include the project headers of the folders listed for it and nothing else of the project; of
autograd/, data/ may include the tensor alone (autograd/tensor.hpp), and plot/ the tensor and the tape it prints
(autograd/tape.hpp), nothing that computes. The third-party
headers that need a library to link (utf8proc, zlib) may be included only where that library is linked (data, plot).
The reference engine (autograd/) includes no threading header either: threads belong to nn/parallel. And the program's
shared files (apps/ outside apps/tasks/ and apps/model_kinds/, help texts and comments included) name no task and no
model kind (the names of those folders' files): adding one is its file and its two lines in its folder.
A violation names the file, the line and the rule.

Usage: check_layers.py SOURCE_DIR"""
import pathlib
import re
import sys

ALLOWED = {
    "io": {"io"},
    "autograd": {"autograd"},
    "runtime": {"autograd", "runtime"},
    "precision": {"autograd", "runtime", "precision"},
    "ops": {"autograd", "runtime", "precision", "ops"},
    "nn": {"autograd", "runtime", "precision", "ops", "nn", "io"},
    "data": {"autograd", "data", "io"},
    "plot": {"autograd", "plot", "io"},
    "models": {"autograd", "runtime", "precision", "ops", "nn", "models", "io"},
    "apps": {"autograd", "runtime", "precision", "ops", "nn", "models", "data", "plot", "apps", "io"},
    "tutorials": {"autograd", "runtime", "precision", "ops", "nn", "models", "data", "plot", "tutorials", "io"},
    "exercises": {"autograd", "runtime", "precision", "ops", "nn", "models", "data", "plot", "tutorials", "io",
                  "exercises"},
}
TENSOR_ONLY = {"data": {"autograd/tensor.hpp"}, "plot": {"autograd/tensor.hpp", "autograd/tape.hpp"}}
THREADS = {"thread", "mutex", "condition_variable", "future", "shared_mutex", "barrier", "latch", "semaphore"}
LINKED = {"utf8proc.h": {"data", "plot"}, "zlib.h": {"data"}}
PROJECT = {"io", "autograd", "runtime", "precision", "ops", "nn", "data", "plot", "models", "apps", "tutorials", "exercises", "tests", "bench"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')

source = pathlib.Path(sys.argv[1]).resolve()
errors, checked = [], 0
for folder, allowed in ALLOWED.items():
    for path in sorted((source / folder).rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            checked += 1
            header = m.group(1)
            top = header.split("/")[0]
            where = f"{path.relative_to(source)}:{number}"
            if top in PROJECT and "/" in header and top not in allowed:
                errors.append(f"{where}: {folder}/ includes {header}, but {folder}/ may include only "
                              + ", ".join(sorted(allowed)))
            if folder in TENSOR_ONLY and top == "autograd" and header not in TENSOR_ONLY[folder]:
                errors.append(f"{where}: {folder}/ includes {header}, but of autograd/ {folder}/ may include only "
                              + " and ".join(sorted(TENSOR_ONLY[folder])))
            if folder == "autograd" and header in THREADS:
                errors.append(f"{where}: autograd/ includes <{header}>, but the reference engine holds nothing for "
                              "threads (nn/parallel does)")
            if header in LINKED and folder not in LINKED[header]:
                errors.append(f"{where}: {folder}/ includes {header}, which only "
                              + ", ".join(sorted(LINKED[header])) + " link")
# apps/ names no task or model kind outside their folders
names = {p.stem for folder in ("tasks", "model_kinds") for p in (source / "apps" / folder).glob("*.cpp")}
names -= {"registry", "text_task"}
word = re.compile(r"\b(" + "|".join(sorted(names)) + r")\b", re.I) if names else None
for path in sorted((source / "apps").glob("*")):
    if word is None or not path.is_file() or path.suffix not in (".cpp", ".hpp", ".build"):
        continue
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = word.search(line)
        if m:
            errors.append(f"{path.relative_to(source)}:{number}: names the {m.group(1)!r} of apps/tasks/ or "
                          "apps/model_kinds/; the shared files of apps/ name no task and no kind")
for e in errors:
    print("error:", e)
print(f"layers: {checked} includes checked in {', '.join(ALLOWED)}, {len(errors)} problems")
sys.exit(1 if errors or checked == 0 else 0)
