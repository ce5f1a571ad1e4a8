"""The numbers the README and the guide quote agree with the results files
they cite, and a cited page that has aged is reported."""

import json
import re
import subprocess
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs" / "guide").glob("*.md"))]
#: a number as the docs quote NDCG and its differences: four decimals
NUMBER = re.compile(r"(?<![\d.])[-+]?\d+\.\d{4}(?!\d)")
#: a measurement as the docs quote one, one to three decimals and a unit: a
#: ratio (1.50x, 1.62 times), a time (14.7 s), a share (22.5%), a number of
#: features (6.9 features), a memory (0.9 GiB)
MEASURE = re.compile(r"(?<![\d.\w])[-+]?\d+\.\d{1,3}(?![\d.]\d)"
                     r"(?=x\b| times| ?s\b| ?ms\b| seconds| features|%| ?GB\b| ?GiB| ?MiB)")
#: any number with a decimal point in a results page
DECIMAL = re.compile(r"(?<![\d.])[-+]?\d+\.\d+")
#: a results page, its JSON, or a directory of them
CITED = re.compile(r"results/([\w\-/]+?)(?:\.md|\.json|/)")
#: a results page as it was at a commit: ``REV:stem``
HISTORY = re.compile(r"git show\s+([0-9a-f]{7,40}):results/([\w\-/]+?)\.(?:md|json)")
#: how many commits a cited page may be behind the code
MAX_BEHIND = 100
#: what a page's numbers depend on: the package, the studies, the
#: dependencies; a commit that changes none of them (the docs, the tests,
#: another page) leaves every page as true as it was
CODE = ("rsrank", "lab", "scripts", "pyproject.toml")


def _rounded(value, decimals):
    """``value`` written with 1 to ``decimals`` decimals."""
    return {f"{abs(value):.{k}f}" for k in range(1, decimals + 1)}


def _texts(stem):
    """``(suffix, text)`` of ``results/<stem>``: the page and its JSON, or
    every page under a directory; for ``REV:stem``, the page and its JSON
    as they were at commit REV (``git show``), None outside a git checkout
    (nothing to check them with)."""
    if ":" in stem:
        revision, stem = stem.split(":", 1)
        texts = []
        for suffix in (".md", ".json"):
            shown = subprocess.run(["git", "-C", str(REPO), "show",
                                    f"{revision}:results/{stem}{suffix}"],
                                   capture_output=True, text=True)
            if shown.returncode == 0:
                texts.append((suffix, shown.stdout))
            elif "not a git repository" in shown.stderr:
                return None
        return texts
    base = REPO / "results" / stem
    files = (sorted(base.rglob("*")) if base.is_dir()
             else [base.with_suffix(".md"), base.with_suffix(".json")])
    return [(path.suffix, path.read_text()) for path in files
            if path.suffix in (".md", ".json") and path.is_file()]


def _values(stem):
    """The numbers of ``results/<stem>`` (see :func:`_texts`) as the docs may
    quote them: each number of the pages rounded to any number of decimals
    up to those it is written with, and every float of the JSON rounded to
    one to four decimals; None where the pages cannot be read."""
    texts = _texts(stem)
    if texts is None:
        return None
    found = set()
    for suffix, text in texts:
        if suffix == ".md":
            for number in DECIMAL.findall(text):
                found |= _rounded(float(number), len(number.split(".")[1]))
        else:
            stack = [json.loads(text)]
            while stack:
                item = stack.pop()
                if isinstance(item, float):
                    found |= _rounded(item, 4)
                elif isinstance(item, dict):
                    stack.extend(item.values())
                elif isinstance(item, list):
                    stack.extend(item)
    return found


def _quoted(docs):
    """``(doc, number, the pages it may come from)`` for every number
    (:data:`NUMBER`) and measurement (:data:`MEASURE`) of a
    paragraph, list item or table that cites a results page or follows one
    that does in its section: the pages cited there or earlier in the
    section (a table under the paragraph that names its page is checked
    against that page). Code blocks are left out (their output is the
    README tests' to check). A paragraph that quotes a page as it was at an
    older commit (``git show REV:results/...``) may take its numbers from
    that page then (``REV:stem``) as well."""
    for doc in docs:
        section = []
        text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
        for block in re.split(r"\n\s*\n", text):
            if block.lstrip().startswith("#"):
                section = []
            section += CITED.findall(block)
            history = [f"{revision}:{stem}" for revision, stem in HISTORY.findall(block)]
            if section or history:
                for number in NUMBER.findall(block) + MEASURE.findall(block):
                    yield doc.name, number, list(dict.fromkeys(section + history))


