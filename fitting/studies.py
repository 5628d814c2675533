"""Published and synthetic fits, runnable as ``diffimpact fit NAME --out DIR``."""

from fitting import impact_stiffness

#: name -> (function(out_dir, quick) -> summary text, one-line description)
FITS = {
    "impact-stiffness": (
        impact_stiffness.run,
        "recover k and e of a Hertz + linear-damper contact from a noisy force history, and from duration + restitution",
    ),
}
