"""The package's module map and where it decides the kind of model.

    python scripts/module_map.py [--out results] [--name module_map]

Writes ``NAME.md`` and ``NAME.json``: per module of ``rsrank``, its lines,
its job (the first line of its docstring) and the package modules it
imports (at the top or inside functions); then the places outside the
kernels that decide between model kinds, found in the syntax tree:

* a read of an ``additive`` attribute (``self.additive``, ``args.additive``,
  ``model.additive``, ``getattr(x, "additive")``, ``params["additive"]``),
  a call of a function whose name says so (``_additive(...)``), or a
  comparison with ``"additive"``;
* ``isinstance(..., AdditiveModel)`` or ``isinstance(..., LinearModel)``;
* ``hasattr(..., "thresholds")`` or ``hasattr(..., "encoding")`` (duck
  typing on a step encoding);
* the kinds table's own decisions: a call of ``kind_of``, a lookup keyed by
  a model's kind (``WRITERS[model.kind]``, ``FORMATS[kind]``), a comparison
  of a ``kind`` attribute, and an ``if`` on a name ``additive``.

A keyword argument ``additive=...`` (and the value it passes) passes a
parameter on and is not counted; a ``def`` or a docstring is not a decision. It is a syntactic
count: a decision written another way is not seen.
"""

import argparse
import ast
from pathlib import Path

from _bench import command_line, write_report

PACKAGE = Path(__file__).resolve().parents[1] / "rsrank"
KIND_CLASSES = {"AdditiveModel", "LinearModel"}
DUCK_ATTRIBUTES = {"thresholds", "encoding"}


def package_imports(tree, module):
    """The ``rsrank`` modules that ``tree`` (of ``rsrank.module``) imports."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from .x import y, from . import x
                base = node.module or ""
                names = [base] if base else [alias.name for alias in node.names]
                found.update(name.split(".")[0] for name in names)
            elif node.module and node.module.startswith("rsrank"):
                parts = node.module.split(".")
                found.add(parts[1] if len(parts) > 1 else "rsrank")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("rsrank."):
                    found.add(alias.name.split(".")[1])
    found.discard(module)
    return sorted(found)


def _is_kind_key(node):
    """A model's kind as a key: a name ``kind`` or an attribute ``.kind``
    (not numpy's ``dtype.kind``)."""
    if isinstance(node, ast.Name):
        return node.id == "kind"
    return (isinstance(node, ast.Attribute) and node.attr == "kind"
            and not (isinstance(node.value, ast.Attribute) and node.value.attr == "dtype"))


def enclosing_functions(tree):
    """The name of the function (``Class.method``) around each node, or
    ``<module>``."""
    where = {}

    def visit(node, name):
        for child in ast.iter_child_nodes(node):
            inner = name
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = child.name if name == "<module>" else f"{name}.{child.name}"
            where[id(child)] = inner
            visit(child, inner)
    visit(tree, "<module>")
    return where


def kind_decisions(tree):
    """``(line, text, function)`` of each node that decides between model kinds."""
    where = enclosing_functions(tree)
    passed_on = {id(k.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
                 for k in node.keywords if k.arg == "additive"}
    out = []
    for node in ast.walk(tree):
        if id(node) in passed_on:  # additive=args.additive passes the parameter on
            continue
        if isinstance(node, ast.Attribute) and node.attr == "additive" and isinstance(
                node.ctx, ast.Load):
            out.append((node.lineno, f"{ast.unparse(node)}", node))
        elif isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "kind_of"
                                             or getattr(node.func, "attr", None) == "kind_of"):
            out.append((node.lineno, ast.unparse(node), node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name, args = node.func.id, node.args
            if name == "isinstance" and len(args) == 2 and any(
                    isinstance(n, ast.Name) and n.id in KIND_CLASSES for n in ast.walk(args[1])):
                out.append((node.lineno, ast.unparse(node), node))
            elif name == "hasattr" and len(args) == 2 and isinstance(args[1], ast.Constant) \
                    and args[1].value in DUCK_ATTRIBUTES:
                out.append((node.lineno, ast.unparse(node), node))
            elif "additive" in name or (name == "getattr" and len(args) >= 2 and isinstance(
                    args[1], ast.Constant) and args[1].value == "additive"):
                out.append((node.lineno, ast.unparse(node), node))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and (
                (isinstance(node.slice, ast.Constant) and node.slice.value == "additive")
                or _is_kind_key(node.slice)):
            out.append((node.lineno, ast.unparse(node), node))
        elif isinstance(node, ast.Compare) and any(
                (isinstance(n, ast.Constant) and n.value == "additive")
                or (_is_kind_key(n) and isinstance(n, ast.Attribute))
                for n in [node.left, *node.comparators]):
            out.append((node.lineno, ast.unparse(node), node))
        elif isinstance(node, (ast.If, ast.IfExp)) and isinstance(node.test, ast.Name) \
                and node.test.id == "additive":
            out.append((node.lineno, ast.unparse(node.test) + " (if)", node))
    return sorted({(line, text, where.get(id(node), "<module>")) for line, text, node in out})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="module_map")
    args = parser.parse_args(argv)
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).with_suffix("")
        module = ".".join(relative.parts)
        source = path.read_text()
        tree = ast.parse(source)
        doc = (ast.get_docstring(tree) or "").strip().splitlines()
        decisions = [] if module.startswith("_kernels") else kind_decisions(tree)
        modules.append({"module": module, "lines": source.count("\n"),
                        "job": doc[0] if doc else "", "imports": package_imports(tree, module),
                        "kind_decisions": [{"line": line, "code": code, "function": function}
                                           for line, code, function in decisions]})
    total = sum(len(m["kind_decisions"]) for m in modules)
    places = sorted({(m["module"], d["function"]) for m in modules for d in m["kind_decisions"]})
    deciding = [m for m in modules if m["kind_decisions"]]
    lines = ["# The module map", "",
             "`python scripts/module_map.py`: the modules of `rsrank` with their lines, job (the "
             "first line of the docstring) and the package modules they import; then the places "
             "outside the kernels that decide between model kinds (an `additive` attribute "
             "read, `isinstance` of a model class, duck typing on a step encoding, a lookup "
             "or comparison keyed by a model's `kind`, a call of `kind_of`).", "",
             "| module | lines | job | imports |", "|---|---|---|---|"]
    for m in modules:
        lines.append(f"| `{m['module']}` | {m['lines']} | {m['job']} | "
                     f"{', '.join(m['imports']) or '-'} |")
    lines += ["", f"Total: {sum(m['lines'] for m in modules):,} lines in {len(modules)} modules.",
              "", f"## Kind decisions outside the kernels: {len(places)} places ({total} "
              f"nodes) in {len(deciding)} modules", "",
              "A place is a function (or a module's top level) with at least one node "
              "that decides between kinds.", "",
              "| module | places | nodes | where |", "|---|---|---|---|"]
    for m in deciding:
        where = "; ".join(f"{d['line']} in {d['function']}: `{d['code']}`"
                          for d in m["kind_decisions"])
        functions = {d["function"] for d in m["kind_decisions"]}
        lines.append(f"| `{m['module']}` | {len(functions)} | {len(m['kind_decisions'])} | "
                     f"{where} |")
    write_report(args.out, args.name, {"command": command_line(), "modules": modules,
                                       "kind_decisions": total,
                                       "kind_decision_places": len(places)}, "\n".join(lines))
    print(f"{len(modules)} modules, {len(places)} places ({total} nodes) deciding the kind "
          f"outside the kernels, in {len(deciding)} modules")


if __name__ == "__main__":
    main()
