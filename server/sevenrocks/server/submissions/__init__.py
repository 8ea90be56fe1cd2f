"""Authors submit their own bots to a league: tokens, safe unpacking, the build and validation pipeline."""
