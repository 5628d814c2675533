"""The benchmark scripts' options for ``simulate``'s ``friction_steps`` bounds (``FRICTION_STEP``, ``PASSAGE_STEP``)."""

import sys


def add_options(parser):
    """``--friction-step C`` and ``--passage-step C`` (``inf``: that bound left out)."""
    parser.add_argument("--friction-step", type=float, default=None, metavar="C",
                        help="simulate's FRICTION_STEP for this process (inf: no stability bound)")
    parser.add_argument("--passage-step", type=float, default=None, metavar="C",
                        help="simulate's PASSAGE_STEP for this process (inf: no bound on the slips' passages)")


def apply(args):
    """Set the options' constants in ``diffimpact.multibody.simulate`` (read when ``simulate`` is traced: call
    before any run); returns that module."""
    module = sys.modules["diffimpact.multibody.simulate"]
    if args.friction_step is not None:
        module.FRICTION_STEP = args.friction_step
    if args.passage_step is not None:
        module.PASSAGE_STEP = args.passage_step
    return module
