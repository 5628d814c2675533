"""``simulate``'s progress bar (``progress=True``): one tqdm bar over the whole run, its segments included.

A run with contacts is a scan of segments, each a diffrax solve of its own; diffrax's ``TqdmProgressMeter``
opened a bar per segment, each from 0 to 100 % of that segment's horizon, and its bookkeeping (``unvmap_max``
of its step count) has no derivative rule, so ``progress=True`` under ``jax.grad`` or ``jax.jvp`` of a run
with contacts failed. ``RunProgress`` is the meter of one segment [t0, t1] of a run over [start, end]: it
shows the run's fraction done, (t − start)/(end − start), on one bar, every ``REFRESH_STEPS`` solver steps,
through ``jax.debug.callback`` of values cut from any derivative; ``finish`` completes and closes the bar at
the end of the run. The bar shows the furthest point of the run reached, never going back (a step that
overshoots an event is followed by the segment that starts at the event; reverse mode replays the segments
backwards). One bar shows at a time (a new run takes it over); under ``jax.vmap`` the callback comes once per
member, and the bar shows the furthest member.
"""

import diffrax as dfx
import jax
import jax.numpy as jnp

#: Solver steps between two updates of the bar (each a call back to Python).
REFRESH_STEPS = 20

_BAR = []  # the bar now showing, if any


def _show(fraction):
    if not _BAR:
        import tqdm

        _BAR.append(tqdm.tqdm(total=100, unit="%", bar_format="{percentage:.2f}%|{bar}| [{elapsed}<{remaining}]"))
    # the furthest point reached: a step that overshoots an event is followed by a segment that starts at the
    # event, and reverse mode replays the segments backwards
    _BAR[0].n = max(_BAR[0].n, round(100 * float(fraction), 2))
    _BAR[0].refresh()


def _finish(_):
    if _BAR:
        bar = _BAR.pop()
        bar.n = 100
        bar.refresh()
        bar.close()


class RunProgress(dfx.AbstractProgressMeter):
    """diffrax's progress meter for the segment [``t0``, ``t1``] of a run over [``start``, ``end``]."""

    start: jnp.ndarray
    end: jnp.ndarray
    t0: jnp.ndarray
    t1: jnp.ndarray

    def init(self):
        return jnp.array(0)

    def step(self, state, progress):
        t = self.t0 + progress * (self.t1 - self.t0)
        fraction = jax.lax.stop_gradient((t - self.start) / (self.end - self.start))
        # a solve that an event ends reports its last step as the whole horizon (progress 1): the run's end is
        # shown by ``finish``
        jax.lax.cond((state % REFRESH_STEPS == 0) & (progress < 1), lambda f: jax.debug.callback(_show, f),
                     lambda f: None, fraction)
        return state + 1

    def close(self, state):
        del state


def finish(last):
    """Complete and close the bar once ``last`` (a value computed at the run's end) is."""
    jax.debug.callback(_finish, jax.lax.stop_gradient(last))


def meter(progress, start, end, t0, t1):
    """The progress meter of a solve over [t0, t1] in a run over [start, end] (``RunProgress``), or none."""
    return RunProgress(start, end, t0, t1) if progress else dfx.NoProgressMeter()
