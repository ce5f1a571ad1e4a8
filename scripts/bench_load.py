"""Loading a LETOR text file: RSRank's compiled parser against its line reader,
scikit-learn, XGBoost and LightGBM, on the same generated file. Its code is
lab/bench_load.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
