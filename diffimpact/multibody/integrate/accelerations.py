"""A segment's accelerations: only the closed contacts push (``ContactEvents``' ``max_closed``), summed at the
least size that holds them, and the split of an IMEX solver's terms.

Inside ``simulate`` a contact exerts its force only while closed, and the closed set changes only at events,
so with ``max_closed`` each segment gathers the closed members of every larger family (``closed_members``)
and its accelerations sum only their forces (docs/design/event-engine.md, "Only the closed contacts push");
given increasing sizes, the least size that holds them (``accelerations``: "Evaluations that cost what is
closed").
"""

import dataclasses

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact.multibody.integrate.events import contact_families
from diffimpact.multibody.integrate.solve import acceleration
from diffimpact.multibody.integrate.step_control import with_friction


def gathered(model, families, sizes):
    """The families whose closed members ``closed_members`` gathers (static): the non-impulsive, located ones
    with more members than the largest of ``sizes`` (``ContactEvents.sizes``, ``None`` for none)."""
    if sizes is None:
        return ()
    return tuple(k for k in families if not model.forces[k].impulsive and model.forces[k].located
                 and model.forces[k].count > sizes[-1])


def closed_members(model, families, sizes):
    """The model whose contact families hold only their closed members, which of ``sizes`` holds them, and
    whether a family had more than allowed.

    Inside ``simulate`` only a closed contact exerts a force (``engaged``), and
    the closed set changes only at events, so a segment's accelerations need
    no other members. Each family of ``gathered`` keeps ``sizes[-1]`` of
    them (``ContactEvents``' ``max_closed``): its closed ones, in the family's
    order, then copies of member 0 with ``engaged`` 0 (no force). The second
    result is the index of the least of ``sizes`` that holds every such
    family's closed members (``accelerations`` sums only that many); the
    third is True where a family had more closed members than ``sizes[-1]``.
    ``sizes`` ``None``: the model as it is.
    """
    most, too_many = jnp.asarray(0), jnp.asarray(False)
    for k in gathered(model, families, sizes):
        contact = model.forces[k]
        closed = contact.engaged > 0.5
        count = jnp.sum(closed)
        index = jnp.nonzero(closed, size=sizes[-1], fill_value=0)[0]
        kept = jax.tree.map(lambda x: x[index], contact)
        kept = eqx.tree_at(lambda c: c.engaged, kept, jnp.where(jnp.arange(sizes[-1]) < count, kept.engaged, 0.0))
        model = eqx.tree_at(lambda m: m.forces[k], model, kept)
        most, too_many = jnp.maximum(most, count), too_many | (count > sizes[-1])
    return model, jnp.sum(most > jnp.asarray((sizes or (0,))[:-1], dtype=int)), too_many


def accelerations(formulation, model, size, gathered, sizes, q, v, t):
    """The formulation's accelerations of ``closed_members``' model, its ``gathered`` families cut to ``sizes[size]``.

    A ``lax.switch`` over the sizes, so that an evaluation costs what its
    segment's closed members cost (docs/design/event-engine.md, "Evaluations that cost
    what is closed").
    """
    if not gathered or len(sizes) < 2:
        return acceleration(formulation, model, q, v, t)

    def cut(count):
        def accelerations(q, v):
            first = eqx.tree_at(lambda m: [m.forces[k] for k in gathered], model,
                                [jax.tree.map(lambda x: x[:count], model.forces[k]) for k in gathered])
            return acceleration(formulation, first, q, v, t)
        return accelerations

    return jax.lax.switch(size, [cut(count) for count in sizes], q, v)


def frictionless(model):
    """``model`` with the friction laws of its contact families removed."""
    frictional = with_friction(contact_families(model), model)
    return eqx.tree_at(lambda m: [m.forces[k].friction for k in frictional], model, [None] * len(frictional))


def imex_terms(vector_field):
    """The terms of an IMEX solver from a segment's ``vector_field``: explicit, the motion without friction (the
    segment's model, ``SegmentArgs.closed_only``, without its friction laws); implicit, the friction's part of the
    accelerations, their difference (the formulations' accelerations are linear in the applied forces)."""

    def explicit(t, y, args):
        return vector_field(t, y, dataclasses.replace(args, closed_only=frictionless(args.closed_only)))

    def implicit(t, y, args):
        (q, full), (_, without) = vector_field(t, y, args), explicit(t, y, args)
        return jnp.zeros_like(q), full - without

    return dfx.MultiTerm(dfx.ODETerm(explicit), dfx.ODETerm(implicit))
