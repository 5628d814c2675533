"""The command line: listing, unknown names, bad arguments (no solves), Ctrl-C."""

import inspect
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def test_an_empty_out_is_refused_by_every_command(capsys):
    for command in (["reproduce", "damping-scaling"], ["fit", "damping", "--quick"], ["shot"]):
        assert main([*command, "--out", ""]) == 2
        assert capsys.readouterr().err == "--out: must name a directory, got an empty string\n"


def test_data_that_is_not_a_regular_file_is_named_as_such(tmp_path, capsys):
    assert main(["fit", "damping", "--data", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"--data {tmp_path}: not a regular CSV file (a directory)\n"
    assert main(["fit", "damping", "--data", "/dev/null", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == "--data /dev/null: not a regular CSV file (a device or other special file)\n"


def test_damping_data_that_cannot_determine_the_fit_is_one_line_and_no_files(tmp_path, capsys):
    zeros = tmp_path / "zeros_c.csv"
    zeros.write_text("n,e,c_opt_unit\n" + "".join(f"{1 + k / 10},{e},0\n" for k in range(7) for e in (0.5, 0.7, 0.9)))
    one_row = tmp_path / "one_row.csv"
    one_row.write_text("n,e,c_opt_unit\n1.5,0.5,0.3\n")
    from fitting.damping import PER_N_REQUIREMENT

    for path, shortfall in ((zeros, "n = 1 has ĉ = 0 at every e < 1"), (one_row, "n = 1.5 has 1 row(s) with e < 1")):
        assert main(["fit", "damping", "--quick", "--data", str(path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"diffimpact fit damping: {path}: {PER_N_REQUIREMENT}; {shortfall}")
        assert err.count("\n") == 1
        assert not (tmp_path / "out").exists()


def test_the_header_names_the_data_file_used(monkeypatch, tmp_path, capsys):
    from fitting.studies import FITS

    def fitted(out, quick=False, data=None, drop_bad_rows=False):
        return "fitted"

    monkeypatch.setitem(FITS, "damping", (fitted, "test"))
    (tmp_path / "mine.csv").write_text("n,e,c_opt_unit\n")
    monkeypatch.chdir(tmp_path)
    assert main(["fit", "damping", "--quick", "--data", "mine.csv", "--out", "out"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"damping: test (quick); data: {tmp_path.resolve() / 'mine.csv'}"


def test_a_second_run_into_the_same_out_is_refused_while_the_first_runs(monkeypatch, tmp_path, capsys):
    from diffimpact._files import LOCK_NAME
    from diffimpact.reproduce import REPRODUCTIONS

    seen = []

    def second_run(out, quick=False):
        seen.append((out / LOCK_NAME).read_text())
        assert main(["reproduce", "damping-scaling", "--out", str(out)]) == 2
        return "first run done"

    monkeypatch.setitem(REPRODUCTIONS, "damping-scaling", (second_run, "test"))
    out = tmp_path / "out"
    assert main(["reproduce", "damping-scaling", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert seen == [f"{os.getpid()}\n"]
    assert captured.err == (f"diffimpact reproduce damping-scaling: --out {out}: another run (PID {os.getpid()}) is "
                            f"writing in this directory (lock file {out / LOCK_NAME}); wait for it to end or choose "
                            "another --out (remove the lock file if no run is writing there)\n")
    assert "first run done" in captured.out
    assert not out.exists()  # the run wrote nothing: the lock and the directory it made are gone


def test_a_stale_lock_is_taken_over_and_the_lock_goes_on_error_and_ctrl_c(monkeypatch, tmp_path, capsys):
    from diffimpact._files import LOCK_NAME
    from diffimpact.reproduce import REPRODUCTIONS

    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text(finished.stdout)  # its process has ended
    for outcome, status in ((lambda: "done", 0), (ValueError("bad input"), 2), (KeyboardInterrupt(), 130)):
        def run(out, quick=False, outcome=outcome):
            assert (out / LOCK_NAME).read_text() == f"{os.getpid()}\n"
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome()

        monkeypatch.setitem(REPRODUCTIONS, "damping-scaling", (run, "test"))
        assert main(["reproduce", "damping-scaling", "--out", str(out)]) == status
        assert not (out / LOCK_NAME).exists()
    capsys.readouterr()


def test_a_long_compilation_is_announced_in_one_line(monkeypatch, tmp_path, capsys):
    import jax
    import jax.numpy as jnp

    import diffimpact.cli as cli
    from diffimpact.reproduce import REPRODUCTIONS

    def compiles(out, quick=False):
        def program(x):  # ~0.3 s to compile, unrolled
            return jax.lax.scan(lambda c, _: (jnp.sin(c @ c) * 0.5 + jnp.cos(c), None), x, None, length=200,
                                unroll=200)[0]

        jax.jit(program)(jnp.ones((4, 4))).block_until_ready()
        jax.jit(lambda x: x + 1.0)(1.0)
        return "compiled"

    monkeypatch.setattr(cli, "COMPILE_NOTE_AFTER_S", 0.05)
    monkeypatch.setitem(REPRODUCTIONS, "damping-scaling", (compiles, "test"))
    assert main(["reproduce", "damping-scaling", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["damping-scaling: test", "compiling (XLA: up to a minute the first time) …",
                         "compiled"]


def test_ctrl_c_prints_one_line(monkeypatch, tmp_path, capsys):
    from diffimpact.reproduce import REPRODUCTIONS

    def interrupted(out, quick=False):
        raise KeyboardInterrupt

    monkeypatch.setitem(REPRODUCTIONS, "damping-scaling", (interrupted, "test"))
    assert main(["reproduce", "damping-scaling", "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"diffimpact reproduce damping-scaling: interrupted; files already written in {tmp_path} are complete"]


def test_cache_info_and_clear_report_the_folder(monkeypatch, tmp_path, capsys):
    folder = tmp_path / "cache"
    monkeypatch.setenv("DIFFIMPACT_CACHE_DIR", str(folder))
    assert main(["cache", "info"]) == 0
    assert capsys.readouterr().out.startswith(f"{folder} (not created yet): holds 0 files, 0.0 MB")
    (folder / "sub").mkdir(parents=True)
    (folder / "a").write_bytes(b"x" * 300_000)
    (folder / "sub" / "b").write_bytes(b"x" * 200_000)
    assert main(["cache", "info"]) == 0
    assert capsys.readouterr().out.startswith(f"{folder}: holds 2 files, 0.5 MB")
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out.startswith(f"{folder}: removed 2 files, 0.5 MB")
    assert folder.is_dir() and not any(folder.iterdir())


@pytest.mark.parametrize("arguments, variable, used", [([], "", True), (["--no-cache"], "", False), ([], "1", False)])
def test_a_study_uses_the_cache_unless_told_not_to(monkeypatch, tmp_path, arguments, variable, used):
    from diffimpact import cache
    from diffimpact.reproduce import REPRODUCTIONS

    enabled = []
    monkeypatch.setattr(cache, "enable", lambda: enabled.append(True))
    monkeypatch.setenv("DIFFIMPACT_NO_CACHE", variable)
    monkeypatch.setitem(REPRODUCTIONS, "damping-scaling", (lambda out, quick=False: None, "test"))
    assert main(["reproduce", "damping-scaling", "--out", str(tmp_path), *arguments]) == 0
    assert enabled == ([True] if used else [])


def test_a_program_without_host_callbacks_is_stored_and_read_back(tmp_path):
    """JAX stores a compiled program in the folder ``enable`` names and a new process reads it back."""
    code = ("import sys, time, jax, jax.numpy as jnp, diffimpact\n"
            "from diffimpact import cache\n"
            "diffimpact.configure()\n"
            "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.0)\n"
            "cache.enable(sys.argv[1])\n"
            "hits = []\n"
            "jax.monitoring.register_event_listener(lambda event, **_: hits.append(event))\n"
            "f = jax.jit(lambda x: jnp.cumsum(jnp.sin(x) ** 2))\n"
            "print(float(f(jnp.linspace(0.0, 1.0, 7))[-1]), hits.count('/jax/compilation_cache/cache_hits'))")
    folder = tmp_path / "cache"
    outputs = []
    for _ in range(2):
        result = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True,
                                timeout=120, env={**os.environ, "DIFFIMPACT_NO_CACHE": ""})
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout.split())
        assert any(path.is_file() for path in folder.rglob("*")), "nothing stored"
    assert outputs[0][0] == outputs[1][0]
    assert outputs[0][1] == "0" and int(outputs[1][1]) >= 1  # compiled, then read back


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


# The child: the command line (``main()`` reads sys.argv, as the ``diffimpact`` command does) with a reproduction
# whose program takes XLA several seconds to compile (a 2000-step scan unrolled: 0.2 s to lower, ~6 s to compile).
_SLOW_COMPILE = """
import signal
import sys

signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, even where SIGINT came in ignored (`cmd &`)

import jax
import jax.numpy as jnp

from diffimpact.cli import main
from diffimpact.reproduce import REPRODUCTIONS


def slow_compile(out, quick=False):
    def program(x):
        return jax.lax.scan(lambda c, _: (jnp.sin(c @ c) * 0.5 + jnp.cos(c), None), x, None, length=2000, unroll=2000)[0]
    lowered = jax.jit(program).lower(jnp.ones((4, 4)))
    print("compiling", flush=True)
    return lowered.compile()(jnp.ones((4, 4)))


REPRODUCTIONS["damping-scaling"] = (slow_compile, "test")
sys.argv = ["diffimpact", "reproduce", "damping-scaling", "--out", sys.argv[1]]
sys.exit(main())
"""


def test_ctrl_c_while_xla_compiles_exits_130_with_one_line(tmp_path):
    """SIGINT during an XLA compilation: one line and status 130, not a segmentation fault (139) at teardown."""
    root = Path(__file__).resolve().parents[1]
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_COMPILE, str(tmp_path)], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        assert child.stdout.readline() == "damping-scaling: test\n"
        assert child.stdout.readline() == "compiling\n"
        time.sleep(1.0)  # XLA is compiling (for ~6 s)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert err.strip().splitlines() == [
        f"diffimpact reproduce damping-scaling: interrupted; files already written in {tmp_path} are complete"]


# The child: a run whose garbage-collection callback swallows a Ctrl-C ("Exception ignored"), then runs 5 s more
# unless the interrupt is raised again. In a child process, so that no interrupt can reach pytest itself.
_DROPPED_INTERRUPT = """
import gc
import signal
import sys
import time

signal.signal(signal.SIGINT, signal.default_int_handler)

from diffimpact.cli import main
from diffimpact.reproduce import REPRODUCTIONS


def interrupted_in_a_callback(out, quick=False):
    def callback(phase, info):
        gc.callbacks.remove(callback)
        raise KeyboardInterrupt  # Python prints "Exception ignored" and goes on

    gc.callbacks.append(callback)
    gc.collect()
    deadline = time.perf_counter() + 5.0
    while time.perf_counter() < deadline:  # the run goes on: only an interrupt raised again stops it
        time.sleep(0.001)
    return "finished"


REPRODUCTIONS["damping-scaling"] = (interrupted_in_a_callback, "test")
sys.argv = ["diffimpact", "reproduce", "damping-scaling", "--out", sys.argv[1]]
sys.exit(main())
"""


def test_ctrl_c_dropped_by_a_callback_still_stops_the_run(tmp_path):
    """A KeyboardInterrupt that lands in a garbage-collection callback (as in JAX's) is raised again, not lost."""
    root = Path(__file__).resolve().parents[1]
    child = subprocess.run([sys.executable, "-c", _DROPPED_INTERRUPT, str(tmp_path)], cwd=root, capture_output=True,
                           text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(root)})
    assert child.returncode == 130, child.stderr
    assert child.stderr.strip().splitlines() == [
        f"diffimpact reproduce damping-scaling: interrupted; files already written in {tmp_path} are complete"]


_IMPORT_INTERRUPTED = """
import os
import signal
import sys
import time

import diffimpact.cli as cli

signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, even where SIGINT came in ignored (`cmd &`)
try:
    cli._import_jax()
except KeyboardInterrupt:
    print("KeyboardInterrupt after the import:", "jax" in sys.modules)
"""

_FAKE_JAX = """
import os
import signal
import time

os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C while the extensions initialise
time.sleep(0.05)
print("import finished")
"""


def test_ctrl_c_during_the_import_of_jax_is_held_until_it_is_over(tmp_path):
    """A Ctrl-C that arrives while JAX (NumPy, jaxlib) is imported does not interrupt the import: it is delivered
    once the import is over. A stand-in ``jax`` module sends itself the SIGINT halfway through its import."""
    (tmp_path / "jax.py").write_text(_FAKE_JAX)
    root = Path(__file__).resolve().parents[1]
    child = subprocess.run([sys.executable, "-c", _IMPORT_INTERRUPTED], cwd=root, capture_output=True, text=True,
                           timeout=60, env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}"})
    assert child.stdout.splitlines() == ["import finished", "KeyboardInterrupt after the import: True"], child.stderr


def test_version_is_the_installed_distributions(capsys):
    import importlib.metadata

    import diffimpact

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"diffimpact {importlib.metadata.version('diffimpact')}\n"
    assert diffimpact.__version__ == importlib.metadata.version("diffimpact")


def test_python_m_diffimpact_is_the_command_line():
    root = Path(__file__).resolve().parents[1]
    child = subprocess.run([sys.executable, "-m", "diffimpact", "--version"], cwd=root, capture_output=True,
                           text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(root)})
    assert (child.returncode, child.stdout.split()[0], child.stderr) == (0, "diffimpact", "")


@pytest.mark.parametrize("command", ["reproduce", "fit"])
def test_every_study_has_a_help_page_with_its_run_time_and_files(command, capsys):
    from diffimpact.reproduce import REPRODUCTIONS
    from fitting.studies import FITS

    registry = {"reproduce": REPRODUCTIONS, "fit": FITS}[command]
    with pytest.raises(SystemExit):
        main([command, "--help"])
    listing = " ".join(capsys.readouterr().out.split())
    for name, (run, description) in registry.items():
        assert f"{name} {' '.join(description.split()[:4])}" in listing
        with pytest.raises(SystemExit) as exit_:
            main([command, name, "--help"])
        page = capsys.readouterr().out
        assert exit_.value.code == 0
        usage = f"usage: diffimpact {command} {name} [-h] [--out OUT] [--quick] [--quiet]"
        assert " ".join(page.split()).startswith(usage)
        assert description in page and re.search(r"(?i)writes? .+\.(csv|json|png)", page), page
        assert re.search(r"quick: about [0-9.]+ (s|min)", page), page
        takes_data = "data" in inspect.signature(run).parameters
        assert ("--data CSV" in page) == ("--drop-bad-rows" in page) == takes_data
        if takes_data:
            assert inspect.getmodule(run).SCHEMA.describe() in page


def test_data_is_refused_at_parse_time_where_a_study_takes_none(tmp_path, capsys):
    from fitting.studies import FITS

    takers = [name for name, (run, _) in FITS.items() if "data" in inspect.signature(run).parameters]
    assert "sensitivity" not in takers and "cushion" in takers
    for option in (["--data", "x.csv"], ["--drop-bad-rows"]):
        with pytest.raises(SystemExit) as exit_:
            main(["fit", "sensitivity", *option, "--out", str(tmp_path / "out")])
        assert exit_.value.code == 2
        assert capsys.readouterr().err == (f"diffimpact fit sensitivity: {option[0]} does not apply to this fit; "
                                           f"the fits that take it: {', '.join(takers)}\n")
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "break", "--data", "x.csv"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "diffimpact: unrecognized arguments: --data x.csv\n"
    assert not (tmp_path / "out").exists()


def test_quiet_turns_the_progress_bars_off_and_keeps_the_summary(monkeypatch, tmp_path, capsys):
    from diffimpact.reproduce import REPRODUCTIONS

    def run(out, quick=False, progress=True):
        return f"progress={progress}"

    monkeypatch.setitem(REPRODUCTIONS, "damping-scaling", (run, "test"))
    for quiet, progress in (([], True), (["--quiet"], False)):
        assert main(["reproduce", "damping-scaling", *quiet, "--out", str(tmp_path)]) == 0
        assert capsys.readouterr().out.splitlines()[1] == f"progress={progress}"


def test_no_name_lists_the_studies(capsys):
    assert main(["fit"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("impact-stiffness  recover k and e")
