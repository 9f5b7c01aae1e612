"""``python -m kschedctl``."""

from kschedctl.cli.main import main

if __name__ == "__main__":
    main()
