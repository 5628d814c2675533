"""The command line: listing, unknown names, bad arguments (no solves)."""

from diffimpact.cli import main


def test_list_and_unknown_name(capsys):
    assert main(["reproduce", "--list"]) == 0
    assert "damping-verification" in capsys.readouterr().out
    assert main(["reproduce", "no-such-study"]) == 2


def test_missing_data_file_is_reported(tmp_path, capsys):
    assert main(["fit", "damping", "--data", str(tmp_path / "x.csv"), "--out", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_fit_list_and_unknown_name(capsys):
    assert main(["fit", "--list"]) == 0
    assert "impact-stiffness" in capsys.readouterr().out
    assert main(["fit", "no-such-fit"]) == 2
