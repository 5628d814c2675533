"""The ``diffimpact`` command line.

Ctrl-C (SIGINT) stops a run with one line on stderr and exit status 130; the
files already written are complete (each is written beside its name and
renamed). An interrupt often lands while XLA compiles: jaxlib then raises
``KeyboardInterrupt`` in the waiting Python thread while its compile thread
runs on, and an interpreter that tears itself down under that thread dies of
a segmentation fault (status 139, after the one line). The command line
therefore leaves without the teardown (``os._exit``) once the interrupt has
unwound the run and the line is flushed; ``main(argv)`` called from Python
returns 130 instead. An interrupt can also land in JAX's garbage-collection
callback, where Python drops it ("Exception ignored") and the run would go on
to the end; during a run it is raised again (``_interrupt_again``). While
NumPy's and jaxlib's extension modules initialise, an interrupt is held back
until the import of JAX is over (``_import_jax``). Only in the first ~40 ms,
while Python itself starts and loads this module, does a Ctrl-C give Python's
own traceback.

A command holds a lock file in its ``--out`` directory while it runs
(``diffimpact._files.locked_directory``): a second command writing into the
same directory at the same time is refused. A compilation that runs longer
than ``COMPILE_NOTE_AFTER_S`` prints one line saying so: the first ones of a
command can take a minute, in which nothing else is printed.
"""

import _thread
import argparse
import contextlib
import inspect
import os
import signal
import sys
import threading
import time
from pathlib import Path


def _options(args, run):
    """The keyword arguments of ``run`` from the command line: ``--data`` and ``--drop-bad-rows`` where the study
    takes them, ``progress=False`` under ``--quiet``; an error message (str) for a ``--data`` that is no file."""
    options = {}
    if args.quiet and "progress" in inspect.signature(run).parameters:
        options["progress"] = False
    if getattr(args, "data", None) is not None:
        from fitting.data import file_problem

        problem = file_problem(args.data)
        if problem is not None:
            return f"--data {args.data}: {problem}"
        options["data"] = args.data
    if getattr(args, "drop_bad_rows", False):
        options["drop_bad_rows"] = True
    return options


def _check_out(out):
    """An error message if the ``--out`` directory could not be written, else None; checked before any work.

    Nothing is created here: a run that stops on bad input leaves no directory behind.
    """
    if not out:
        return "--out: must name a directory, got an empty string"
    path = Path(out)
    if path.exists() and not path.is_dir():
        return f"--out: {out} exists and is not a directory"
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"--out: cannot create the directory {out} ({existing} is not a directory)"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"--out: cannot write in {existing}"
    return None


def _registry(command):
    """The studies of ``command`` ("reproduce" or "fit"): name -> (run function, one-line description)."""
    if command == "reproduce":
        from diffimpact.reproduce import REPRODUCTIONS

        return REPRODUCTIONS
    # The CLI is the application layer: it alone reaches into the ``fitting``
    # package, lazily; the diffimpact library never imports it.
    from fitting.studies import FITS

    return FITS


def _run(args, registry):
    if args.list or args.name is None:
        width = max(map(len, registry))
        for name, (_, description) in registry.items():
            print(f"{name:<{width}}  {description}")
        return 0
    run, description = registry[args.name]
    options = _options(args, run)
    if isinstance(options, str):
        print(options, file=sys.stderr)
        return 2
    data = f"; data: {Path(options['data']).resolve()}" if options.get("data") is not None else ""
    return _execute(f"diffimpact {args.command} {args.name}", args.out,
                    lambda: run(Path(args.out), quick=args.quick, **options),
                    f"{args.name}: {description}{' (quick)' if args.quick else ''}{data}")


def _shot(args):
    from diffimpact.reproduce import table
    from diffimpact.scenes import billiard

    balls = table.SHOT_BALLS if args.ball is None else args.ball
    pocket = None if args.aim is not None or args.full_ball else (args.pocket or table.SHOT_POCKET)

    def given(value, default):
        return default if value is None else value

    return _execute("diffimpact shot", args.out, lambda: table.shot(
        Path(args.out), args.cue, balls, given(args.speed, table.SHOT_SPEED), args.aim, pocket, args.topspin,
        args.sidespin, given(args.duration, table.DURATION), args.nose,
        p=billiard.Parameters(cloth_damping_ratio=args.cloth_damping_ratio), rtol=given(args.rtol, table.SHOT_RTOL),
        sensitivity=True if args.sensitivity == [] else args.sensitivity))


#: Seconds a compilation runs before the command says that it is compiling.
COMPILE_NOTE_AFTER_S = 2.0
#: The event JAX records (``jax.monitoring``) at the start (a scalar, the time) and end (a duration) of a compilation.
_BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


