"""``rsrank fetch``: public learning-to-rank data, downloaded once and checked."""

import sys

from ..reading._fetch import dataset_bytes, default_data_home, fetch_letor, registry
from ._commands import COMMANDS
from ._edge import UsageError


def add_parser(commands):
    fetch = commands.add_parser(
        "fetch", help=COMMANDS["fetch"],
        description="Download a dataset of the registry (its files' SHA-256 checked, a cut-off "
        "transfer resumed, nothing left behind on failure) into the data home, once, and "
        "print its directory: rsrank train \"$(rsrank fetch OHSUMED)\". Each file is checked "
        "against its SHA-256 or its git blob id, stops at its registry size, and the free "
        "space is checked first.")
    fetch.add_argument("name", nargs="?", help="a registry name (see --list)")
    fetch.add_argument("--list", action="store_true", help="list the registry's datasets")
    fetch.add_argument("--data-home", default=None, help="where datasets are kept (default: "
                       "$RSRANK_DATA, the data/ directory of a source checkout, or "
                       "~/rsrank_data)")
    fetch.add_argument("--url", default=None, help="a mirror: the URL of the dataset's own "
                       "folder, holding its files uncompressed at the registry's paths "
                       "(Fold1/train.txt, ... or rank.train, ...; a local copy is served with "
                       "'python -m http.server' in that folder), or for a dataset published as "
                       "an archive (MSLR, Istella) the archive's own URL; the checksums still "
                       "apply")
    fetch.add_argument("--quiet", action="store_true", help="no progress bar")
    fetch.set_defaults(run=run)


def run(args):
    if args.data_home is not None and not args.data_home.strip():
        raise UsageError("--data-home is empty: give a directory, or leave it out for the "
                         "default")
    if args.list:
        home = args.data_home or default_data_home()
        print(f"datasets (kept in {home}):")
        for name, entry in registry().items():
            size, exact = dataset_bytes(entry)
            print(f"  {name}: {entry['description']} ({'' if exact else 'about '}"
                  f"{size / 1e6:.0f} MB; {entry['licence']})")
        return 0
    if args.name is None:
        raise UsageError("name a dataset (rsrank fetch --list lists them)")
    path = fetch_letor(args.name, data_home=args.data_home, url=args.url,
                       quiet=True if args.quiet else None)
    print(path)
    sys.stdout.flush()
    return 0
