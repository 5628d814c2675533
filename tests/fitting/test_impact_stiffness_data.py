"""``diffimpact fit impact-stiffness --data FILE``: a user's force–penetration history, validated and fitted."""

import json

import pytest

from diffimpact.cli import main
from fitting import impact_stiffness as st


def _write_history(path, data, extra_rows=""):
    lines = ["t_s,force_N,penetration_m,sigma_force_N,sigma_penetration_m,mass_kg,note"]
    for t, force, penetration in zip(data["times"], *data["history"]):
        lines.append(f"{float(t)!r},{float(force)!r},{float(penetration)!r},{st.FORCE_SIGMA},{st.PENETRATION_SIGMA},{st.MASS},lab")
    path.write_text("\n".join(lines) + "\n" + extra_rows)
    return path


@pytest.fixture(scope="module")
def synthetic():
    return st.synthetic_data(quick=True)


def test_cli_fits_a_users_history_within_its_uncertainty(synthetic, tmp_path):
    csv = _write_history(tmp_path / "history.csv", synthetic)
    out = tmp_path / "out"
    assert main(["fit", "impact-stiffness", "--data", str(csv), "--quick", "--out", str(out)]) == 0
    record = json.loads((out / "impact-stiffness.json").read_text())
    fitted = record["fit_force_penetration_history"]["parameters"]
    for name, truth in (("stiffness", st.TRUTH.stiffness), ("restitution", st.TRUTH.restitution)):
        assert abs(fitted[name]["value"] - truth) < 3 * fitted[name]["standard_error"]
    assert fitted["restitution"]["standard_error"] < 0.01
    assert record["model"]["mass"] == st.MASS and record["load_report"]["rows_kept"] == synthetic["times"].size
    header = (out / "impact-stiffness.csv").read_text().splitlines()[0]
    assert header == "time_s,force_data_N,force_fit_N,penetration_data_m,penetration_fit_m"
    assert (out / "impact-stiffness.png").stat().st_size > 10_000


def test_a_fit_that_does_not_converge_is_a_warning_line_and_the_json_names_the_file(monkeypatch, synthetic, tmp_path,
                                                                                   capsys):
    monkeypatch.setattr(st, "MAX_STEPS", 2)
    csv = _write_history(tmp_path / "history.csv", synthetic)
    monkeypatch.chdir(tmp_path)
    assert main(["fit", "impact-stiffness", "--data", "history.csv", "--quick", "--out", "out"]) == 0
    assert ("warning: the fit of the force–penetration history did not converge (no tolerance met); its values and "
            "standard errors are not reliable") in capsys.readouterr().out.splitlines()
    assert json.loads((tmp_path / "out" / "impact-stiffness.json").read_text())["data"] == str(csv.resolve())


def test_bad_rows_are_rejected_with_file_row_and_reason(synthetic, tmp_path, capsys):
    csv = _write_history(tmp_path / "bad.csv", synthetic, "-1e-6,10.0,1e-6,20,2e-6,0.17,x\n2e-5,oops,1e-6,20,2e-6,0.17,x\n")
    rows = synthetic["times"].size
    assert main(["fit", "impact-stiffness", "--data", str(csv), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert f"{csv}:{rows + 2}: t_s = -1e-06 s is negative" in error
    assert f"{csv}:{rows + 3}: force_N: not a number: 'oops'" in error
    assert not (tmp_path / "out").exists()


def test_inconsistent_mass_and_missing_columns_are_named(tmp_path):
    path = tmp_path / "mass.csv"
    path.write_text("t_s,force_N,penetration_m,mass_kg\n0,0,0,0.17\n1e-5,100,1e-6,0.2\n2e-5,150,2e-6,0.17\n")
    with pytest.raises(ValueError, match="mass_kg must be the same on every row"):
        st.load_data(path)
    path.write_text("t_s,force_N\n0,0\n")
    with pytest.raises(ValueError, match=rf"{path}:1: missing column\(s\) penetration_m"):
        st.load_data(path)
