"""The benchmark scripts' options for ``simulate``'s ``friction_steps`` bounds (``step_control``'s ``FRICTION_STEP``,
``PASSAGE_STEP``), its friction guard (``FRICTION_GUARD``), its spin bound (``SPIN_STEP``) and its error norm
(``simulate``'s ``ERROR_NORM``); and
the table benchmarks' options for the families that ``simulate``'s ``contact_steps`` and ``friction_steps``
bound."""

import sys

import optimistix as optx

from diffimpact.multibody import step_control
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

#: ``--error-norm``'s choices: diffrax's default and Matlab ``ode45``'s
NORMS = {"rms": optx.rms_norm, "max": optx.max_norm}
#: ``--contact-steps``' and ``--friction-steps``' names of the table's contact families (``billiard.TABLE_FORCES``)
FAMILIES = {"cloth": "cloth", "balls": "ball–ball", "cushions": "ball–cushion"}


def add_options(parser):
    """``--friction-step C``, ``--passage-step C``, ``--spin-step ANGLE`` (``inf``: that bound left out), ``--guard
    FACTOR`` (``inf``: a derivative through steps unstable on the friction is not stopped) and ``--error-norm
    rms|max``."""
    parser.add_argument("--friction-step", type=float, default=None, metavar="C",
                        help="step_control's FRICTION_STEP for this process (inf: no stability bound)")
    parser.add_argument("--passage-step", type=float, default=None, metavar="C",
                        help="step_control's PASSAGE_STEP for this process (inf: no bound on the slips' passages)")
    parser.add_argument("--spin-step", type=float, default=None, metavar="ANGLE",
                        help="step_control's SPIN_STEP for this process (rad; inf: no bound on the spatial bodies' turns)")
    parser.add_argument("--guard", type=float, default=None, metavar="FACTOR",
                        help="step_control's FRICTION_GUARD for this process (inf: derivatives not stopped at steps "
                             "unstable on the friction)")
    parser.add_argument("--error-norm", choices=tuple(NORMS), default=None,
                        help="simulate's ERROR_NORM for this process: diffrax's root mean square (rms, the default) "
                             "or the largest scaled error (max, as Matlab's ode45)")


def apply(args):
    """Set the options' constants in ``diffimpact.multibody.step_control`` and ``ERROR_NORM`` in
    ``diffimpact.multibody.simulate`` (read when ``simulate`` is traced: call before any run); returns
    ``step_control``."""
    if args.friction_step is not None:
        step_control.FRICTION_STEP = args.friction_step
    if args.passage_step is not None:
        step_control.PASSAGE_STEP = args.passage_step
    if args.spin_step is not None:
        step_control.SPIN_STEP = args.spin_step
    if args.guard is not None:
        step_control.FRICTION_GUARD = args.guard
    if args.error_norm is not None:
        sys.modules["diffimpact.multibody.simulate"].ERROR_NORM = NORMS[args.error_norm]
    return step_control


def add_contact_steps(parser):
    """``--contact-steps [FAMILY ...]``: the table's families whose closed contacts bound the steps."""
    parser.add_argument("--contact-steps", nargs="*", choices=("all", *FAMILIES), default=None, metavar="FAMILY",
                        help="simulate's contact_steps on the table's families named (all, or of "
                             f"{', '.join(FAMILIES)}; none named: on none) instead of table.settings' (the cushions)")


def add_friction_steps(parser):
    """``--friction-steps [FAMILY ...]``: the table's families whose friction bounds the steps."""
    parser.add_argument("--friction-steps", nargs="*", choices=("all", *FAMILIES), default=None, metavar="FAMILY",
                        help="simulate's friction_steps on the table's families named (all, or of "
                             f"{', '.join(FAMILIES)}; none named: on none)")


def families(names, model):
    """simulate's ``contact_steps`` or ``friction_steps`` for the table ``model`` from the names of ``FAMILIES``
    (or ``all``) given to ``--contact-steps`` or ``--friction-steps``."""
    if "all" in names:
        return True
    forces = billiard.table_forces(len(model.bodies))
    return tuple(forces.index(FAMILIES[name]) for name in names)


def settings(args, model):
    """``table.settings(model)`` with ``--contact-steps``' families and ``--friction-steps``' (where the parser
    has it) families, if given."""
    settings = table.settings(model)
    if args.contact_steps is not None:
        settings["contact_steps"] = families(args.contact_steps, model)
    if getattr(args, "friction_steps", None) is not None:
        settings["friction_steps"] = families(args.friction_steps, model)
    return settings


def contact_steps_label(args):
    """What ``--contact-steps`` (and ``--friction-steps``, where the parser has it) asked for, in words."""
    label = ("contact_steps on the cushions (the table's)" if args.contact_steps is None
             else "contact_steps on " + (", ".join(args.contact_steps) or "no family"))
    if getattr(args, "friction_steps", None) is not None:
        label += "; friction_steps on " + (", ".join(args.friction_steps) or "no family")
    return label
