"""fetch_letor and rsrank fetch against a server on 127.0.0.1 (never the
internet): checksums, resumed and restarted transfers, nothing left behind
on failure, and the registry's real checksums on the real files."""

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from rsrank.reading import _fetch
from rsrank.cli import main
from rsrank.reading.datasets import fetch_letor, load_letor

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


class Server:
    """Files of ``root`` over HTTP with range requests; ``cut`` names paths
    whose first response stops halfway, ``ranges`` whether ranges are
    honoured. ``requests`` logs ``(path, range header)``."""

    def __init__(self, root, cut=(), ranges=True):
        self.root, self.cut, self.ranges, self.requests = Path(root), set(cut), ranges, []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                rel = self.path.lstrip("/")
                server.requests.append((rel, self.headers.get("Range")))
                file = server.root / rel
                if not file.is_file():
                    self.send_error(404, "Not Found")
                    return
                data = file.read_bytes()
                start = 0
                if self.headers.get("Range") and server.ranges:
                    start = int(self.headers["Range"].split("=")[1].rstrip("-"))
                    self.send_response(206)
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if rel in server.cut:
                    server.cut.discard(rel)
                    self.wfile.write(body[:len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A registry of one small dataset whose files a local server holds."""
    served = tmp_path / "served"
    files = {}
    rng = np.random.default_rng(0)
    for rel in ("Fold1/train.txt", "Fold1/vali.txt", "Fold1/test.txt"):
        lines = [f"{rng.integers(0, 3)} qid:{q} 1:{rng.random():.4f} 2:{rng.random():.4f}"
                 for q in range(1, 6) for _ in range(400)]
        data = ("\n".join(lines) + "\n").encode()
        (served / rel).parent.mkdir(parents=True, exist_ok=True)
        (served / rel).write_bytes(data)
        files[rel] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"datasets": {"Toy": {
        "description": "toy", "url": "http://127.0.0.1:9/nowhere/", "licence": "none",
        "cite": "", "files": files}}}))
    monkeypatch.setattr(_fetch, "REGISTRY", registry)
    server = Server(served)
    yield server, served, tmp_path / "home"
    server.close()


def test_a_fetch_downloads_checks_and_keeps_the_files_once(toy):
    server, served, home = toy
    path = fetch_letor("toy", data_home=home, url=server.url, quiet=True)
    assert path == home / "Toy"
    for rel in ("Fold1/train.txt", "Fold1/test.txt"):
        assert (path / rel).read_bytes() == (served / rel).read_bytes()
    assert sorted(p.name for p in home.iterdir()) == ["Toy"]  # no staging left
    server.close()  # a second fetch needs no server
    assert fetch_letor("Toy", data_home=home, url=server.url, quiet=True) == path


def test_a_transfer_cut_off_midway_is_resumed_with_a_range_request(toy):
    server, served, home = toy
    server.cut = {"Fold1/vali.txt"}
    path = fetch_letor("Toy", data_home=home, url=server.url, quiet=True)
    assert (path / "Fold1/vali.txt").read_bytes() == (served / "Fold1/vali.txt").read_bytes()
    asked = [r for r in server.requests if r[0] == "Fold1/vali.txt"]
    size = (served / "Fold1/vali.txt").stat().st_size
    assert asked == [("Fold1/vali.txt", None), ("Fold1/vali.txt", f"bytes={size // 2}-")]


def test_a_server_without_ranges_restarts_the_file(toy):
    server, served, home = toy
    server.cut, server.ranges = {"Fold1/test.txt"}, False
    path = fetch_letor("Toy", data_home=home, url=server.url, quiet=True)
    assert (path / "Fold1/test.txt").read_bytes() == (served / "Fold1/test.txt").read_bytes()


def test_a_wrong_checksum_or_a_missing_file_leaves_nothing_behind(toy):
    server, served, home = toy
    (served / "Fold1/test.txt").write_bytes(b"0 qid:1 1:0.5\n")
    with pytest.raises(ValueError, match=r"test.txt: SHA-256 [0-9a-f]{64}, not the registry's"):
        fetch_letor("Toy", data_home=home, url=server.url, quiet=True)
    assert list(home.iterdir()) == []
    (served / "Fold1/test.txt").unlink()
    with pytest.raises(OSError, match="cannot download .*test.txt: HTTP 404"):
        fetch_letor("Toy", data_home=home, url=server.url, quiet=True)
    assert list(home.iterdir()) == []


def test_offline_and_unknown_names_are_one_line_errors(toy, capsys):
    _, _, home = toy
    # the registry's own URL: port 9 on this machine, where nothing listens
    assert main(["fetch", "Toy", "--data-home", str(home), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rsrank fetch: error: cannot download http://127.0.0.1:9/")
    assert err.count("\n") == 1 and "pass url= a mirror" in err
    assert list(home.iterdir()) == []
    assert main(["fetch", "MQ2009", "--data-home", str(home)]) == 2
    assert "no dataset 'MQ2009' in the registry; known: Toy" in capsys.readouterr().err


def test_rsrank_fetch_prints_the_directory_that_train_reads(toy, capsys):
    server, _, home = toy
    assert main(["fetch", "toy", "--data-home", str(home), "--url", server.url,
                 "--quiet"]) == 0
    path = capsys.readouterr().out.strip()
    assert path == str(home / "Toy")
    assert main(["train", path, "--max-iter", "5", "--l1-ratio", "0", "--quiet"]) == 0
    assert main(["fetch", "--list", "--data-home", str(home)]) == 0
    assert "Toy: toy" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["LightGBM-lambdarank-example", "OHSUMED"])
def test_the_registry_checksums_are_those_of_the_published_files(name, tmp_path):
    """The real files (../shared/data holds them gzipped), served as their
    sources publish them, pass the registry's checksums."""
    if not (SHARED / name).is_dir():
        pytest.skip("../shared/data is absent")
    served = tmp_path / "served"
    entry = _fetch.registry()[name]
    for rel in entry["files"]:
        (served / rel).parent.mkdir(parents=True, exist_ok=True)
        (served / rel).write_bytes(gzip.decompress((SHARED / name / f"{rel}.gz").read_bytes()))
    server = Server(served)
    try:
        path = fetch_letor(name, data_home=tmp_path / "home", url=server.url, quiet=True)
    finally:
        server.close()
    first = next(iter(entry["files"]))
    if first.endswith(".query"):
        first = first[:-len(".query")]
    ours, theirs = load_letor(path / first), load_letor(SHARED / name / f"{first}.gz")
    assert (ours[0] != theirs[0]).nnz == 0
    np.testing.assert_array_equal(ours[1], theirs[1])


# -- faults: a server that sends too much or junk, disks, leftovers, two fetches -------------


class Faulty:
    """A server whose every answer is ``mode``: ``endless`` (bytes without
    end, no length), ``oversized`` (an honest Content-Length above the
    registry's size), ``long`` (more bytes than its Content-Length says is
    impossible over HTTP/1.1, so: no length, a file a byte too long),
    ``junk`` (not an HTTP status line)."""

    def __init__(self, mode, size):
        import socketserver

        self.sent = 0
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                try:
                    if mode == "junk":
                        self.wfile.write(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
                        return
                    length = {"oversized": f"Content-Length: {size * 2}\r\n"}.get(mode, "")
                    self.wfile.write(f"HTTP/1.0 200 OK\r\n{length}\r\n".encode())
                    block = b"0" * 65536
                    total = {"endless": 10**12, "oversized": size * 2, "long": size + 1}[mode]
                    while outer.sent < total:
                        part = block[:total - outer.sent]
                        self.wfile.write(part)
                        outer.sent += len(part)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("mode", ["endless", "oversized", "long"])
def test_a_response_larger_than_the_registry_says_stops_there_and_leaves_nothing(toy, mode):
    _, served, home = toy
    size = (served / "Fold1/train.txt").stat().st_size
    server = Faulty(mode, size)
    try:
        with pytest.raises(ValueError, match=f"larger than the registry's {size:,} bytes"):
            fetch_letor("Toy", data_home=home, url=server.url, quiet=True)
    finally:
        server.close()
    assert list(home.iterdir()) == []
    # it stopped at once: what the server got out is the registry's size and
    # what the sockets' buffers took before the client hung up
    assert server.sent <= size + (32 << 20)


def test_junk_instead_of_http_is_one_line(toy, capsys):
    _, _, home = toy
    server = Faulty("junk", 0)
    try:
        assert main(["fetch", "Toy", "--data-home", str(home), "--url", server.url,
                     "--quiet"]) == 2
    finally:
        server.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the server's answer is not HTTP" in err
    assert list(home.iterdir()) == []


def test_the_disk_space_is_checked_before_the_first_byte(toy, monkeypatch, capsys):
    server, served, home = toy
    usage = shutil.disk_usage("/")
    monkeypatch.setattr(_fetch.shutil, "disk_usage", lambda path: usage._replace(free=1000))
    assert main(["fetch", "Toy", "--data-home", str(home), "--url", server.url,
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    total = sum(p.stat().st_size for p in served.rglob("*.txt"))
    assert err.count("\n") == 1
    assert f"needs {total / 1e3:.1f} kB and the disk has 1.0 kB free" in err
    assert server.requests == [] and list(home.iterdir()) == []


def test_a_dataset_on_disk_is_served_only_when_whole(toy, capsys):
    server, served, home = toy
    path = fetch_letor("Toy", data_home=home, url=server.url, quiet=True)
    server.close()
    test = path / "Fold1/test.txt"
    original = test.read_bytes()
    # a damaged byte, same size: found by the checksum, although the size is right
    test.write_bytes(original[:10] + bytes([original[10] ^ 1]) + original[11:])
    with pytest.raises(FileExistsError, match="Fold1/test.txt has SHA-256 .* .damaged or changed."):
        fetch_letor("Toy", data_home=home, quiet=True)
    test.write_bytes(b"")  # a zero-byte file
    with pytest.raises(FileExistsError, match="test.txt has 0 bytes, not the registry's"):
        fetch_letor("Toy", data_home=home, quiet=True)
    test.write_bytes(original)
    assert fetch_letor("Toy", data_home=home, quiet=True) == path
    assert test.read_bytes() == original  # nothing was removed or rewritten


def test_a_killed_fetchs_staging_directory_is_cleaned_by_the_next(toy):
    server, _, home = toy
    home.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = home / f".Toy.fetching-{dead.pid}"
    (left / "Fold1").mkdir(parents=True)
    (left / "Fold1" / "train.txt").write_bytes(b"half")
    mine = home / ".mine.fetching-1"  # not a name of this dataset's: not touched
    mine.mkdir()
    fetch_letor("Toy", data_home=home, url=server.url, quiet=True)
    assert sorted(p.name for p in home.iterdir()) == [".mine.fetching-1", "Toy"]


@pytest.mark.parametrize("home_kind", ["empty", "file", "read-only"])
def test_a_data_home_that_cannot_be_one_is_told_in_one_line(toy, tmp_path, capsys, home_kind,
                                                           monkeypatch):
    server, _, _ = toy
    if home_kind == "empty":
        home = ""
    elif home_kind == "file":
        home = tmp_path / "home-file"
        home.write_text("mine\n")
    else:
        if os.geteuid() == 0:  # root writes anywhere: the home is read-only as asked
            monkeypatch.setattr(_fetch.os, "access", lambda path, mode: False)
        home = tmp_path / "ro"
        home.mkdir()
        home.chmod(0o500)
    code = main(["fetch", "Toy", "--data-home", str(home), "--url", server.url, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert {"empty": "--data-home is empty", "file": "the data home is a file",
            "read-only": "cannot write in the data home"}[home_kind] in err
    assert ".fetching" not in err and ".lock" not in err
    assert not [p for p in tmp_path.rglob(".*")]  # no staging directory, no lock
    if home_kind == "file":
        assert home.read_text() == "mine\n"


def test_two_fetches_of_one_dataset_take_turns(toy, tmp_path):
    server, served, home = toy
    script = ("import sys; from pathlib import Path; from rsrank.reading import _fetch; "
              f"_fetch.REGISTRY = Path({str(_fetch.REGISTRY)!r}); "
              f"print(_fetch.fetch_letor('Toy', data_home={str(home)!r}, "
              f"url={server.url!r}, quiet=True))")
    runs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert {out.strip() for out, _ in outputs} == {str(home / "Toy")}
    # one downloaded, the other waited and found the dataset whole
    assert len([r for r in server.requests if r[0] == "Fold1/train.txt"]) == 1
    assert sorted(p.name for p in home.iterdir()) == ["Toy"]


# -- files named by their git blob id ------------------------------------------------------


def git_blob(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_the_git_blob_id_is_the_one_the_repositorys_tree_publishes():
    """``../shared/data/MORE_DATASETS.md`` gives the blob id of OHSUMED's
    Fold1/test.txt in the pinned commit's tree; the registry's SHA-256 of
    the same bytes is already checked."""
    path = SHARED / "OHSUMED" / "Fold1" / "test.txt.gz"
    if not path.is_file():
        pytest.skip("../shared/data is absent")
    data = gzip.decompress(path.read_bytes())
    assert git_blob(data) == "da0d5ff567eb0ef3bc767dcc4169099457bc4e51"
    assert hashlib.sha256(data).hexdigest() == \
        _fetch.registry()["OHSUMED"]["files"]["Fold1/test.txt"]["sha256"]


@pytest.mark.parametrize("name", ["MQ2007", "MQ2008", "TD2003", "TD2004"])
def test_the_letor_sets_by_blob_id_are_five_folds_pinned_to_a_commit(name):
    entry = _fetch.registry()[name]
    assert re.fullmatch(r"https://raw\.githubusercontent\.com/JasonWyse/factorized_rankSVM/"
                        r"54636aff10a18b603749ec9437db2986a6128a8f/data/[\w]+/", entry["url"])
    assert sorted(entry["files"]) == sorted(f"Fold{k}/{split}.txt" for k in range(1, 6)
                                            for split in ("train", "vali", "test"))
    blobs = {rel: spec["git_blob"] for rel, spec in entry["files"].items()}
    assert all(re.fullmatch(r"[0-9a-f]{40}", blob) for blob in blobs.values())
    for k in range(1, 6):  # each fold's vali is the previous fold's test (Fold1's: Fold5's)
        assert blobs[f"Fold{k}/vali.txt"] == blobs[f"Fold{(k - 2) % 5 + 1}/test.txt"]
    assert _fetch.dataset_bytes(entry) == (entry["approx_bytes"], False)


@pytest.fixture
def blobs(tmp_path, monkeypatch):
    """A registry of two folds named by git blob ids without sizes, Fold1's
    vali being Fold2's test, and a server of them."""
    served = tmp_path / "served"
    texts = {f"Fold{k}/{split}.txt": "".join(f"{(q + k) % 3} qid:{q} 1:{q / 7:.3f}\n"
                                             for q in range(k * 10 + s, k * 10 + s + 40))
             for k in (1, 2) for s, split in enumerate(("train", "vali", "test"))}
    texts["Fold1/vali.txt"] = texts["Fold2/test.txt"]
    files = {}
    for rel, text in texts.items():
        (served / rel).parent.mkdir(parents=True, exist_ok=True)
        (served / rel).write_text(text)
        files[rel] = {"git_blob": git_blob(text.encode())}
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"datasets": {"Blobs": {
        "description": "blobs", "url": "http://127.0.0.1:9/", "licence": "none", "cite": "",
        "approx_bytes": 20000, "files": files}}}))
    monkeypatch.setattr(_fetch, "REGISTRY", registry)
    server = Server(served)
    yield server, served, tmp_path / "home"
    server.close()


def test_files_named_by_blob_id_are_checked_and_a_shared_one_downloaded_once(blobs, capsys):
    server, served, home = blobs
    path = fetch_letor("Blobs", data_home=home, url=server.url, quiet=True)
    for rel in ("Fold1/vali.txt", "Fold2/test.txt", "Fold1/train.txt"):
        assert (path / rel).read_bytes() == (served / rel).read_bytes()
    asked = [rel for rel, _ in server.requests]
    assert sorted(asked) == sorted(set(asked)) and len(asked) == 5  # six files, five blobs
    assert main(["fetch", "--list", "--data-home", str(home)]) == 0
    assert "Blobs: blobs (about 0 MB; none)" in capsys.readouterr().out
    # on disk: a changed byte is found by the blob id
    data = bytearray((path / "Fold2/train.txt").read_bytes())
    data[0] ^= 1
    (path / "Fold2/train.txt").write_bytes(bytes(data))
    with pytest.raises(FileExistsError, match="Fold2/train.txt has git blob id [0-9a-f]{40}, "
                                              "not the registry's"):
        fetch_letor("Blobs", data_home=home, quiet=True)


def test_a_damaged_blob_on_the_way_leaves_nothing(blobs):
    server, served, home = blobs
    (served / "Fold1/test.txt").write_text("0 qid:1 1:0.5\n")
    with pytest.raises(ValueError, match="test.txt: git blob id [0-9a-f]{40}, not the "
                                         "registry's"):
        fetch_letor("Blobs", data_home=home, url=server.url, quiet=True)
    assert list(home.iterdir()) == []


# -- datasets published as one archive (MSLR, Istella) ----------------------------------------


def _archive_registry(tmp_path, monkeypatch, form, members, layout, max_unpacked=10**6):
    """A registry of one dataset whose archive (``members``: name -> bytes,
    or name -> ("link", target)) a local server holds."""
    import io
    import tarfile
    import zipfile

    served = tmp_path / "served"
    served.mkdir()
    archive = served / f"data.{form}"
    if form == "zip":
        with zipfile.ZipFile(archive, "w") as handle:
            for name, data in members.items():
                handle.writestr(name, data)
    else:
        with tarfile.open(archive, "w:gz") as handle:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                if isinstance(data, tuple):
                    info.type, info.linkname = tarfile.SYMTYPE, data[1]
                    handle.addfile(info)
                else:
                    info.size = len(data)
                    handle.addfile(info, io.BytesIO(data))
    payload = archive.read_bytes()
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"datasets": {"Packed": {
        "description": "packed", "licence": "none", "cite": "", "approx_bytes": 1000,
        "archive": {"url": "http://127.0.0.1:9/data", "format": form, "bytes": len(payload),
                    "sha256": hashlib.sha256(payload).hexdigest(),
                    "max_unpacked": max_unpacked},
        "layout": layout}}}))
    monkeypatch.setattr(_fetch, "REGISTRY", registry)
    return served, archive


FOLD_FILES = {f"Fold{k}/{split}.txt": "".join(f"{(q + d + k) % 3} qid:{q} 1:{d / 9:.3f}\n"
                                              for q in range(10) for d in range(4)).encode()
              for k in (1, 2) for split in ("train", "vali", "test")}


@pytest.mark.parametrize("form", ["zip", "tar.gz"])
def test_an_archive_is_checked_then_unpacked_as_train_reads_it(form, tmp_path, monkeypatch,
                                                              capsys):
    served, archive = _archive_registry(tmp_path, monkeypatch, form,
                                        {**FOLD_FILES, "README.txt": b"about\n"},
                                        sorted(FOLD_FILES))
    server = Server(served)
    home = tmp_path / "home"
    try:
        path = fetch_letor("Packed", data_home=home, url=server.url + archive.name, quiet=True)
    finally:
        server.close()
    for rel, data in FOLD_FILES.items():
        assert (path / rel).read_bytes() == data
    assert sorted(p.name for p in home.iterdir()) == ["Packed"]  # no archive, no staging left
    assert not list(path.glob(".archive*"))
    # served again without a server, checked against what the fetch recorded
    assert fetch_letor("Packed", data_home=home, quiet=True) == path
    (path / "Fold2/test.txt").write_bytes(b"0 qid:1 1:0.5\n")
    with pytest.raises(FileExistsError, match="Fold2/test.txt has"):
        fetch_letor("Packed", data_home=home, quiet=True)
    (path / "Fold2/test.txt").write_bytes(FOLD_FILES["Fold2/test.txt"])
    assert main(["train", str(path), "--max-iter", "3", "--l1-ratio", "0", "--quiet"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("members, words", [
    ({**FOLD_FILES, "../outside.txt": b"x"}, "a path outside the dataset"),
    ({**FOLD_FILES, "/etc/evil": b"x"}, "a path outside the dataset"),
    ({**FOLD_FILES, "Fold1/link": ("link", "/etc/passwd")}, "a link or a device"),
    ({name: data for name, data in FOLD_FILES.items() if name != "Fold2/vali.txt"},
     "lacks Fold2/vali.txt"),
    ({**FOLD_FILES, "big.bin": b"0" * 20000}, "more than the registry's"),
])
def test_a_bad_archive_unpacks_nothing(members, words, tmp_path, monkeypatch):
    form = "tar.gz"  # the only format that holds links
    served, archive = _archive_registry(tmp_path, monkeypatch, form, members,
                                        sorted(FOLD_FILES), max_unpacked=10000)
    server = Server(served)
    home = tmp_path / "home"
    try:
        with pytest.raises(ValueError, match=words):
            fetch_letor("Packed", data_home=home, url=server.url + archive.name, quiet=True)
    finally:
        server.close()
    assert list(home.iterdir()) == [] and not (tmp_path / "outside.txt").exists()


def test_a_damaged_archive_is_refused_before_anything_is_unpacked(tmp_path, monkeypatch):
    served, archive = _archive_registry(tmp_path, monkeypatch, "zip", FOLD_FILES,
                                        sorted(FOLD_FILES))
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 1
    archive.write_bytes(bytes(data))
    server = Server(served)
    home = tmp_path / "home"
    try:
        with pytest.raises(ValueError, match="SHA-256 [0-9a-f]{64}, not the registry's"):
            fetch_letor("Packed", data_home=home, url=server.url + archive.name, quiet=True)
    finally:
        server.close()
    assert list(home.iterdir()) == []


def test_the_mslr_and_istella_entries_pin_their_archives():
    known = _fetch.registry()
    for name, size in (("MSLR-WEB10K", 1234144912), ("MSLR-WEB30K", 3849406307),
                       ("Istella", 1288401248)):
        archive = known[name]["archive"]
        assert archive["bytes"] == size and re.fullmatch(r"[0-9a-f]{64}", archive["sha256"])
        assert archive["max_unpacked"] > known[name]["approx_bytes"] > archive["bytes"]
    assert known["MSLR-WEB10K"]["layout"] == [f"Fold{k}/{s}.txt" for k in range(1, 6)
                                              for s in ("train", "vali", "test")]