@contextlib.contextmanager
def _compile_note():
    """While the block runs, the first compilation to last ``COMPILE_NOTE_AFTER_S`` prints one line saying so.

    XLA compiles in silence, for up to a minute the first time (the break, a shot), and the command would seem
    to hang. The line comes from a timer started when a compilation starts and cancelled when it ends.
    """
    from jax import monitoring
    from tqdm.auto import tqdm

    timers = {}
    said = threading.Event()

    def note():
        if not said.is_set():
            said.set()
            tqdm.write("compiling (XLA: up to a minute the first time) …")
            sys.stdout.flush()

    def started(event, value, **details):
        del value, details
        if event == _BACKEND_COMPILE_EVENT and not said.is_set():
            timer = threading.Timer(COMPILE_NOTE_AFTER_S, note)
            timer.daemon = True
            timers[threading.get_ident()] = timer
            timer.start()

    def ended(event, duration, **details):
        del duration, details
        if event == _BACKEND_COMPILE_EVENT and threading.get_ident() in timers:
            timers.pop(threading.get_ident()).cancel()

    monitoring.register_scalar_listener(started)
    monitoring.register_event_duration_secs_listener(ended)
    try:
        yield
    finally:
        monitoring.unregister_scalar_listener(started)
        monitoring.unregister_event_duration_listener(ended)
        for timer in timers.values():
            timer.cancel()


