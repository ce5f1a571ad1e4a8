from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def ohsumed_root():
    root = SHARED_DATA / "OHSUMED"
    if not (root / "Fold1").is_dir():
        pytest.skip("OHSUMED folds not present in ../shared/data")
    return root


@pytest.fixture(scope="session")
def lightgbm_example():
    root = SHARED_DATA / "LightGBM-lambdarank-example"
    if not (root / "rank.train.gz").is_file():
        pytest.skip("LightGBM lambdarank example not present in ../shared/data")
    return root


@pytest.fixture(scope="session")
def bundled_root():
    return REPO / "rsrank" / "data" / "synthetic"
