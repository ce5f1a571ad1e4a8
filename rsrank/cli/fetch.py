"""``rsrank fetch``: public learning-to-rank data, downloaded once and checked."""

import sys

from ..reading._fetch import dataset_bytes, default_data_home, fetch_letor, registry
from ._edge import UsageError


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
