"""``diffimpact reproduce routh-double-pendulum --quick``: files, energy steps, Fig. 4 arrangements."""

import numpy as np

from diffimpact.cli import main
from diffimpact.io import read_csv


def test_quick_run_writes_its_files_and_every_collision_dissipates(tmp_path):
    assert main(["reproduce", "routh-double-pendulum", "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "routh-double-pendulum.png").stat().st_size > 10_000
    collisions = read_csv(tmp_path / "routh-double-pendulum-collisions.csv")
    assert set(np.unique(collisions["mu"])) == {0.0, 0.15}
    assert np.all(collisions["energy_after_J"] < collisions["energy_before_J"])
    assert np.all(np.isin(collisions["fig4_case"], np.arange(5)))
    table = read_csv(tmp_path / "routh-double-pendulum.csv")
    for key in ("mu0", "mu0p15"):
        energy = table[f"energy_J_{key}"]
        steps = np.diff(energy)
        assert np.all(steps < 1e-7)  # constant between collisions, down at each
        assert np.sum(steps < -1e-3) == np.sum((collisions["mu"] == (0.15 if key == "mu0p15" else 0.0))
                                                & (collisions["t_s"] < table["t_s"][-1]))
