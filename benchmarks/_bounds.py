"""The benchmark scripts' options for ``simulate``'s ``friction_steps`` bounds (``FRICTION_STEP``, ``PASSAGE_STEP``),
its friction guard (``FRICTION_GUARD``), its spin bound (``SPIN_STEP``) and its error norm (``ERROR_NORM``)."""

import sys

import optimistix as optx

#: ``--error-norm``'s choices: diffrax's default and Matlab ``ode45``'s
NORMS = {"rms": optx.rms_norm, "max": optx.max_norm}


def add_options(parser):
    """``--friction-step C``, ``--passage-step C``, ``--spin-step ANGLE`` (``inf``: that bound left out), ``--guard
    FACTOR`` (``inf``: a derivative through steps unstable on the friction is not stopped) and ``--error-norm
    rms|max``."""
    parser.add_argument("--friction-step", type=float, default=None, metavar="C",
                        help="simulate's FRICTION_STEP for this process (inf: no stability bound)")
    parser.add_argument("--passage-step", type=float, default=None, metavar="C",
                        help="simulate's PASSAGE_STEP for this process (inf: no bound on the slips' passages)")
    parser.add_argument("--spin-step", type=float, default=None, metavar="ANGLE",
                        help="simulate's SPIN_STEP for this process (rad; inf: no bound on the spatial bodies' turns)")
    parser.add_argument("--guard", type=float, default=None, metavar="FACTOR",
                        help="simulate's FRICTION_GUARD for this process (inf: derivatives not stopped at steps "
                             "unstable on the friction)")
    parser.add_argument("--error-norm", choices=tuple(NORMS), default=None,
                        help="simulate's ERROR_NORM for this process: diffrax's root mean square (rms, the default) "
                             "or the largest scaled error (max, as Matlab's ode45)")


def apply(args):
    """Set the options' constants in ``diffimpact.multibody.simulate`` (read when ``simulate`` is traced: call
    before any run); returns that module."""
    module = sys.modules["diffimpact.multibody.simulate"]
    if args.friction_step is not None:
        module.FRICTION_STEP = args.friction_step
    if args.passage_step is not None:
        module.PASSAGE_STEP = args.passage_step
    if args.spin_step is not None:
        module.SPIN_STEP = args.spin_step
    if args.guard is not None:
        module.FRICTION_GUARD = args.guard
    if args.error_norm is not None:
        module.ERROR_NORM = NORMS[args.error_norm]
    return module
