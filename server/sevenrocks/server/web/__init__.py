"""The live web server: the event site served while it runs, plus live pages fed from the
referee's spectator feed (public information only). Sits above referee/, events/ and publish/."""
