"""Dense RSRank against XGBoost gblinear (and LightGBM) on LightGBM's
lambdarank example, over seeds, with paired tests over the test queries. Its
code is lab/lightgbm_example.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
