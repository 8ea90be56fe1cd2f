"""What an event publishes: the leaderboard model (:mod:`.leaderboard`) and its
renderings as a terminal table, JSON, CSV, Markdown and HTML (:mod:`.render`)."""
