"""Time ``kschedctl simulate`` on the performance scenarios: the simulate part of ``bench/run.py``.

Each scenario's pod (``../shared/perf``, else ``bench/perf``) is placed ``--replicas`` times
(200 by default) as a template on its generated cluster (JSON snapshot), under the default
configuration and under ``percentageOfNodesToScore: 100``; the table gives pods per second of
the scheduling loop, wall time and peak RSS, and the peak RSS of a run asking for a million
copies of which the same number is simulated.

    python3 bench/simulate.py [--scenarios c500] [--replicas 200]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import main

if __name__ == "__main__":
    main(["--only-simulate", *sys.argv[1:]])