def _wrong(docs):
    """The quoted numbers that no page they may come from holds."""
    values = {}

    def held(stem):  # each page read once
        if stem not in values:
            values[stem] = _values(stem)
        return values[stem]

    return [f"{doc}: {number} is in none of {', '.join(stems)}"
            for doc, number, stems in _quoted(docs)
            if not any(held(stem) is None or number.lstrip("+-") in held(stem)
                       for stem in stems)]


def test_every_quoted_number_is_in_the_results_it_cites():
    assert len(list(_quoted(DOCS))) > 400
    assert _wrong(DOCS) == []


def test_the_check_finds_a_number_its_pages_do_not_hold(tmp_path):
    doc = tmp_path / "guide.md"
    doc.write_text("# A section\n\nThe defaults score 0.4523 (`results/conventions.md`).\n\n"
                   "- By trec_eval, 0.4807 (`results/conventions.json`), and 0.1234.\n\n"
                   "| method | NDCG@10 |\n|---|---|\n| defaults | 0.4523 |\n| other | 0.4321 |\n\n"
                   "```\n0.9999\n```\n\n"
                   "# Another section\n\nHere 0.4818 (`results/clicks_time.md`), in 1.5x,\n"
                   "1.50x and 2.45 times the labels' time (3.8 s), not 2.6x, 1.51x or 4.1 s\n"
                   "(a version 1.5 or a fraction 0.2 is no measurement).\n\n"
                   "# A third, citing nothing\n\nA number of no page: 0.5555, 9.99x.\n")
    assert _wrong([doc]) == ["guide.md: 0.1234 is in none of conventions",
                             "guide.md: 0.4321 is in none of conventions",
                             "guide.md: 0.4818 is in none of clicks_time",
                             "guide.md: 2.6 is in none of clicks_time",
                             "guide.md: 1.51 is in none of clicks_time",
                             "guide.md: 4.1 is in none of clicks_time"]


def test_a_paragraph_quoting_a_page_at_a_commit_is_checked_against_that_page(tmp_path):
    """``git show REV:results/X.md`` in a paragraph: its numbers may come from
    the page as it was at REV, and are checked against it."""
    _git_checkout()
    first = subprocess.run(["git", "-C", str(REPO), "log", "--diff-filter=A", "--format=%h",
                            "--", "results/clicks_time.md"], check=True, capture_output=True,
                           text=True).stdout.split()[-1]
    old = _values(f"{first}:clicks_time")
    assert old and old != _values("clicks_time")  # the page has changed since it was added
    held = sorted(n for n in old if re.fullmatch(r"\d+\.\d\d", n)
                  and n not in _values("clicks_time"))[0]
    doc = tmp_path / "guide.md"
    doc.write_text(f"# History\n\nOnce {held}x and 98.76x (`git show {first}:results/"
                   "clicks_time.md`), now 1.50x (`results/clicks_time.md`).\n")
    assert _wrong([doc]) == [f"guide.md: 98.76 is in none of clicks_time, {first}:clicks_time"]


def _stamped_pages():
    """The results pages the README and the guide cite, each with the commit
    its 'Produced by ... at commit X' line names, else the last commit it
    says it ran at (None where it names none: a page written before the
    stamp, which no commit dates). Not the index, results/README.md, whose
    rows name the commits of their runs; and not a commit a page names
    before its stamp (the baseline a run compared with)."""
    stems = {stem for doc in DOCS for stem in CITED.findall(doc.read_text())} - {"README"}
    for stem in sorted(stems):
        base = REPO / "results" / stem
        for page in (sorted(base.rglob("*.md")) if base.is_dir() else [base.with_suffix(".md")]):
            if page.is_file():
                text = page.read_text()
                stamps = (re.findall(r"Produced by .* at commit ([0-9a-f]{7,40})", text)
                          or re.findall(r"at commit ([0-9a-f]{7,40})", text))
                yield page.relative_to(REPO), stamps[-1] if stamps else None


