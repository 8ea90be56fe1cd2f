"""The conformance check: ``sevenrocks check`` and an event's ``preflight``.

:mod:`.run` plays one bot command through every phase (both rulesets, the awkward
positions of :mod:`.scenarios`, a tight clock, a dropped connection through
:mod:`.dropproxy`); :mod:`.preflight` runs it for an event's launched entrants
before their first match. It sits below ``events/``: it knows the referee, and an
event config only through the small protocols :mod:`.preflight` declares.
"""
