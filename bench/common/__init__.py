"""What several benchmarks share: the speed table's rows, the gRPC echo baselines, the bench's bots.

A benchmark reaches this package by putting the checkout's root on ``sys.path``
(``python bench/<group>/<script>.py`` starts with only its own folder there):

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common
    from bench.common.headline import headline  # noqa: E402

Nothing here imports a benchmark, so the benchmarks never import one another.
"""