def _execute(command, out, call, header=None):
    """Check ``out``, print ``header``, run ``call`` holding the lock of ``out`` and print its summary and time; bad
    input is one line on stderr (status 2)."""
    from diffimpact._files import locked_directory

    problem = _check_out(out)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    if header is not None:
        print(header, flush=True)
    start = time.perf_counter()
    try:
        with locked_directory(out), _compile_note():
            summary = call()
    except ValueError as error:  # bad input (the data loader's DataError included) is reported, not traced back
        print(f"{command}: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:  # a check inside compiled code (equinox.error_if): its message, not JAX's dump
        message = _checked_message(error)
        if message is None:
            raise
        print(f"{command}: {message}", file=sys.stderr)
        return 2
    print(summary)
    print(f"done in {time.perf_counter() - start:.1f} s; files in {out}")
    return 0


def _interrupt_again(unraisable, report):
    """``sys.unraisablehook`` while a command runs: a Ctrl-C that Python had to drop is raised again in the main thread.

    A ``KeyboardInterrupt`` that lands in a callback (JAX's garbage-collection callback) cannot propagate: Python
    prints "Exception ignored" and goes on, and the run would finish as if not interrupted. Anything else goes to
    ``report``, the hook in place before the command.
    """
    if issubclass(unraisable.exc_type, KeyboardInterrupt):
        # a moment later, from another thread: raised in this hook, it would be dropped again
        again = threading.Timer(0.01, _thread.interrupt_main)
        again.daemon = True
        again.start()
    else:
        report(unraisable)


def _checked_message(error):
    """The message of an ``equinox.error_if`` check in the text of its ``EquinoxRuntimeError``; ``None`` if none."""
    for line in str(error).splitlines():
        if line.startswith("equinox.EquinoxRuntimeError: "):
            return line.removeprefix("equinox.EquinoxRuntimeError: ")
    return None


def _import_jax():
    """Import JAX (and with it NumPy and jaxlib) and ``diffimpact.configure()`` it, with SIGINT held back, then let
    a held Ctrl-C through.

    A ``KeyboardInterrupt`` raised while NumPy's or jaxlib's extension modules initialise is not always
    survivable: NumPy prints a traceback of its own, and the process may abort (134) or crash (139). Held back
    (``pthread_sigmask``), the signal stays pending through the import (about 1 s) and arrives as soon as it is
    released, where the run's own handler makes it the one line.
    """
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        import diffimpact

        diffimpact.configure()  # imports JAX; float64 and the CPU cap before any computation
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


#: Exit status of an interrupted run (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130


#: The commands that run a study of a registry (``_registry``), what they do, and what ``--quick`` does in each.
_STUDY_COMMANDS = {
    "reproduce": ("run a published experiment; writes DIR/NAME.csv and DIR/NAME.png", "coarse grids, for a fast look"),
    "fit": ("run a parameter fit; writes JSON, CSV and PNG into --out", "fewer data points and steps, for a fast look"),
}


class _Parser(argparse.ArgumentParser):
    """The command line's parser: bad input is one line on stderr naming the command, and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


class _NotTaken(argparse.Action):
    """``--data`` or ``--drop-bad-rows`` given to a fit that reads no measurements: an error naming the fits that do."""

    def __init__(self, option_strings, dest, takers, **kwargs):
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.takers = takers

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} does not apply to this fit; the fits that take it: {', '.join(self.takers)}")


def _takes_data(run):
    return "data" in inspect.signature(run).parameters


def _page(run, description):
    """The help page of a study: its description, the docstring of its run function (what it does, how long it
    takes, the files it writes) and, for a fit that reads measurements, the CSV columns of its module's ``SCHEMA``."""
    parts = [f"{description}.", inspect.getdoc(run)]
    if _takes_data(run):
        schema = getattr(inspect.getmodule(run), "SCHEMA", None)
        parts.append(schema and f"--data: {schema.describe()}")
    return "\n\n".join(part for part in parts if part).replace("``", "")


def _add_studies(parser, command, registry):
    """One subcommand per study of ``registry``, each with its own help page."""
    parser.add_argument("--list", action="store_true", help="list the studies (also shown with no NAME)")
    studies = parser.add_subparsers(dest="name", metavar="NAME", title="studies (diffimpact "
                                    f"{command} NAME --help: what it does, how long it takes, the files it writes)")
    takers = [name for name, (run, _) in registry.items() if _takes_data(run)]
    for name, (run, description) in registry.items():
        study = studies.add_parser(name, help=description.replace("%", "%%"), description=_page(run, description),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
        study.add_argument("--out", default="out", help="output directory (default: out)")
        study.add_argument("--quick", action="store_true", help=_STUDY_COMMANDS[command][1])
        study.add_argument("--quiet", action="store_true", help="no progress bars (the summary lines are printed)")
        _add_no_cache(study)
        if name in takers:
            study.add_argument("--data", metavar="CSV", help="your own measurements (the columns above)")
            study.add_argument("--drop-bad-rows", action="store_true",
                               help="drop invalid rows of --data (reported) instead of failing")
        elif command == "fit":
            study.add_argument("--data", action=_NotTaken, takers=takers)
            study.add_argument("--drop-bad-rows", action=_NotTaken, takers=takers, nargs=0)


def _add_no_cache(parser):
    parser.add_argument("--no-cache", action="store_true",
                        help="compile every program anew instead of reading and storing compiled programs in the "
                             "cache folder (diffimpact cache info; DIFFIMPACT_NO_CACHE=1 does the same)")


def _cache(args):
    """``diffimpact cache info`` or ``clear``: the folder of compiled programs, its files and their size."""
    from diffimpact import cache

    path, files, size = (cache.info if args.action == "info" else cache.clear)()
    state = "" if path.is_dir() or args.action == "clear" else " (not created yet)"
    verb = "removed" if args.action == "clear" else "holds"
    print(f"{path}{state}: {verb} {files} files, {size / 1e6:.1f} MB")
    if args.action == "info":
        off = f"; {cache.OFF_VARIABLE} is set, so the command line does not use it" if cache.turned_off() else ""
        print(f"(the folder: ${cache.FOLDER_VARIABLE}, else $XDG_CACHE_HOME/diffimpact/jax or "
              f"~/.cache/diffimpact/jax{off})")
    return 0


def _parser(study_command=None, registry=None):
    """The command line's parser; the studies of ``registry`` as subcommands of ``study_command``."""
    import diffimpact

    parser = _Parser(prog="diffimpact", description="Differentiable contact and impact simulation.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {diffimpact.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for command, (summary, _) in _STUDY_COMMANDS.items():
        studies = commands.add_parser(command, help=summary, description=summary)
        if command == study_command:
            _add_studies(studies, command, registry)
    shot = commands.add_parser(
        "shot", help="play a shot of the cue ball on the full table; writes shot.csv, shot-events.csv and shot.png",
        description="A shot on the full table of Gismeros Moreno et al. 2022 (WPA 9-ft, six cushions, six pockets): "
                    "the cue ball struck at --speed along --aim, or at the ghost-ball point that sends the first "
                    "object ball into --pocket. With no --ball: the yellow ball at (0.9, 0.3) m into the foot-left "
                    "pocket. Coordinates: the origin in the middle of the table, x from the head to the foot "
                    "(|x| <= 1.27 m), y to the left seen from the head (|y| <= 0.635 m). No --quick: the shot is "
                    "one run of the table, about a minute the first time (most of it compiling); --duration "
                    "shortens it.")
    shot.add_argument("--cue", nargs=2, type=float, metavar=("X", "Y"), help="the cue ball's centre (m; default: the head spot, -0.635 0)")
    shot.add_argument("--ball", nargs=2, type=float, action="append", metavar=("X", "Y"),
                      help="an object ball at rest (m); repeat for more (yellow, blue, red, ... in that order)")
    shot.add_argument("--speed", type=float, help="the cue ball's speed off the cue (m/s; default 2)")
    aim = shot.add_mutually_exclusive_group()
    aim.add_argument("--aim", type=float, help="the cue ball's direction (degrees from +x towards +y)")
    aim.add_argument("--pocket", help="aim at the ghost-ball point for the first object ball into this pocket: "
                                      "foot-left (default), left-side, head-left, head-right, right-side, foot-right")
    aim.add_argument("--full-ball", action="store_true", help="aim at the first object ball's centre")
    shot.add_argument("--topspin", type=float, default=0.0,
                      help="spin about the horizontal axis across the aim, in V/R (1 rolls, 0 slides: default; < 0 draw)")
    shot.add_argument("--sidespin", type=float, default=0.0,
                      help="spin about the vertical, in V/R (> 0 counter-clockwise seen from above; default 0)")
    shot.add_argument("--duration", type=float, help="simulated time (s; default 4)")
    shot.add_argument("--rtol", type=float,
                      help="relative tolerance of the integration (atol = 1e-3 rtol; default 1e-5; the break's is 1e-3)")
    shot.add_argument("--nose", action="store_true",
                      help="cushions touching at the nose height 7R/5 (Mathavan et al.) instead of the paper's centre "
                           "height; on the paper's undamped cloth the nose's push into it comes back as a jump: pair "
                           "it with --cloth-damping-ratio")
    shot.add_argument("--cloth-damping-ratio", type=float, default=0.0, metavar="ZETA",
                      help="damp the cloth (Hunt–Crossley, ζ of a ball resting on it; 1: critical) so that a ball "
                           "landing on it or pressed into it by a --nose cushion does not get the energy back as a "
                           "jump; default 0, the paper's undamped Hertz cloth, on which a ball keeps hopping")
    shot.add_argument("--sensitivity", nargs="*", metavar="NAME",
                      help="also d(every ball's final x, y)/d(each NAME): of the strike (speed, aim, topspin, "
                           "sidespin: the default with no NAME) or of the table's materials and laws (e.g. "
                           "ball_restitution, cloth_friction, cushion_friction, ball_modulus; a wrong NAME lists "
                           "them), in forward mode with friction_steps and contact_steps (shot-sensitivity.csv)")
    shot.add_argument("--out", default="out", help="output directory (default: out)")
    _add_no_cache(shot)
    cache = commands.add_parser(
        "cache", help="show or empty the folder of compiled programs that commands read back instead of compiling",
        description="The command line keeps the programs JAX compiles in a folder (JAX's persistent compilation "
                    "cache) and reads them back in later runs instead of compiling them again: info shows the "
                    "folder, its files and their size; clear empties it. The folder is $DIFFIMPACT_CACHE_DIR, "
                    "else $XDG_CACHE_HOME/diffimpact/jax or ~/.cache/diffimpact/jax.")
    cache.add_argument("action", choices=("info", "clear"))
    return parser


def main(argv=None):
    """Run the command line ``argv`` (``sys.argv[1:]`` when ``None``) and return its exit status.

    As the ``diffimpact`` command (``argv`` ``None``) an interrupted run ends the process at once with
    status 130, skipping the interpreter's teardown (see the module docstring). ``--help`` and ``--version`` exit
    (``SystemExit``) with status 0, and bad arguments with status 2.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    # the command and the study it names are its first two words; only a study's registry imports JAX
    command, name = ([word for word in arguments if not word.startswith("-")][:2] + [None, None])[:2]
    label = f"diffimpact {command}{f' {name}' if command in _STUDY_COMMANDS and name else ''}"
    args = None
    previous_hook, sys.unraisablehook = sys.unraisablehook, lambda unraisable: _interrupt_again(unraisable, previous_hook)
    try:  # from the first import of JAX on (``_import_jax``)
        registry = None
        if command in _STUDY_COMMANDS:
            _import_jax()
            registry = _registry(command)
        if registry is not None and name is not None and name not in registry:
            print(f"unknown {command} name {name!r}; choose from: {', '.join(registry)}", file=sys.stderr)
            status = 2
        else:
            args = _parser(command, registry).parse_args(arguments)
            if args.command == "cache":
                status = _cache(args)
            else:
                _import_jax()
                from diffimpact import cache

                if not (getattr(args, "no_cache", False) or cache.turned_off()):
                    cache.enable()
                status = _shot(args) if args.command == "shot" else _run(args, registry)
    except KeyboardInterrupt:
        out = getattr(args, "out", None)
        written = "" if out is None else f"; files already written in {out} are complete"
        print(f"{label}: interrupted{written}", file=sys.stderr)
        status = INTERRUPTED
    finally:
        sys.unraisablehook = previous_hook
    if status == INTERRUPTED and argv is None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)  # no teardown under XLA threads still compiling: it would crash (status 139)
    return status


if __name__ == "__main__":
    sys.exit(main())
