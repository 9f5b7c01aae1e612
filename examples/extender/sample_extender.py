"""A sample scheduler extender, to try kschedctl's extender support against something real.

It speaks kube-scheduler's extender protocol (JSON over HTTP POST) as a
node-cache-capable extender, with the standard library only:

* ``POST /scheduler/filter`` rejects the nodes given with ``--maintenance`` (a node in
  a maintenance window) and, with ``--drained``, marks nodes unresolvable;
* ``POST /scheduler/prioritize`` scores nodes 0..10 from ``--prefer node=score``.

Run it, then point a KubeSchedulerConfiguration at it (examples/extender/config.yaml):

    python3 examples/extender/sample_extender.py --port 8888 --maintenance node-a --prefer node-c=10 --prefer node-b=4
"""

from __future__ import annotations

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def make_server(host: str, port: int, maintenance: set[str], drained: set[str], prefer: dict[str, int]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            args = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            names: list[str] = args.get("NodeNames") or [n["metadata"]["name"] for n in (args.get("Nodes") or {}).get("items", [])]
            answer: Any
            if self.path.endswith("/filter"):
                answer = {
                    "NodeNames": [n for n in names if n not in maintenance and n not in drained],
                    "FailedNodes": {n: "node is in a maintenance window (sample extender)" for n in names if n in maintenance},
                    "FailedAndUnresolvableNodes": {n: "node is drained (sample extender)" for n in names if n in drained},
                    "Error": "",
                }
            elif self.path.endswith("/prioritize"):
                answer = [{"Host": n, "Score": prefer.get(n, 0)} for n in names]
            else:
                self.send_error(404)
                return
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return ThreadingHTTPServer((host, port), Handler)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8888)
    p.add_argument("--maintenance", action="append", default=[], metavar="NODE")
    p.add_argument("--drained", action="append", default=[], metavar="NODE")
    p.add_argument("--prefer", action="append", default=[], metavar="NODE=SCORE")
    a = p.parse_args()
    prefer = {k: int(v) for k, v in (item.split("=", 1) for item in a.prefer)}
    server = make_server(a.host, a.port, set(a.maintenance), set(a.drained), prefer)
    print(f"sample extender on http://{a.host}:{server.server_address[1]}/scheduler", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
