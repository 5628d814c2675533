"""Parameter identification on top of diffimpact and optax.

Not built yet: the fit loop, parameter transforms, uncertainties and
sensitivities are the subject of the next issue (the `fitting` package). The
α(n), β(n) damping fits currently live in ``diffimpact.reproduce.damping``.
"""
