"""``python -m kschedctl``."""

from kschedctl.cli.main import run

if __name__ == "__main__":
    run()
