"""Published and synthetic fits, runnable as ``diffimpact fit NAME --out DIR``."""

from fitting import cushion, damping, deflection, impact_stiffness, sensitivity_study, two_pendulum

#: name -> (function(out_dir, quick) -> summary text, one-line description)
FITS = {
    "impact-stiffness": (
        impact_stiffness.run,
        "recover k and e of a Hertz + linear-damper contact from a noisy force history, and from duration + restitution",
    ),
    "damping": (
        damping.run,
        "α(n), β(n) of the optimal damping ĉ = α(e^β − 1) (Poursina and Nikravesh 2020 eqs. (45)–(47)) from the "
        "shipped ĉ grid (data/damping_lambda.csv) or `--data`, with standard errors, beside the paper's",
    ),
    "sensitivity": (
        sensitivity_study.run,
        "normalised sensitivities ∂ln y/∂ln p of the central impact (optimal damping, Hunt–Crossley + Flores; "
        "k, e, n, v0, m) and of the two pendulums' first impact (k, e, n, release angle), checked against central differences",
    ),
    "two-pendulum": (
        two_pendulum.run,
        "recover e and k of the eq. (50) contact of the two pendulums of Poursina and Nikravesh 2020 §6 from noisy θ̇1(t), θ̇2(t) "
        "(uniform samples + bursts at the impacts)",
    ),
    "cushion": (
        cushion.run,
        "ball–cushion e, μ (and the rubber's modulus) from Mathavan et al. 2010's measured head-on rebounds: "
        "their rigid-cushion model and the compliant nose-height cushion; `--data` for your own rebounds",
    ),
    "deflection": (
        deflection.run,
        "ball–ball restitution and friction scale from Mathavan et al. 2009's measured cut shots (both balls' "
        "speeds once rolling); Alciatore's μ(v) refitted to Marlow's points; `--data` for your own cut shots",
    ),
}
