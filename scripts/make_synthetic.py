"""Write the bundled synthetic LETOR dataset to data/synthetic.

    python scripts/make_synthetic.py [--out data/synthetic] [--seed 0]

The output is deterministic: the same seed gives the same bytes.
"""

import argparse
from pathlib import Path

from rsrank.synthetic import make_letor_like, write_letor_folds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "synthetic"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = make_letor_like(random_state=args.seed)
    write_letor_folds(data, args.out)
    print(f"wrote {len(set(data.qid))} queries, {len(data.y)} documents to {args.out}")


if __name__ == "__main__":
    main()
