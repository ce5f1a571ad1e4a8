"""Sphinx configuration of RSRank's documentation: the user guide (MyST
Markdown), the API reference from the docstrings (autodoc with numpydoc)
and the gallery (sphinx-gallery runs ``examples/`` and keeps their
figures). Built with warnings as errors by ``tests/end_to_end/test_docs.py``."""

import os
import re
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rsrank  # noqa: E402

project = "RSRank"
author = "the RSRank developers"
copyright = "RSRank developers, MIT licence"
release = version = rsrank.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}
html_title = f"RSRank {release}"

# the docstrings' |Delta NDCG| (plain text in help()) as the symbol
rst_prolog = ".. |Delta NDCG| replace:: \\|ΔNDCG\\|\n"


def _skip_routing_setters(app, what, name, obj, skip, options):
    """scikit-learn's generated ``set_fit_request`` and kin document
    scikit-learn's metadata routing, not RSRank: the user guide's grid
    search page says how qid is routed."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def _metric_names_are_not_addresses(app, doctree, docname):
    """docutils reads ``NDCG@10``, ``NDCG@eval_k`` or ``P@1..k`` in a
    docstring as an e-mail address and links it to ``mailto:``; a metric's
    name before the ``@`` (any case) is not an address: put the text back."""
    from docutils import nodes

    for reference in list(doctree.findall(nodes.reference)):
        uri = reference.get("refuri", "")
        address = uri[len("mailto:"):] if uri.startswith("mailto:") else ""
        if re.fullmatch(r"(?i:ndcg|p|map|err|mrr)@\S+", address):
            reference.replace_self(nodes.Text(reference.astext()))


def setup(app):
    app.connect("autodoc-skip-member", _skip_routing_setters)
    app.connect("doctree-resolved", _metric_names_are_not_addresses)
