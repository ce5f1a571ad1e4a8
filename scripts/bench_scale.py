"""Speed and memory at MSLR-WEB30K scale, RSRank against LightGBM and XGBoost.
Its code is lab/bench_scale.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
