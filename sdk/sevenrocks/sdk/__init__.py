"""What a bot author installs: the rules engine, the seat's view, the Bot base classes.

The rules engine lives in :mod:`sevenrocks.sdk.rules`; it is the one engine that the
referee, the reference bots and ``sevenrocks verify`` all call.
"""
