"""Scale-out: an event's matches played on a Dask cluster (``--cluster local:N`` or a scheduler).

:mod:`.executor` is the coordinator's side (tasks in flight, results as they finish,
a lost scheduler or worker) and the worker's (one :class:`~..events.arena.Arena` per
worker process), :mod:`.workers` decides which workers may play (same protocol,
sandbox and installed code as the coordinator), and :mod:`.shipping` is what travels
to a worker: each launched entrant's snapshot, verified by digest on arrival.
"""
