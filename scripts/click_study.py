"""Learning from clicks: naive, debiased and skyline rankers on simulated click
logs, with LightGBM's and XGBoost's debiasing in the same run. Its code is
lab/click_study.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
