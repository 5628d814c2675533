"""What ``simulate`` returns: the saved states with their diagnostics (``Trajectory``), the contact events
(``Events``) and the contacts' forces at the save times (``ContactHistory``); ``Trajectory.save`` and
``Trajectory.load`` keep a run in one ``.npz`` file."""

import dataclasses
import zipfile

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._files import atomic_write


class Trajectory(eqx.Module):
    """Saved states and diagnostics, one row per save time.

    Attributes
    ----------
    t : save times (s).
    q, v : coordinates and velocities, (len(t), n).
    constraint_violation : ‖Φ(q, t)‖.
    velocity_violation : ‖Φ̇(q, v, t)‖.
    energy : kinetic plus potential energy (J), without the elastic energy of a contact after its removal
        (``Geometry.removal``).
    linear_momentum : Σ m ṙ, (len(t), 2) for planar bodies, (len(t), 3) for spatial.
    angular_momentum : about the origin, (len(t),) for planar bodies, (len(t), 3) for spatial.
    steps : accepted solver steps over the whole run.
    segments : integration segments (one ``diffeqsolve`` each, ended by an event or the end of the run; 1
        for models without contacts).
    events : ``Events`` of the contacts, ``None`` for models without contacts.
    contact_history : with ``simulate(..., contact_history=True)``, one entry
        per force of ``Model.forces``: a ``ContactHistory`` for each ``Contact``
        family, ``None`` for other forces (so ``events.contact`` indexes it);
        ``None`` otherwise.
    removals : one entry per force of ``Model.forces``: for each ``Contact``
        family the time (s) each of its contacts was removed for good
        (``Geometry.removal``, located: a ball that dropped through a
        ``HoledPlane``'s hole; the contacts with a body that a family with
        ``removes_body`` took out, at its ``Geometry.exit``), inf for those
        that were not; ``None`` for other forces, and for models without
        contacts.

    ``save(path)`` writes all of it to one ``.npz`` file (atomically);
    ``Trajectory.load(path)`` reads it back.
    """

    t: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray
    constraint_violation: jnp.ndarray
    velocity_violation: jnp.ndarray
    energy: jnp.ndarray
    linear_momentum: jnp.ndarray
    angular_momentum: jnp.ndarray
    steps: jnp.ndarray
    segments: jnp.ndarray
    events: "Events | None" = None
    contact_history: "tuple | None" = None
    removals: "tuple | None" = None

    def save(self, path):
        """Write the trajectory, its ``events``, ``contact_history`` and ``removals`` to the NumPy ``.npz`` file ``path``.

        The file is written beside ``path`` and renamed, so an interrupted save
        leaves no partial file. Returns ``path`` as a ``pathlib.Path``.
        """
        arrays = {"format": np.asarray(_FILE_FORMAT), **_arrays(self)}
        if self.events is not None:
            arrays.update(_arrays(self.events, "events/"))
        if self.contact_history is not None:
            arrays["contact_history"] = np.asarray(len(self.contact_history))
            for k, history in enumerate(self.contact_history):
                if history is not None:
                    arrays.update(_arrays(history, f"contact_history/{k}/"))
        if self.removals is not None:
            arrays["removals"] = np.asarray(len(self.removals))
            arrays.update({f"removals/{k}": np.asarray(times) for k, times in enumerate(self.removals)
                           if times is not None})

        def write(tmp):
            with open(tmp, "wb") as file:  # a file object: np.savez would append .npz to a name
                np.savez(file, **arrays)

        return atomic_write(path, write)

    @classmethod
    def load(cls, path):
        """The ``Trajectory`` saved by ``save`` in ``path``.

        Raises ``FileNotFoundError`` if there is no such file and ``ValueError``
        if it is not a file written by ``Trajectory.save``.
        """
        message = f"{path} is not a trajectory file written by Trajectory.save"
        try:
            file = np.load(path, allow_pickle=False)
        except (ValueError, zipfile.BadZipFile) as error:
            raise ValueError(f"{message} ({error})") from None
        if not isinstance(file, np.lib.npyio.NpzFile):  # a single array (.npy)
            raise ValueError(message)
        with file:
            arrays = {name: file[name] for name in file.files}
        if "format" not in arrays or str(arrays["format"]) != _FILE_FORMAT:
            raise ValueError(message)
        histories = None
        if "contact_history" in arrays:
            histories = tuple(
                _module(ContactHistory, arrays, f"contact_history/{k}/") if f"contact_history/{k}/gap" in arrays
                else None
                for k in range(int(arrays["contact_history"]))
            )
        removals = None
        if "removals" in arrays:
            removals = tuple(jnp.asarray(arrays[f"removals/{k}"]) if f"removals/{k}" in arrays else None
                             for k in range(int(arrays["removals"])))
        events = _module(Events, arrays, "events/") if "events/count" in arrays else None
        return _module(cls, arrays, events=events, contact_history=histories, removals=removals)


#: The ``format`` entry of the files of ``Trajectory.save``.
_FILE_FORMAT = "diffimpact.multibody.Trajectory 1"


def _arrays(module, prefix=""):
    """``{prefix + name: array}`` for the array fields of ``module``."""
    return {prefix + field.name: np.asarray(value) for field in dataclasses.fields(module)
            if isinstance(value := getattr(module, field.name), (jax.Array, np.ndarray))}


def _module(cls, arrays, prefix="", **others):
    """``cls`` built from the arrays ``prefix + name`` of its fields, and ``others``."""
    names = [field.name for field in dataclasses.fields(cls) if field.name not in others]
    return cls(**{name: jnp.asarray(arrays[prefix + name]) for name in names}, **others)


class ContactHistory(eqx.Module):
    """The contacts of one ``Contact`` family at the save times, as the integrator applied them.

    Each is evaluated inside the segment that contains the save time, with the
    laws, engaged flags and recovering surfaces of that segment (a save time
    at an event gets the values after it). Shapes: (len(t), count) and
    (len(t), count, d), d = 2 for planar and 3 for spatial bodies.

    Attributes
    ----------
    penetration : δ (m), > 0 in overlap.
    gap : g (m), the gap the contact events watch: for an open contact
        x_s − δ, the distance to the contact zone recovering after a
        zero-force separation (x_s, ``free_surface``; zero when the zone has
        recovered, and always for laws that do not separate at zero force);
        −δ for a closed contact.
    normal : unit normal n, along which the contact pushes body j, (len(t), count, d).
    normal_force : f_N (N): the law's force from onset to separation, zero while open and for a
        ``RigidImpact`` (whose impulses act at the events).
    friction_force : F_t (N) on body j, tangential, (len(t), count, d); zero without a friction law.
        The force on body j is f_N n + F_t, on body i its opposite.
    """

    penetration: jnp.ndarray
    gap: jnp.ndarray
    normal: jnp.ndarray
    normal_force: jnp.ndarray
    friction_force: jnp.ndarray


class Events(eqx.Module):
    """Contact onsets and separations in the order they happened; rows past ``count`` are unused (t = inf).

    The turning points of open gaps, which also end segments, are not listed.

    Attributes
    ----------
    count : number of events.
    t : event times (s), (max_events,).
    contact : index in ``Model.forces`` of the contact family.
    member : index of the contact within its family.
    onset : True at contact onset, False at separation.
    q, v : state just after the event (after the impulse of a ``RigidImpact``).
    """

    count: jnp.ndarray
    t: jnp.ndarray
    contact: jnp.ndarray
    member: jnp.ndarray
    onset: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray
