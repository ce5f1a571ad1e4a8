"""The package's module map and where it decides the kind of model.

    python scripts/module_map.py [--out results] [--name module_map] [--before COMMIT]

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

from _bench import command_line, write_report
from _code import PACKAGE, module_name, package_imports, report_at

KIND_CLASSES = {"AdditiveModel", "LinearModel"}
DUCK_ATTRIBUTES = {"thresholds", "encoding"}


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
    parser.add_argument("--before", metavar="COMMIT",
                        help="also map the package as it was at COMMIT, for a before/after")
    args = parser.parse_args(argv)
    before = report_at(args.before, "module_map.py") if args.before else None
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
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
    if before is not None:
        old = {m["module"]: m for m in before["modules"]}
        new = {m["module"]: m for m in modules}
        lines += ["", f"## Before and after: commit `{args.before}` → now", "",
                  "| | before | now |", "|---|---|---|",
                  f"| modules | {len(old)} | {len(new)} |",
                  f"| lines | {sum(m['lines'] for m in old.values()):,} | "
                  f"{sum(m['lines'] for m in new.values()):,} |",
                  f"| places deciding the kind (nodes) | {before['kind_decision_places']} "
                  f"({before['kind_decisions']}) | {len(places)} ({total}) |",
                  f"| modules deciding the kind | "
                  f"{sum(1 for m in old.values() if m['kind_decisions'])} | {len(deciding)} |",
                  f"| largest module | {max(old.values(), key=lambda m: m['lines'])['module']} "
                  f"({max(m['lines'] for m in old.values()):,}) | "
                  f"{max(new.values(), key=lambda m: m['lines'])['module']} "
                  f"({max(m['lines'] for m in new.values()):,}) |", "",
                  "Modules gone: " + (", ".join(f"`{m}`" for m in sorted(set(old) - set(new)))
                                      or "none") + ".",
                  "", "Modules new: " + (", ".join(f"`{m}`" for m in sorted(set(new) - set(old)))
                                        or "none") + ".", "",
                  "Modules in both whose lines changed: " + ", ".join(
                      f"`{m}` {old[m]['lines']} → {new[m]['lines']}"
                      for m in sorted(set(old) & set(new))
                      if old[m]["lines"] != new[m]["lines"]) + "."]
    write_report(args.out, args.name, {"command": command_line(), "modules": modules,
                                       "kind_decisions": total,
                                       "kind_decision_places": len(places),
                                       "before": before and {"commit": args.before,
                                                             "modules": before["modules"]}},
                 "\n".join(lines))
    print(f"{len(modules)} modules, {len(places)} places ({total} nodes) deciding the kind "
          f"outside the kernels, in {len(deciding)} modules")


if __name__ == "__main__":
    main()
