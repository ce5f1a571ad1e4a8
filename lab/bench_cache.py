"""What the binary cache's checks cost against parsing the text again.

    python scripts/bench_cache.py [--rows 300000] [--repeats 3] [--out results]

On one MSLR-shaped LETOR file (136 features, 6 significant digits), in
this process, each the best of ``--repeats`` runs:

* ``parse``: ``load_letor`` without the cache (the compiled parser);
* ``store``: the first load with the cache: a parse, plus writing the
  entry and the CRC-32 of every array;
* ``load``: a later load of an untouched entry (its files' stamps are the
  ones written: the kinds, lengths and ends are checked);
* ``load touched``: a load after every array file was touched (its inode
  change time moved, as any rewrite moves it): the CRC-32 of every array
  against ``meta.json``, then every value's check;
* ``crc32``: the CRC-32 of the arrays alone, and its rate in GB/s.

Every loaded entry's pages are read once (a sum), as a fit would read them.
Writes ``cache_check.md`` and ``cache_check.json`` into ``--out``.
"""

import argparse
import os
import tempfile
from pathlib import Path

from _bench import fastest, internal, write_letor_text, write_report

REPO = Path(__file__).resolve().parents[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "results"))
    args = parser.parse_args(argv)

    from rsrank import load_letor
    from rsrank.reading.synthetic import make_mslr_like

    n_queries = max(1, round(args.rows * 31_531 / 3_771_125))
    data = make_mslr_like(n_documents=args.rows, n_queries=n_queries, random_state=0)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "data.txt"
        write_letor_text(path, data.X, data.y, data.qid)
        cache = Path(scratch) / "cache"
        load_letor(REPO / "rsrank" / "data" / "synthetic" / "Fold1" / "vali.txt.gz")  # compile

        def touched(X, y, qid):
            return float(X.data.sum() + X.indices.sum() + y.sum() + qid.sum())

        def stored():
            for entry in cache.glob("*"):
                for file in entry.iterdir():
                    file.chmod(0o644)
                    file.unlink()
                entry.rmdir()
            load_letor(path, cache=cache)

        parse = fastest(lambda: load_letor(path), args.repeats)
        store = fastest(stored, args.repeats)
        load = fastest(lambda: touched(*load_letor(path, cache=cache)), args.repeats)
        (entry,) = [e for e in cache.iterdir() if not e.name.startswith(".")]

        def load_after_touch():
            for name in ("data", "indices", "indptr", "y", "qid"):
                os.chmod(entry / f"{name}.npy", 0o444)  # a new inode change time
            touched(*load_letor(path, cache=cache))

        load_touched = fastest(load_after_touch, args.repeats)
        X, y, qid = load_letor(path, cache=cache)
        arrays = [X.data, X.indices, X.indptr, y, qid]
        nbytes = sum(a.nbytes for a in arrays)
        crc = fastest(lambda: [internal("reading._cache", "content_crc")(a) for a in arrays], args.repeats)
        text_bytes = path.stat().st_size
    rows = {"parse": parse, "store": store, "load": load, "load touched": load_touched,
            "crc32": crc}
    report = {"rows": args.rows, "features": int(data.X.shape[1]), "text_bytes": text_bytes,
              "array_bytes": nbytes, "seconds": rows,
              "crc32_gb_per_s": nbytes / crc / 1e9}
    lines = [
        "# The binary cache's checks against a parse",
        "",
        f"One LETOR text file of {args.rows:,} rows x {data.X.shape[1]} features "
        f"({text_bytes / 1e6:,.0f} MB of text, {nbytes / 1e6:,.0f} MB of arrays), the best of "
        f"{args.repeats} runs each. Ratios are to parsing the text.",
        "",
        "| step | seconds | x parse |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {seconds:.3f} | {seconds / parse:.3f} |"
              for name, seconds in rows.items()]
    lines += [
        "",
        f"The CRC-32 of the arrays runs at {nbytes / crc / 1e9:.2f} GB/s. An untouched "
        "entry is trusted by its files' stamps (size, times, inode, written in meta.json); "
        "an entry touched since it was written pays the CRC-32 and the value checks, "
        f"{load_touched / parse:.2f}x a parse, and is used only when its bytes are the ones "
        "written.",
    ]
    write_report(args.out, "cache_check", report, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
