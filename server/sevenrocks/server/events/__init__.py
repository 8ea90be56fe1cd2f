"""Events: config, schedule, executors (local and Dask), the SQLite store, ratings.

Data flows one way: :mod:`.config` → :mod:`.schedule` (frozen ``MatchTask``) →
:mod:`.executor` / :mod:`..cluster.executor` → :mod:`.outcome` → :mod:`.store` →
:mod:`..stats.ratings`; :mod:`.tournament` ties them together. The statistics live in
``stats/`` and the conformance check (and preflight) in ``check/``.
"""
