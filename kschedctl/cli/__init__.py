"""The command line: thin typer commands, option parsing and exit codes."""
