"""Time to a tested model at MSLR-WEB30K shape, from text files: RSRank's
``rsrank train`` against LightGBM and XGBoost reading the same rows with their
own loaders. Its code is lab/bench_end_to_end.py; ``--help`` lists its
options."""

from _lab import run

run(__file__)
