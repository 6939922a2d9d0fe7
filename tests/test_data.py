"""The test positions the solver and analysis tests read are the published ones, unchanged."""

import hashlib
from pathlib import Path

import pytest

PONS = Path(__file__).resolve().parent / "data" / "pons"
PUBLISHED = {  # sha256 of Pascal Pons' files, as listed in data/pons/README.md
    "Test_L3_R1": "fae47639d993cc91f074d0b642a5f2bb251d31b15cea9df496d672c01fb2efec",
    "Test_L2_R1": "52b9ee96ab6e92fd755ca4c545792c07c548a5a994fd32beec2775939d071b3c",
    "Test_L1_R1": "003b7f5cc2b9b2d07ee2663cf92dfe99a50d7f4f57c556b6f35048e1bfaedb68",
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_pons_positions_are_in_the_repository_unchanged(name):
    data = (PONS / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == PUBLISHED[name]
    assert len(data.splitlines()) == 1000
