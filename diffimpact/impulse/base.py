"""The interface of every impact model of ``diffimpact.impulse``: ``ImpulseModel`` and its result ``Impact``.

An impact model sees the contact problem in the contact frame, **normal first**
(then one tangent in the plane, two in space): the Delassus operator
W = J M⁻¹ Jᵀ (SPD), the pre-impact contact velocity u⁻ (u⁻_n < 0 approaches)
and its own parameters, which are its fields. It returns an ``Impact``: the
impulse λ and the post-impact contact velocity u⁺ = u⁻ + W λ (models with an
internal record return a subclass carrying it). The generalised velocity of
the system then jumps by M⁻¹ Jᵀ λ.
"""

import abc

import equinox as eqx
import jax

#: The words for a contact dimension in messages.
KINDS = {2: "planar", 3: "spatial"}


class Impact(eqx.Module):
    """The result of an impact model: ``impulse`` λ and ``velocity`` u⁺ = u⁻ + W λ (normal first)."""

    impulse: jax.Array
    velocity: jax.Array


class ImpulseModel(eqx.Module):
    """Abstract base of the impact models: ``model(delassus, velocity, dimension=None) -> Impact``.

    The protocol, which the models of ``diffimpact.impulse`` follow and a model
    written by a user follows too:

    * **Parameters are fields**, checked when the model is constructed (with
      ``diffimpact._validation``: a ``ValueError`` naming the parameter).
      Array fields (restitution, friction, ...) are differentiable leaves,
      each a scalar or one value per contact, shape (m,): ``jax.grad`` with
      respect to one works through ``equinox.filter_grad`` or a model rebuilt
      in the differentiated function, and ``equinox.tree_at`` edits one.
      Settings that fix shapes or loop lengths (PLUS's ``max_intervals``, the
      Gauss–Seidel ``sweeps``) are static fields (``equinox.field(static=True)``).
    * **Capabilities are class attributes**: ``dimensions``, the contact
      dimensions the model resolves ((2,) planar, (3,) spatial, (2, 3)
      either), and ``several``, whether it resolves several contacts in one
      call (False: one contact).
    * **The call** ``model(delassus, velocity, dimension=None)``: W (k, k)
      and u⁻ (k,), k = m · ``dimension`` for m contacts, each contact's block
      normal first; ``dimension`` 2 or 3, or ``None`` for the model's only
      dimension, or (a model of either) one contact of u⁻'s length. Returns an
      ``Impact`` of λ (k,) and u⁺ = u⁻ + W λ. A contact that does not approach
      gets no impulse unless the others' impulses drive it into approach.

    ``multibody.RigidImpact`` reads the attributes to refuse a family of
    contacts the model cannot resolve, and calls the model once per impact
    with the family's stacked problem, its array fields stacked along the
    contacts (m,) (a family of one: that contact's own values).
    """

    dimensions: eqx.AbstractClassVar[tuple]
    several: eqx.AbstractClassVar[bool]

    @abc.abstractmethod
    def __call__(self, delassus, velocity, dimension=None):
        """The ``Impact`` (λ, u⁺) of the problem (W, u⁻) of contacts of ``dimension`` (class docstring)."""

    def _own_dimension(self, dimension):
        """The contact dimension of a model of one: ``dimension`` if it is that one or ``None``."""
        (own,) = self.dimensions
        if dimension not in (None, own):
            raise ValueError(f"{type(self).__name__} resolves {KINDS[own]} contacts (dimension {own}); got "
                             f"dimension {dimension}")
        return own


def kinetic_energy_change(delassus, velocity, impulse):
    """ΔT = λᵀ u⁻ + ½ λᵀ W λ: the change of the system's kinetic energy by the impulse λ."""
    return impulse @ velocity + 0.5 * impulse @ delassus @ impulse
