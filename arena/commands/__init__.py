"""The `arena` subcommands, by subject; each module registers its commands on arena.cli.main."""
