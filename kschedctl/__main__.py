"""``python -m kschedctl``."""

from kschedctl.cli.app import main

if __name__ == "__main__":
    main()