def _aged(pages):
    """Of ``(page, commit)``, those to report: unstamped, stamped with a
    commit this history does not hold (a page run on a working tree that was
    never committed, or on a branch since rewritten, has no age to count),
    or more than MAX_BEHIND commits behind the code (commits since its
    stamp that change :data:`CODE`). A ``*_before`` page records the code
    before a change, at the commit it names, as the baseline the docs
    compare with: it ages by design, and only a stamp that dates nothing is
    reported. So does a ``*_tried`` page: a variant measured and not kept,
    at the commit it names, whose code the package no longer holds; and a
    ``*_compare`` page: the code of two named commits side by side; and
    the page after a change whose ``*_before`` page lies beside it, the
    other half of that comparison (:func:`_fixed`)."""
    aged = []
    for page, commit in pages:
        if commit is None:
            aged.append(f"{page} (unstamped)")
            continue
        counted = subprocess.run(["git", "-C", str(REPO), "rev-list", "--count",
                                  f"{commit}..HEAD", "--", *CODE], capture_output=True,
                                 text=True)
        if counted.returncode != 0:
            aged.append(f"{page} (its stamp {commit} is no commit of this history)")
        elif int(counted.stdout) > MAX_BEHIND and not _fixed(page):
            aged.append(f"{page} ({int(counted.stdout)} code commits)")
    return aged


def _fixed(page):
    """Whether ``page`` stays at the commits it names (see :func:`_aged`)."""
    stem = Path(page).stem
    return (stem.endswith(("_before", "_tried", "_compare"))
            or (REPO / page).with_name(f"{stem}_before.md").is_file())


def _git_checkout():
    try:
        subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")


def test_cited_pages_that_have_aged_are_reported():
    """A cited page that :func:`_aged` finds is reported (a warning naming
    each): regenerate it with the command in results/README.md."""
    _git_checkout()
    pages = list(_stamped_pages())
    assert len([page for page, commit in pages if commit]) > 20
    aged = _aged(pages)
    if aged:
        warnings.warn(f"{len(aged)} cited results pages are more than {MAX_BEHIND} commits "
                      f"behind the code or not dated by their stamp: {', '.join(aged)}",
                      stacklevel=1)


def test_the_age_check_reports_a_stamp_it_cannot_date():
    _git_checkout()
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    root = subprocess.run(["git", "-C", str(REPO), "rev-list", "--max-parents=0", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.split()[0]
    behind = int(subprocess.run(["git", "-C", str(REPO), "rev-list", "--count",
                                 f"{root}..HEAD", "--", *CODE], check=True,
                                capture_output=True, text=True).stdout)
    pages = [("results/now.md", head), ("results/never.md", "0123456789ab"),
             ("results/blank.md", None), ("results/first.md", root),
             ("results/first_before.md", root), ("results/first_compare.md", root),
             ("results/one_search_web01.md", root)]  # its _before page lies beside it
    expected = ["results/never.md (its stamp 0123456789ab is no commit of this history)",
                "results/blank.md (unstamped)"]
    if behind > MAX_BEHIND:  # a history long enough to age a page
        expected.append(f"results/first.md ({behind} code commits)")
    assert _aged(pages) == expected


#: an absolute path into a directory of the machine that wrote a page
MACHINE_PATH = re.compile(r"(?<![\w.:/])/(?:work|home|tmp|root|Users|mnt|opt|private)/[\w.+-]")


def _machine_paths(root):
    """The generated pages under ``root`` (every file but the hand-written
    index, README.md) that name an absolute path of the machine that ran
    them, each with the first such path: a page's command should read as one
    types it in the repository, and it should not tell where the run lived."""
    found = []
    for page in sorted(root.rglob("*")):
        if page.suffix in (".md", ".json") and page.name != "README.md":
            hit = MACHINE_PATH.search(page.read_text(errors="replace"))
            if hit:
                found.append(f"{page.relative_to(root)}: {hit.group(0)}")
    return found


def test_no_results_page_names_a_directory_of_the_machine_that_wrote_it():
    assert _machine_paths(REPO / "results") == []


def test_the_path_check_finds_a_machine_path(tmp_path):
    (tmp_path / "a.md").write_text("Command: `rsrank train /work/shared/data/OHSUMED`\n")
    (tmp_path / "b.json").write_text('{"out": "results/x", "url": "https://example.org/tmp/x"}')
    (tmp_path / "README.md").write_text("`git worktree add /tmp/old 01faff9`\n")
    assert _machine_paths(tmp_path) == ["a.md: /work/s"]
