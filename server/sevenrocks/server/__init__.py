"""The referee, match runner, events, storage, ratings, publishing and the CLI."""
