"""Published experiments, runnable as ``diffimpact reproduce NAME --out DIR``."""

from diffimpact.reproduce import (
    billiards,
    damping,
    double_pendulum,
    formulations,
    max_dissipation,
    plus,
    table,
    triple_pendulum,
    two_pendulum,
)

#: name -> (function(out, quick, **options) -> summary text, one-line description)
REPRODUCTIONS = {
    "damping-scaling": (damping.run_scaling, "Poursina and Nikravesh 2020 §4.2.1–4.2.3, figs. 3–5: c_opt against m, v and k"),
    "damping-lambda": (
        damping.run_lambda,
        "Poursina and Nikravesh 2020 §4.2.4: the exact ĉ(n, e), λ(n, e) grid (input of `diffimpact fit damping`)",
    ),
    "damping-verification": (damping.run_verification, "Poursina and Nikravesh 2020 §5.1, fig. 8: 300 random systems"),
    "damping-kelvin-voigt": (damping.run_kelvin_voigt, "Poursina and Nikravesh 2020 §5.2, fig. 9: n = 1 against the exact result"),
    "damping-improved": (damping.run_improved, "beyond Poursina and Nikravesh 2020: the improved closed form against eq. (49)"),
    "two-pendulum": (
        two_pendulum.run,
        "Poursina and Nikravesh 2020 §6, figs. 11–12: two pendulums, optimal-damping vs Hunt–Crossley vs Newton impacts",
    ),
    "double-pendulum": (
        double_pendulum.run,
        "Sypniewska-Kamińska et al. 2017 §4, figs. 5–7: double pendulum, eq. (3) vs four formulations; collisions with a floor, μ = 0 and 0.15",
    ),
    "routh-double-pendulum": (
        double_pendulum.run_routh,
        "Sypniewska-Kamińska et al. 2017 §4, figs. 5–9: the double pendulum by Routh's method (diffimpact.impulse.routh), μ = 0 and 0.15, "
        "with the joint forces and the Fig. 4 arrangement of every collision",
    ),
    "formulations": (
        formulations.run,
        "Gismeros Moreno et al. 2022 §4.1, figs. 10–16: the four-ball break on the table, 3 s, under the four formulations "
        "at two default time steps, and the rack-spacing (α) sweep of Table 3",
    ),
    "break": (
        table.run,
        "Gismeros Moreno et al. 2022 on the full table: the 16-ball break for 4 s with six cushions and six pockets "
        "(paths, events, pocketed balls, energy, mirror symmetry)",
    ),
    "billiards-deflection": (
        billiards.run_deflection,
        "Gismeros Moreno et al. 2022 §4.2, figs. 17–19: cut shots at 3 and 7 mph, cue-ball deflection beside eq. (4.1), throw beside TP A.14",
    ),
    "billiards-cushion": (
        billiards.run_cushion,
        "Gismeros Moreno et al. 2022 §4.3, figs. 20–21: cushion impacts, compliant (centre height, nose) beside Mathavan et al. 2010 "
        "and their measurements",
    ),
    "maxdiss-academic": (
        max_dissipation.run_academic,
        "Preclik, Eibl & Rüde 2017 §4.1, Table 1, Fig. 7: Coulomb solutions and the maximally dissipative impulse",
    ),
    "maxdiss-paradox": (
        max_dissipation.run_paradox,
        "Preclik, Eibl & Rüde 2017 §4.2: the Painlevé rod, μ*(θ) from the impact model",
    ),
    "maxdiss-stepping": (
        max_dissipation.run_stepping,
        "Preclik, Eibl & Rüde 2017 §3.1: the time-stepping scheme with block Gauss–Seidel; a sliding sphere beside "
        "its closed form (slip time, distance, 5/7 v₀) and ten spheres poured into a box (energy, penetration)",
    ),
    "plus-brick": (
        plus.run_brick,
        "Uchida, Sherman & Delp 2015 Example 1, figs. 8–10: the brick's single-point impact by PLUS beside the "
        "compliant model; θ_max sweep (116 / 11 / 8 intervals)",
    ),
    "plus-brick-four-points": (
        plus.run_four_points,
        "Uchida, Sherman & Delp 2015 Example 2, figs. 11–13: the brick falls flat on four spheres; PLUS keeps the "
        "symmetry and spreads the load by minimum-norm least squares, beside the compliant brick",
    ),
    "plus-cradle": (
        plus.run_cradle,
        "Uchida, Sherman & Delp 2015 Example 3, fig. 14, Table 2: the five-ball row by PLUS (its five impact rounds) "
        "beside the compliant row and the no-propagation model C",
    ),
    "plus-triple-pendulum": (
        triple_pendulum.run,
        "Uchida, Sherman & Delp 2015 Example 4, fig. 15: a triple pendulum's sphere strikes the ground; CPU time "
        "of one PLUS impact against integrating the compliant impact (0.01–100 GPa) to < 1 % error in the "
        "sphere's final height",
    ),
}

__all__ = ["REPRODUCTIONS", "billiards", "damping", "double_pendulum", "formulations", "max_dissipation", "plus", "table", "triple_pendulum", "two_pendulum"]
