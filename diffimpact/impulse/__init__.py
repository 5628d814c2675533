"""Instantaneous impact models, one module per paper.

* ``mathavan_2010``: a billiard ball against a rigid cushion (Mathavan, Jackson
  & Parkin 2010), integrated in the cushion's normal impulse.
* ``alciatore``: D. G. Alciatore's closed forms for the ball–ball collision of
  pool, object-ball throw (TP A.14) and the 30° rule ([Gismeros Moreno 2022] eq. (4.1)).
"""

from diffimpact.impulse import alciatore, mathavan_2010

__all__ = ["alciatore", "mathavan_2010"]
