"""The benchmark scripts' options for ``AdaptiveSteps``' bounds (``friction_step``, ``passage_step``,
``spin_step``) and error norm (``norm``), and for ``ForwardMode``'s friction guard (``friction_guard``); and
the table benchmarks' options for the families that ``AdaptiveSteps``' ``contact_steps`` and ``friction_steps``
bound."""

import dataclasses

import optimistix as optx

from diffimpact.multibody import AdaptiveSteps, ForwardMode
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
                        help="AdaptiveSteps' friction_step (inf: no stability bound)")
    parser.add_argument("--passage-step", type=float, default=None, metavar="C",
                        help="AdaptiveSteps' passage_step (inf: no bound on the slips' passages)")
    parser.add_argument("--spin-step", type=float, default=None, metavar="ANGLE",
                        help="AdaptiveSteps' spin_step (rad; inf: no bound on the spatial bodies' turns)")
    parser.add_argument("--guard", type=float, default=None, metavar="FACTOR",
                        help="ForwardMode's friction_guard (inf: derivatives not stopped at steps unstable on the "
                             "friction)")
    parser.add_argument("--error-norm", choices=tuple(NORMS), default=None,
                        help="AdaptiveSteps' norm: diffrax's root mean square (rms, the default) or the largest "
                             "scaled error (max, as Matlab's ode45)")


def step_fields(args):
    """``AdaptiveSteps``' fields that ``add_options``' options give (none where the parser has not them)."""
    fields = {name: getattr(args, name, None) for name in ("friction_step", "passage_step", "spin_step")}
    fields = {name: value for name, value in fields.items() if value is not None}
    if getattr(args, "error_norm", None) is not None:
        fields["norm"] = NORMS[args.error_norm]
    return fields


def steps(args, **fields):
    """``AdaptiveSteps`` with ``add_options``' bounds and ``fields``."""
    return AdaptiveSteps(**{**step_fields(args), **fields})


def forward_mode(args, **fields):
    """``ForwardMode`` with ``--guard``'s ``friction_guard`` (where given) and ``fields``."""
    if getattr(args, "guard", None) is not None:
        fields = {"friction_guard": args.guard, **fields}
    return ForwardMode(**fields)


def add_contact_steps(parser):
    """``--contact-steps [FAMILY ...]``: the table's families whose closed contacts bound the steps."""
    parser.add_argument("--contact-steps", nargs="*", choices=("all", *FAMILIES), default=None, metavar="FAMILY",
                        help="AdaptiveSteps' contact_steps on the table's families named (all, or of "
                             f"{', '.join(FAMILIES)}; none named: on none) instead of table.settings' (the cushions)")


def add_friction_steps(parser):
    """``--friction-steps [FAMILY ...]``: the table's families whose friction bounds the steps."""
    parser.add_argument("--friction-steps", nargs="*", choices=("all", *FAMILIES), default=None, metavar="FAMILY",
                        help="AdaptiveSteps' friction_steps on the table's families named (all, or of "
                             f"{', '.join(FAMILIES)}; none named: on none)")


def families(names, model):
    """``AdaptiveSteps``' ``contact_steps`` or ``friction_steps`` for the table ``model`` from the names of ``FAMILIES``
    (or ``all``) given to ``--contact-steps`` or ``--friction-steps``."""
    if "all" in names:
        return True
    forces = billiard.table_forces(len(model.bodies))
    return tuple(forces.index(FAMILIES[name]) for name in names)


def settings(args, model, **keywords):
    """``table.settings(model, **keywords)`` with ``add_options``' bounds, ``--contact-steps``' families and
    ``--friction-steps``' families, where the parser has them and they are given."""
    settings = table.settings(model, **keywords)
    fields = step_fields(args)
    if getattr(args, "contact_steps", None) is not None:
        fields["contact_steps"] = families(args.contact_steps, model)
    if getattr(args, "friction_steps", None) is not None:
        fields["friction_steps"] = families(args.friction_steps, model)
    settings["steps"] = dataclasses.replace(settings["steps"], **fields)
    return settings


def contact_steps_label(args):
    """What ``--contact-steps`` (and ``--friction-steps``, where the parser has it) asked for, in words."""
    label = ("contact_steps on the cushions (the table's)" if args.contact_steps is None
             else "contact_steps on " + (", ".join(args.contact_steps) or "no family"))
    if getattr(args, "friction_steps", None) is not None:
        label += "; friction_steps on " + (", ".join(args.friction_steps) or "no family")
    return label
