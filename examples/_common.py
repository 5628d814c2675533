"""Shared command line of the example scripts: ``--quick`` and ``--out``."""

import argparse
from pathlib import Path


def parse(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="coarse grid, for a fast look")
    parser.add_argument("--out", default=str(Path(__file__).parent / "out"), help="directory for the PNG")
    return parser.parse_args()
