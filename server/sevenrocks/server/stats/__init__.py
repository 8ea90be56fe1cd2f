"""The statistics behind rankings: ratings, the order-free fit, the verdict, the SPRT.

:mod:`.ratings` (TrueSkill in play order), :mod:`.fit` (the order-free fit over every
stored result), :mod:`.verdict` (which neighbours in the order are settled),
:mod:`.sprt` (head-to-head duels) and :mod:`.intervals` (Wilson intervals,
percentiles, derived seeds). Pure functions of results: nothing here knows the
referee, the store or an event.
"""
