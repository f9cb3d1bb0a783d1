"""Function lengths, in lines from the first line of the signature to the closing brace, for C++ sources.

Usage: function_lengths.py [--top N] [--limit L] PATH...     PATH: a folder (every .cpp/.hpp under it) or a file
  --top N     print the N longest functions (default 10)
  --limit L   exit 1 when a function is longer than L lines, naming each one (a tutorial program's `main` included)

A small scanner, not a compiler: it drops comments, string and character literals, then follows braces. Preprocessor lines are dropped. A `{`
whose head (the text since the previous `;`, `{` or `}`) holds a `(` opens a function when it is not already inside one, and
namespace, class, struct, union, enum and extern "C" bodies are scopes that hold functions. Lambdas count as part of
the function around them."""
import pathlib
import re
import sys

SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b|extern\s*$")
NAME = re.compile(r"([A-Za-z_~][A-Za-z0-9_:~<>]*(?:operator\s*\S+?)?)\s*\($")
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else)\b")


def strip(text):
    """The text with comments, strings and character literals blanked (newlines kept so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "#" and (i == 0 or text[i - 1] == "\n"):  # a preprocessor line (and its continuations)
            j = i
            while True:
                j = text.find("\n", j)
                if j < 0 or text[j - 1] != "\\":
                    break
                j += 1
            j = n if j < 0 else j
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 digit separators
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_template_heads(head):
    """The head with every `template <...>` parameter list removed (its `class` names no class)."""
    while (k := head.find("template")) >= 0 and head[k + 8 :].lstrip().startswith("<"):
        i, depth = head.index("<", k), 0
        for j in range(i, len(head)):
            depth += {"<": 1, ">": -1}.get(head[j], 0)
            if depth == 0:
                break
        head = head[:k] + " " * (j + 1 - k) + head[j + 1 :]
    return head


def functions(path):
    """(length, line, name) of every function defined in the file."""
    text = strip(path.read_text())
    found, stack, head_start, line = [], [], 0, 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c in ";{}":
            if c == "{":
                head = without_template_heads(text[head_start:i])
                in_function = any(kind == "function" for kind, _, _ in stack)
                if in_function:
                    kind = "block"
                elif "(" in head and not SCOPE.search(head.split("(")[0]) and not CONTROL.match(head):
                    kind = "function"
                elif SCOPE.search(head) or head.strip() == "":
                    kind = "scope"
                else:
                    kind = "block"
                stripped = len(head) - len(head.lstrip())
                start_line = line - head.count("\n") + head[:stripped].count("\n")
                name_match = NAME.search(head.split("(")[0].rstrip() + "(")
                stack.append((kind, start_line, name_match.group(1) if name_match else "?"))
            elif c == "}" and stack:
                kind, start_line, name = stack.pop()
                if kind == "function":
                    found.append((line - start_line + 1, start_line, name))
            head_start = i + 1
    return found


def main(argv):
    top, limit, paths = 10, None, []
    args = iter(argv)
    for a in args:
        if a == "--top":
            top = int(next(args))
        elif a == "--limit":
            limit = int(next(args))
        else:
            paths.append(pathlib.Path(a))
    files = []
    for p in paths:
        files += sorted(q for q in p.rglob("*") if q.suffix in (".cpp", ".hpp")) if p.is_dir() else [p]
    rows = sorted(((n, f"{f}:{line}", name) for f in files for n, line, name in functions(f)), reverse=True)
    for n, where, name in rows[:top]:
        print(f"{n:5d}  {where}  {name}")
    if limit is not None:
        over = [r for r in rows if r[0] > limit]
        for n, where, name in over:
            print(f"error: {where}: {name} is {n} lines (limit {limit})")
        return 1 if over else 0
    return 0


sys.exit(main(sys.argv[1:]))
