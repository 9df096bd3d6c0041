"""What the scripts that time tessera against scipy share: the peer's
virtual environment (numpy and scipy, as ../shared/tools/peer_ratio.py sets
it up), the median of `tessera eval ... --time N`, and the median of a scipy
kernel's runs. Imported by chain_ratio.py and format_ratio.py."""
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

VENV = Path(os.environ.get("SCIPY_PEER_VENV", Path.home() / ".cache" / "tessera-scipy-peer"))
UNIT = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def use_peer_venv():
    """Runs the calling script again in the peer's virtual environment when
    there is one and this is not it."""
    if (VENV / "bin" / "python").exists() and Path(sys.prefix).resolve() != VENV.resolve():
        os.execv(str(VENV / "bin" / "python"), [str(VENV / "bin" / "python")] + sys.argv)


def tessera_median(exe, args):
    """The median `tessera eval ARGS` prints with --time, in seconds."""
    r = subprocess.run([exe, "eval"] + args, capture_output=True, text=True)
    text = r.stdout + r.stderr
    if r.returncode != 0:
        raise SystemExit(f"tessera exited {r.returncode}: {text.strip()[-400:]}")
    m = re.search(r"median[^0-9]{0,20}([0-9]+(?:\.[0-9]+)?)\s*(ns|us|µs|ms|s)\b", text)
    if not m:
        raise SystemExit("no 'median <number> <unit>' in tessera's --time output: " + text.strip()[-300:])
    return float(m.group(1)) * UNIT[m.group(2)]


def median_of_runs(kernel, runs):
    """The median time of `kernel()` over `runs` runs after one warm-up, in
    seconds."""
    kernel()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        kernel()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
