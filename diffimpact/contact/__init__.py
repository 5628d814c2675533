"""Contact laws: normal forces, damping factors, friction, stiffness from materials."""

from diffimpact.contact.normal import (
    Hertz,
    HertzLinearDamper,
    HuntCrossley,
    KelvinVoigt,
    NormalForceLaw,
)
from diffimpact.contact import damping_factors
from diffimpact.contact.damping_factors import lankarani_nikravesh_law
from diffimpact.contact.friction import (
    Alciatore,
    Ambrosio,
    Coulomb,
    FrictionLaw,
    Stribeck,
    Threlfall,
)
from diffimpact.contact.stiffness import (
    material_compliance,
    sphere_plane_stiffness,
    sphere_sphere_stiffness,
)

__all__ = ["NormalForceLaw", "KelvinVoigt", "Hertz", "HertzLinearDamper", "HuntCrossley"]
__all__ += ["damping_factors", "lankarani_nikravesh_law"]
__all__ += ["FrictionLaw", "Coulomb", "Threlfall", "Ambrosio", "Alciatore", "Stribeck"]
__all__ += ["material_compliance", "sphere_sphere_stiffness", "sphere_plane_stiffness"]
