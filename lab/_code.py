"""Helpers that read the package's source: its modules and their imports."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rsrank"


def module_name(path):
    """``rsrank/cli/train.py`` -> ``cli.train``; ``rsrank/cli/__init__.py`` -> ``cli``."""
    parts = Path(path).resolve().relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts) or "rsrank"


def _resolve(module, level, target):
    """The package-relative name of ``from <level dots><target>`` in ``module``."""
    base = module.split(".")
    package = base[:-1] if not (PACKAGE / Path(*base) / "__init__.py").exists() else base
    package = package[:len(package) - (level - 1)] if level > 1 else package
    return ".".join([*package, *([target] if target else [])]) or "rsrank"


def package_imports(tree, module):
    """The ``rsrank`` modules that ``tree`` (of ``rsrank.module``) imports,
    as package-relative names (``cli._options``, ``_kernels``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from .x import y, from . import x, from .. import x
                if node.module:
                    found.add(_resolve(module, node.level, node.module))
                else:
                    found.update(_resolve(module, node.level, alias.name)
                                 for alias in node.names)
            elif node.module and node.module.startswith("rsrank"):
                parts = node.module.split(".")
                found.add(parts[1] if len(parts) > 1 else "rsrank")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("rsrank."):
                    found.add(alias.name.split(".")[1])
    found.discard(module)
    return sorted(found)




def report_at(commit, script, *arguments):
    """The JSON report that ``lab/<script>`` (as it is now, with these
    helpers) writes when run on the package as it was at ``commit``: a
    before/after comparison from one command. The commit is checked out in
    a temporary git worktree, removed afterwards."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    repo, here = PACKAGE.parent, Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "--quiet",
                        str(tree), commit], check=True)
        try:
            for name in (script, "_code.py", "_bench.py"):
                shutil.copy(here / name, tree / "scripts" / name)
            environment = {**os.environ, "PYTHONPATH": str(tree)}
            subprocess.run([sys.executable, str(tree / "scripts" / script), "--out", scratch,
                            "--name", "report", *arguments], check=True, cwd=tree,
                           env=environment, stdout=subprocess.DEVNULL)
            return json.loads((Path(scratch) / "report.json").read_text())
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force",
                            str(tree)], check=True)
