"""Shared test helpers."""

import pytest


def _central_difference(fn, point, argnum, relative_step=1e-5):
    """Central finite difference of a scalar ``fn(*point)`` with respect to argument ``argnum``."""
    h = relative_step * point[argnum]
    plus, minus = list(point), list(point)
    plus[argnum] += h
    minus[argnum] -= h
    return (float(fn(*plus)) - float(fn(*minus))) / (2 * h)


@pytest.fixture(scope="session")
def central_difference():
    return _central_difference
