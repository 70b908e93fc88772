"""``python -m pytest_agenteval.demo [--port 8080]``: serve the reference agent."""

from __future__ import annotations

import argparse
import time

from .server import DemoServer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pytest_agenteval.demo",
                                     description="Serve the reference used-car dealer agent.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    server = DemoServer(args.host, args.port, args.latency_ms).start()
    print(f"reference agent listening on {server.url}  (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
