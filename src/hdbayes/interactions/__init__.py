"""High-order interaction models made feasible by compressing parameters (Li & Neal; thesis ch. 3).

Building blocks so far: grouping of interaction patterns into superpatterns
(:mod:`hdbayes.interactions.patterns`) and the stable compressed priors with their
splitting distributions (:mod:`hdbayes.interactions.stable`).
"""
