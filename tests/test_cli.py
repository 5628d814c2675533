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


def test_out_that_cannot_be_a_directory_is_refused_before_any_work(tmp_path, capsys):
    existing = tmp_path / "results.csv"
    existing.write_text("x\n")
    assert main(["reproduce", "damping-scaling", "--out", str(existing)]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    assert main(["fit", "damping", "--out", str(existing / "sub")]) == 2
    assert "--out: cannot create the directory" in capsys.readouterr().err


def test_ctrl_c_prints_one_line(monkeypatch, tmp_path, capsys):
    from diffimpact.reproduce import REPRODUCTIONS

    def interrupted(out, quick=False):
        raise KeyboardInterrupt

    monkeypatch.setitem(REPRODUCTIONS, "damping-scaling", (interrupted, "test"))
    assert main(["reproduce", "damping-scaling", "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"diffimpact reproduce damping-scaling: interrupted; files already written in {tmp_path} are complete"]


def test_a_check_inside_compiled_code_prints_its_message_in_one_line(monkeypatch, tmp_path, capsys):
    import equinox as eqx
    import jax.numpy as jnp

    from diffimpact.reproduce import REPRODUCTIONS

    def too_many_events(out, quick=False):
        check = eqx.filter_jit(lambda x: eqx.error_if(x, x > 0, "more than max_events = 3 events; increase max_events"))
        return check(jnp.asarray(1.0))

    monkeypatch.setitem(REPRODUCTIONS, "break", (too_many_events, "test"))
    assert main(["reproduce", "break", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["diffimpact reproduce break: more than max_events = 3 events; increase max_events"]
