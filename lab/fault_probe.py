"""A fault and bad-input probe of everything that writes, fetches or reads
CSV: each case run through the command line (or the public API) in this
process, judged by what happened to the user's files and what was said.

    python scripts/fault_probe.py [--out results] [--before OLD/fault_probe.json]

``--before`` adds each case's outcome in an earlier run, for example of the
rsrank before the output edge:

    git worktree add /tmp/old 01faff9
    cp lab/fault_probe.py lab/_bench.py /tmp/old/scripts/
    (cd /tmp/old && PYTHONPATH=. python scripts/fault_probe.py --out /tmp/probe_old)
    python scripts/fault_probe.py --before /tmp/probe_old/fault_probe.json

The classes are those of outputs that could replace or delete what a user
owns: ``--force`` on a directory, a file output onto a link, a device or a
FIFO, downloads without a bound, CSV columns taken by position, a header
misread, cache entries changed in place, tracebacks, leftovers, a NaN
eval_set, and messages in someone else's words. A case is **good** when the
exit status is the expected one, a refusal is one line without a
traceback, and the case's own check holds (nothing replaced or deleted,
the output where it belongs, nothing left behind). Writes
``fault_probe.md`` and ``fault_probe.json`` into ``--out``.
"""

import argparse
import contextlib
import hashlib
import io
import json
import re
import os
import socketserver
import stat
import sys
import tempfile
import threading
import warnings
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from _bench import internal, set_internal, write_report

REPO = Path(__file__).resolve().parents[1]
CASES = []

GOOD = ("2 qid:1 1:0.5 2:0.25 #docid = a\n0 qid:1 1:0.1 2:0.5 #docid = b\n"
        "1 qid:1 1:0.3 2:0.1 #docid = c\n1 qid:2 1:1 2:0 #docid = d\n"
        "0 qid:2 1:0.2 2:0.9 #docid = e\n2 qid:2 1:0.8 2:0.4 #docid = f\n")


