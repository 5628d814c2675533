"""Billiards: balls on the cloth of a table, struck, colliding with each other and the cushions, and dropping into
pockets. ``diffimpact.billiards.rigid`` is the event-driven engine of rigid balls, whose motion between events is
in closed form ([Leckie 2005]), differentiable in JAX.
"""
