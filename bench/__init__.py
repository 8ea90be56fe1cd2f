"""The benchmarks: scripts that print tables against a baseline measured in the same run.

One folder per thing measured (engine, referee, scale, events, ranking, league,
sandbox, web); the code several benchmarks share lives in ``bench/common`` and
nowhere else. Each benchmark runs on its own, ``python bench/<group>/<script>.py``
from the checkout's root, or through ``python bench/run.py`` (``--list`` names them
all), which starts each in a process of its own. ``tests/test_bench_layout.py``
guards the layout: every benchmark listed, no import circle, no helper outside
``bench/common``.
"""