def slug(text):
    """A stable directory name for a case (the same in every run)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def cli(*argv):
    """``(exit status, stderr lines, stdout)`` of ``rsrank argv``."""
    from rsrank.cli import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:
            code = exit_.code
        except BaseException as error:  # a traceback: the probe records it
            code, err = "raised", io.StringIO(f"Traceback: {type(error).__name__}: {error}")
    return code, err.getvalue().strip().splitlines(), out.getvalue()


def refused(result, *words):
    """Exit 2, one line, no traceback, every word in it."""
    code, err, _ = result
    ok = code == 2 and len(err) == 1 and "Traceback" not in err[0] and all(
        w in err[0] for w in words)
    return ok, err[-1] if err else f"exit {code}, nothing said"


def succeeded(result):
    code, err, _ = result
    return code == 0, f"exit {code}" + (f": {err[-1]}" if err and code else "")


def digest(path):
    path = Path(path)
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_dir():
        return {p.relative_to(path).as_posix(): digest(p) for p in sorted(path.rglob("*"))}
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    return stat.S_IFMT(os.lstat(path).st_mode)


@contextlib.contextmanager
def without_matplotlib():
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "matplotlib"}
    for name in saved:
        del sys.modules[name]
    sys.modules["matplotlib"] = None
    try:
        yield
    finally:
        del sys.modules["matplotlib"]
        sys.modules.update(saved)


# -- the workspace ---------------------------------------------------------------------------


def workspace(root):
    from rsrank import RSRank, load_letor
    from rsrank.cli import main

    data = root / "data"
    data.mkdir()
    (data / "train.txt").write_text(GOOD)
    (data / "vali.txt").write_text(GOOD.replace("qid:1", "qid:3").replace("qid:2", "qid:4"))
    X, y, qid = load_letor(data / "train.txt")
    RSRank(max_iter=3).fit(X, y, qid=qid).save(data / "linear.json")
    RSRank(max_iter=20, additive=True, max_bins=4).fit(X, y, qid=qid).save(
        data / "additive.json")
    (data / "featureset.json").write_text(json.dumps({"featureset": {"features": [
        {"name": n, "params": [], "template": {"match": {"f": "x"}}} for n in ("f1", "f2")]}}))
    with contextlib.redirect_stdout(io.StringIO()):
        for name in ("a", "b"):
            main(["train", "--train", str(data / "train.txt"), "--vali",
                  str(data / "vali.txt"), "--l1", "0", "--max-iter", "2", "--quiet", "--out",
                  str(root / name)])
    return data


def writers(root, data):
    linear, additive, train = data / "linear.json", data / "additive.json", data / "train.txt"
    vali = data / "vali.txt"
    return {
        "predict --out": lambda out: cli("predict", linear, train, "--out", out),
        "export --out": lambda out: cli("export", linear, "--format", "solr", "--out", out),
        "export --subset-featureset": lambda out: cli(
            "export", linear, "--format", "elasticsearch", "--subset-featureset",
            data / "featureset.json", out),
        "plot --out": lambda out: cli("plot", additive, "--out", out),
        "path --plot": lambda out: cli("path", "--train", train, "--vali", vali, "--l1", "0",
                                       "--max-iter", "2", "--plot", out),
        "compare --plot": lambda out: cli("compare", root / "a", root / "b", "--plot", out),
        "RSRank.save": partial(api_save, linear),
    }


def api_save(model_path, out):
    from rsrank import RSRank

    try:
        RSRank.load(model_path).save(out)
    except (OSError, ValueError) as error:
        return 2, [str(error)], ""
    return 0, [], ""


def register_output_cases(root, data):
    for command, write in writers(root, data).items():
        def link_case(write=write, tag=command):
            place = root / "cases" / f"link-{slug(tag)}"
            place.mkdir(parents=True)
            target = place / "theirs.png"
            target.write_text("keep me\n")
            link = place / "out.png"
            link.symlink_to(target)
            ok, said = succeeded(write(link))
            kept = link.is_symlink() and os.readlink(link) == str(target)
            return ok and kept and target.read_bytes() != b"keep me\n", \
                f"{said}; link kept: {kept}; its file got the output"

        def device_case(write=write, tag=command):
            if os.geteuid() != 0:
                return None, "skipped: a device node needs root"
            place = root / "cases" / f"device-{slug(tag)}"
            place.mkdir(parents=True)
            device = place / "null"
            os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            ok, said = succeeded(write(device))
            still = stat.S_ISCHR(os.lstat(device).st_mode)
            return ok and still, f"{said}; still a character device: {still}"

        def fifo_case(write=write, tag=command):
            place = root / "cases" / f"fifo-{slug(tag)}"
            place.mkdir(parents=True)
            fifo = place / "pipe.png"
            os.mkfifo(fifo)
            got = []
            reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()),
                                      daemon=True)
            reader.start()
            ok, said = succeeded(write(fifo))
            reader.join(30)
            still = stat.S_ISFIFO(os.lstat(fifo).st_mode)
            return ok and still and bool(got and got[0]), \
                f"{said}; still a FIFO: {still}; the reader got {len(got[0]) if got else 0} bytes"

        def dangling_case(write=write, tag=command):
            place = root / "cases" / f"dangling-{slug(tag)}"
            place.mkdir(parents=True)
            link = place / "out.png"
            link.symlink_to(place / "nowhere" / "x.png")
            ok, said = refused(write(link), "does not exist")
            return ok and link.is_symlink() and not (place / "nowhere").exists(), said

        def folder_case(write=write, tag=command):
            place = root / "cases" / f"folder-{slug(tag)}"
            (place / "mine").mkdir(parents=True)
            (place / "mine" / "notes.txt").write_text("mine\n")
            before = digest(place)
            ok, said = refused(write(place / "mine"), "is a directory")
            return ok and digest(place) == before, said

        for kind, function in (("a link to the user's file", link_case),
                               ("a character device", device_case), ("a FIFO", fifo_case),
                               ("a link to nothing", dangling_case),
                               ("a directory with the user's file", folder_case)):
            CASES.append(("2. file outputs", f"{command} onto {kind}", function))


def register_directory_cases(root, data):
    train, vali = data / "train.txt", data / "vali.txt"
    commands = {
        "train": lambda out, *more: cli("train", "--train", train, "--vali", vali, "--l1", "0",
                                        "--max-iter", "2", "--quiet", "--out", out, *more),
        "path": lambda out, *more: cli("path", "--train", train, "--vali", vali, "--l1", "0",
                                       "--max-iter", "2", "--out", out, *more),
    }
    for command, write in commands.items():
        def users(write=write, command=command, force=True):
            place = root / "cases" / f"users-{command}-{force}"
            (place / "experiments" / "old").mkdir(parents=True)
            (place / "experiments" / "notes.txt").write_text("a month of notes\n")
            before = digest(place)
            ok, said = refused(write(place / "experiments", *(["--force"] if force else [])))
            return ok and digest(place) == before, said

        def foreign(write=write, command=command):
            place = root / "cases" / f"foreign-{command}"
            place.mkdir(parents=True)
            out = place / "run"
            write(out)
            (out / "analysis.ipynb").write_text("{}")
            before = digest(place)
            ok, said = refused(write(out, "--force"), "did not write")
            return ok and digest(place) == before, said

        def link(write=write, command=command):
            place = root / "cases" / f"dirlink-{command}"
            (place / "mine").mkdir(parents=True)
            (place / "mine" / "f").write_text("x")
            (place / "link").symlink_to(place / "mine")
            before = digest(place)
            ok, said = refused(write(place / "link", "--force"))
            return ok and digest(place) == before, said

        def own(write=write, command=command):
            place = root / "cases" / f"own-{command}"
            place.mkdir(parents=True)
            first = succeeded(write(place / "run"))[0]
            ok, said = succeeded(write(place / "run", "--force"))
            return first and ok, said + "; its own results replaced"

        CASES.extend([
            ("1. --force", f"{command} --out a user's directory --force", users),
            ("1. --force", f"{command} --out a user's directory (no --force)",
             partial(users, force=False)),
            ("1. --force", f"{command} --out its own results with a user's file --force",
             foreign),
            ("1. --force", f"{command} --out a link to a user's directory --force", link),
            ("1. --force", f"{command} --out its own results --force", own),
        ])


# -- fetch against a local server ------------------------------------------------------------


class Answer(socketserver.StreamRequestHandler):
    """One fault for every request: ``self.server.mode``."""

    def handle(self):
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        mode, size = self.server.mode, self.server.size
        try:
            if mode == "junk":
                self.wfile.write(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
                return
            length = f"Content-Length: {size * 2}\r\n" if mode == "oversized" else ""
            self.wfile.write(f"HTTP/1.0 200 OK\r\n{length}\r\n".encode())
            # "endless" stops at 2 GB, so that probing an rsrank without the bound cannot fill
            # the disk
            total = {"endless": 2 * 10**9, "oversized": size * 2, "long": size + 1}[mode]
            sent = 0
            while sent < total:
                block = b"0" * min(65536, total - sent)
                self.wfile.write(block)
                sent += len(block)
                self.server.sent = sent
        except (BrokenPipeError, ConnectionResetError):
            pass


class Files(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(mode=None, root=None, size=0):
    if mode is None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Files, directory=str(root)))
    else:
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Answer)
        server.daemon_threads = True
        server.mode, server.size, server.sent = mode, size, 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def toy_registry(root):
    served = root / "served"
    files = {}
    rng = np.random.default_rng(0)
    for rel in ("Fold1/train.txt", "Fold1/vali.txt", "Fold1/test.txt"):
        text = "".join(f"{rng.integers(0, 3)} qid:{q} 1:{rng.random():.4f} 2:{rng.random():.4f}\n"
                       for q in range(1, 6) for _ in range(100))
        (served / rel).parent.mkdir(parents=True, exist_ok=True)
        (served / rel).write_text(text)
        files[rel] = {"sha256": hashlib.sha256(text.encode()).hexdigest(), "bytes": len(text)}
    registry = root / "registry.json"
    registry.write_text(json.dumps({"datasets": {"Toy": {
        "description": "toy", "url": "http://127.0.0.1:9/", "licence": "none", "cite": "",
        "files": files}}}))
    set_internal("reading._fetch", "REGISTRY", registry)
    return served, files["Fold1/train.txt"]["bytes"]


def register_fetch_cases(root):
    served, size = toy_registry(root)

    def fault(mode, words):
        def run():
            home = root / "cases" / f"fetch-{mode}"
            with serve(mode, size=size) as (server, url):
                said = refused(cli("fetch", "Toy", "--data-home", home, "--url", url,
                                   "--quiet"), *words)
                sent = server.sent
            empty = not any(home.iterdir())
            return said[0] and empty, f"{said[1]}; the home left empty: {empty}; the server " \
                                      f"got out {sent:,} bytes for a file of {size:,}"
        return run

    CASES.extend([
        ("3. bounded downloads", "an endless response", fault("endless", ["larger than"])),
        ("3. bounded downloads", "an announced length twice the registry's",
         fault("oversized", ["larger than"])),
        ("3. bounded downloads", "one byte more than the registry's, no length",
         fault("long", ["larger than"])),
        ("7. tracebacks", "a server answering junk, not HTTP",
         fault("junk", ["not HTTP"])),
    ])

    def fetched(name):
        home = root / "cases" / name
        with serve(root=served) as (_, url):
            assert cli("fetch", "Toy", "--data-home", home, "--url", url, "--quiet")[0] == 0
        return home

    def zero_bytes():
        home = fetched("fetch-zero")
        (home / "Toy" / "Fold1" / "test.txt").write_bytes(b"")
        before = digest(home)
        ok, said = refused(cli("fetch", "Toy", "--data-home", home, "--quiet"), "0 bytes")
        return ok and digest(home) == before, said

    def damaged():
        home = fetched("fetch-damaged")
        path = home / "Toy" / "Fold1" / "vali.txt"
        text = bytearray(path.read_bytes())
        text[5] ^= 1
        path.write_bytes(bytes(text))
        before = digest(home)
        ok, said = refused(cli("fetch", "Toy", "--data-home", home, "--quiet"), "SHA-256")
        return ok and digest(home) == before, said

    def empty_home():
        return refused(cli("fetch", "Toy", "--data-home", "", "--quiet"), "--data-home is empty")

    def file_home():
        home = root / "cases" / "home-file"
        home.write_text("mine\n")
        ok, said = refused(cli("fetch", "Toy", "--data-home", home, "--quiet"), "is a file")
        return ok and home.read_text() == "mine\n", said

    def full_disk():
        home = root / "cases" / "fetch-full"
        disk = internal("reading._fetch", "shutil")
        real = disk.disk_usage
        disk.disk_usage = lambda p: real(p)._replace(free=1000)
        try:
            with serve(root=served) as (_, url):
                ok, said = refused(cli("fetch", "Toy", "--data-home", home, "--url", url,
                                       "--quiet"), "free; free some space")
        finally:
            disk.disk_usage = real
        return ok and ".fetching" not in said and not any(home.iterdir()), said

    def stale():
        home = root / "cases" / "fetch-stale"
        left = home / ".Toy.fetching-999999999"  # a process id that is not running
        (left / "Fold1").mkdir(parents=True)
        (left / "Fold1" / "train.txt").write_text("half")
        with serve(root=served) as (_, url):
            ok, said = succeeded(cli("fetch", "Toy", "--data-home", home, "--url", url,
                                     "--quiet"))
        names = sorted(p.name for p in home.iterdir())
        return ok and names == ["Toy"], f"{said}; the home holds {names}"

    CASES.extend([
        ("6. stale data", "zero-byte files in a dataset on disk", zero_bytes),
        ("6. stale data", "a flipped byte in a dataset on disk", damaged),
        ("6. stale data", "--data-home ''", empty_home),
        ("10. messages", "a data home that is a file", file_home),
        ("10. messages", "a data home on a full disk", full_disk),
        ("8. leftovers", "a killed fetch's staging directory", stale),
    ])


# -- CSV, the cache, tracebacks, NaN, messages -----------------------------------------------


def register_reading_cases(root, data):
    rows = "".join(f"{q},{(q * d) % 3},{d / 7:.4f},{(q + d) % 5},{d % 2},x{q}-{d}\n"
                   for q in range(1, 9) for d in range(6))
    header = "qid,label,bm25,clicks,fresh,docid"
    place = root / "cases" / "csv"
    place.mkdir(parents=True)
    (place / "train.csv").write_text(header + "\n" + rows)
    with contextlib.redirect_stdout(io.StringIO()):
        cli("train", "--train", place / "train.csv", "--quiet", "--max-iter", "20", "--l1", "0",
            "--out", place / "run")
    model = place / "run" / "models" / "Fold1.json"

    def moved(order):
        lines = [line.split(",") for line in (header + "\n" + rows).splitlines()]
        where = [lines[0].index(name) for name in order]
        return "".join(",".join(f[k] for k in where) + "\n" for f in lines)

    def reordered(command):
        def run():
            (place / "moved.csv").write_text(moved(["docid", "fresh", "bm25", "label", "clicks",
                                                    "qid"]))
            same = cli(command, model, place / "train.csv")
            other = cli(command, model, place / "moved.csv")
            # evaluate's first line names the file; everything after it is compared
            equal = same[0] == other[0] == 0 and same[2].splitlines()[1:] == \
                other[2].splitlines()[1:] and len(same[2].splitlines()) > 1
            return equal, f"exit {other[0]}; the same output as in order: {equal}"
        return run

    def renamed(command, text, *words):
        def run():
            (place / "bad.csv").write_text(text)
            argv = [command, model, place / "bad.csv"] if command != "export" else [
                "export", model, "--format", "solr", "--check", place / "bad.csv"]
            return refused(cli(*argv), *words)
        return run

    renamed_text = (header.replace("clicks", "clickz") + "\n" + rows)
    CASES.extend([
        ("4. CSV by name", "predict: feature columns reordered", reordered("predict")),
        ("4. CSV by name", "evaluate: feature columns reordered", reordered("evaluate")),
        ("4. CSV by name", "predict: a column renamed", renamed("predict", renamed_text,
                                                             "no column 'clicks'")),
        ("4. CSV by name", "evaluate: a column renamed", renamed("evaluate", renamed_text,
                                                              "'clickz' is not among")),
        ("4. CSV by name", "export --check: a column renamed", renamed(
            "export", renamed_text, "matched by name")),
        ("4. CSV by name", "predict: a column missing", renamed(
            "predict", "qid,label,bm25,fresh,docid\n" + "".join(
                ",".join(f.split(",")[:3] + f.split(",")[4:]) + "\n" for f in rows.splitlines()),
            "no column 'clicks'")),
    ])

    def header_case(raw, *words, good_exit=2):
        def run():
            (place / "head.csv").write_bytes(raw)
            result = cli("info", place / "head.csv")
            if good_exit == 0:
                return result[0] == 0 and "bm25" not in result[1], f"exit {result[0]}"
            return refused(result, *words)
        return run

    body = "1,0,7,0.5\n1,1,8,0.7\n".encode()
    CASES.extend([
        ("5. CSV header", "a Latin-1 header", header_case(
            "qid,label,d\u00f6cid,bm25\n".encode("latin-1") + body, "not UTF-8")),
        ("5. CSV header", "a UTF-16 file", header_case(
            ("qid,label,docid,bm25\n1,0,7,0.5\n").encode("utf-16"), "line 1")),
        ("5. CSV header", "a UTF-8 byte-order mark (read, docid kept apart)", header_case(
            b"\xef\xbb\xbfqid,label,docid,bm25\n" + body, good_exit=0)),
        ("7. tracebacks", "a CSV cell over 128 KiB", header_case(
            b"qid,label,bm25\n1,0,0.5\n1,1," + b"9" * 200_000 + b"\n", "a cell longer")),
    ])

    def cache_case(name, change):
        def run():
            from rsrank import load_letor

            directory = root / "cases" / f"cache-{name}"
            directory.mkdir(parents=True)
            path = directory / "f.txt"
            path.write_text("".join(f"{i % 3} qid:{i // 10} 1:{i / 7:.4f} 2:{i % 5}\n"
                                    for i in range(200)))
            parsed = load_letor(path)
            load_letor(path, cache=True)
            (entry,) = [e for e in (directory / ".rsrank-cache").iterdir()
                        if not e.name.startswith(".")]
            array_path = entry / f"{name}.npy"
            os.chmod(array_path, 0o644)
            array = np.array(np.load(array_path))
            np.save(array_path, change(array))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                again = load_letor(path, cache=True)
            same = (again[0] != parsed[0]).nnz == 0 and np.array_equal(again[1], parsed[1])
            told = [str(w.message) for w in caught]
            return same and len(told) == 1, (told[0] if told else "no warning") + \
                f"; the parse's arrays returned: {same}"
        return run

    def bump(array, k):
        array = array.copy()
        array[k] = (array[k] + 1) % 3 if array.dtype.kind in "iu" else array[k] + 1
        return array

    CASES.extend([
        ("6. stale data", "a cached y.npy rewritten in place, same shape",
         cache_case("y", lambda a: bump(a, 2))),
        ("6. stale data", "a cached data.npy rewritten in place, same shape",
         cache_case("data", lambda a: bump(a, 7))),
    ])

    train, vali = data / "train.txt", data / "vali.txt"

    def no_matplotlib(command, argv_of):
        def run():
            out = root / "cases" / f"nomat-{command}"
            out.mkdir(parents=True)
            with without_matplotlib():
                ok, said = refused(cli(*argv_of(out)), "pip install 'rsrank[plot]'")
            return ok and not any(out.iterdir()), said + "; nothing written"
        return run

    def bad_extension():
        out = root / "cases" / "ext"
        out.mkdir(parents=True)
        ok, said = refused(cli("path", "--train", train, "--vali", vali, "--l1", "0",
                               "--max-iter", "2", "--out", out / "run", "--plot",
                               out / "p.xyz"), "cannot write .xyz")
        return ok and not any(out.iterdir()), said + "; before any work"

    def full_picture():
        out = root / "cases" / "full"
        out.mkdir(parents=True)
        (out / "p.png").symlink_to("/dev/full")
        ok, said = refused(cli("path", "--train", train, "--vali", vali, "--l1", "0",
                               "--max-iter", "2", "--plot", out / "p.png"), "No space left")
        return ok and sorted(p.name for p in out.iterdir()) == ["p.png"], said

    def nan_eval_set(method):
        def run():
            from rsrank import RSRank

            rng = np.random.default_rng(0)
            X, y, qid = rng.random((60, 3)), rng.integers(0, 3, 60), np.repeat(np.arange(6), 10)
            X_val = X.copy()
            X_val[:, 1] = np.nan
            try:
                if method == "fit":
                    RSRank(max_iter=3).fit(X, y, qid=qid, eval_set=(X_val, y, qid))
                else:
                    RSRank(max_iter=3).fit_chunks(lambda: iter([(X, y, qid)]),
                                                  eval_set=(X_val, y, qid))
            except ValueError as error:
                return "eval_set has missing values" in str(error), str(error)
            return False, "fitted without a word"
        return run

    def vali_cv():
        return refused(cli("train", "--train", train, "--vali", vali, "--vali-cv", "5",
                           "--max-iter", "2", "--quiet"), "--vali-cv 5")

    def rsrankcv():
        # too few queries for the folds: the path judged on the training data, with one
        # warning in rsrank's words that says so and what to give (as LassoCV falls back)
        import warnings

        from rsrank import RSRankCV

        rng = np.random.default_rng(0)
        X, y, qid = rng.random((40, 3)), rng.integers(0, 3, 40), np.repeat(np.arange(4), 10)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model = RSRankCV(cv=6, max_iter=3).fit(X, y, qid=qid)
            except ValueError as error:
                return False, f"refused: {error}"
        said = [str(w.message) for w in caught]
        good = (len(said) == 1 and "6 folds" in said[0] and "n_splits" not in said[0]
                and "\n" not in said[0] and model.validated_on_ == "the training data")
        return good, f"fitted on the training data's judgement, warned: {' / '.join(said)}"

    CASES.extend([
        ("7. tracebacks", "path --plot without matplotlib", no_matplotlib(
            "path", lambda out: ["path", "--train", train, "--vali", vali, "--l1", "0", "--max-iter",
                         "2", "--out", out / "run", "--plot", out / "p.png"])),
        ("7. tracebacks", "compare --plot without matplotlib", no_matplotlib(
            "compare", lambda out: ["compare", root / "a", root / "b", "--plot", out / "p.png"])),
        ("7. tracebacks", "plot without matplotlib", no_matplotlib(
            "plot", lambda out: ["plot", data / "additive.json", "--out", out / "p.png"])),
        ("8. leftovers", "path --plot onto a full disk", full_picture),
        ("9. NaN eval_set", "RSRank().fit(eval_set=all NaN in a feature)", nan_eval_set("fit")),
        ("9. NaN eval_set", "RSRank().fit_chunks(eval_set=NaN)", nan_eval_set("chunks")),
        ("10. messages", "--vali-cv beyond the training queries", vali_cv),
        ("10. messages", "RSRankCV(cv=) beyond the training queries", rsrankcv),
        ("10. messages", "an unsupported --plot extension", bad_extension),
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "results"))
    parser.add_argument("--before", help="fault_probe.json of an earlier run: its outcome of "
                        "each case beside this one's")
    args = parser.parse_args(argv)
    before = {}
    if args.before:
        earlier = json.loads(Path(args.before).read_text())
        before = {(r["class"], r["case"]): r for r in earlier["cases"]}
        commit = (earlier["provenance"].get("commit") or "unknown")[:12]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        data = workspace(root)
        register_directory_cases(root, data)
        register_output_cases(root, data)
        register_fetch_cases(root)
        register_reading_cases(root, data)
        rows = []
        for group, name, function in sorted(CASES, key=lambda c: int(c[0].split(".")[0])):
            try:
                good, said = function()
            except Exception as error:  # the probe's own failure is a not-good case too
                good, said = False, f"probe raised {type(error).__name__}: {error}"
            rows.append({"class": group, "case": name, "good": good,
                         "outcome": said.replace(str(root), "…")})
            print(f"{'good' if good else 'SKIP' if good is None else 'BAD '} {group}: {name}",
                  file=sys.stderr)
    judged = [r for r in rows if r["good"] is not None]
    n_good = sum(r["good"] for r in judged)
    mark = lambda good: "yes" if good else "skipped" if good is None else "**no**"  # noqa
    cell = lambda text: text.replace("|", "\\|")[:300]  # noqa
    lines = ["# Fault probe: outputs, downloads, CSV, cache, messages", "",
             f"{len(rows)} cases, {n_good} of {len(judged)} judged good"
             + (f", {len(rows) - len(judged)} skipped" if len(rows) > len(judged) else "")
             + ". A case is good when the exit status is the expected one, a refusal is one "
             "line without a traceback, and its check holds (nothing of the user's replaced "
             "or deleted, the output where it belongs, nothing left behind). Paths under the "
             "probe's scratch directory are shown as `…`."]
    header = "| class | case | good | outcome |"
    if before:
        old_good = sum(bool(before.get((r["class"], r["case"]), {}).get("good")) for r in rows)
        lines[-1] += (f" Before: the same probe on rsrank at commit {commit} found "
                      f"{old_good} of {len(rows)} good.")
        header = "| class | case | good | outcome | before: good | before: outcome |"
    lines += ["", header, "|---" * header.count(" | ") + "|---|"]
    for row in rows:
        line = f"| {row['class']} | {row['case']} | {mark(row['good'])} | {cell(row['outcome'])} |"
        if before:
            old = before.get((row["class"], row["case"]))
            line += (f" {mark(old['good'])} | {cell(old['outcome'])} |" if old
                     else " (not probed) | |")
        lines.append(line)
    write_report(args.out, "fault_probe", {"cases": rows, "good": n_good, "judged": len(judged),
                                           "before": list(before.values()) or None},
                 "\n".join(lines) + "\n")
    return 0 if n_good == len(judged) else 1


if __name__ == "__main__":
    sys.exit(main())
