#!/usr/bin/env python3
"""tessera's `y(i) = A(i,j) * B(j,k) * x(k)` (A = B = the matrix in FILE)
against scipy's `A @ (B @ x)`, in interleaved rounds on the same data, as
`../shared/tools/peer_ratio.py` times its kernels (which have no chained
product). Prints the median of per-round ratios; below 1, tessera is faster.

    python3 scripts/chain_ratio.py FILE.mtx [--rounds 7] [-- EXTRA EVAL ARGS]

`-- -s "reorder(i, j, k)"` forces the plan without the default precompute.
Needs numpy and scipy (the peer's virtual environment is used when present).
"""
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VENV = Path(os.environ.get("SCIPY_PEER_VENV", Path.home() / ".cache" / "tessera-scipy-peer"))
if (VENV / "bin" / "python").exists() and Path(sys.prefix).resolve() != VENV.resolve():
    os.execv(str(VENV / "bin" / "python"), [str(VENV / "bin" / "python")] + sys.argv)

import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402

UNIT = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
STATEMENT = "y(i) = A(i,j) * B(j,k) * x(k)"


def tessera_median(exe, args):
    r = subprocess.run([exe, "eval"] + args, capture_output=True, text=True)
    text = r.stdout + r.stderr
    if r.returncode != 0:
        raise SystemExit(f"tessera exited {r.returncode}: {text.strip()[-400:]}")
    m = re.search(r"median[^0-9]{0,20}([0-9]+(?:\.[0-9]+)?)\s*(ns|us|µs|ms|s)\b", text)
    if not m:
        raise SystemExit("no 'median <number> <unit>' in tessera's --time output: " + text.strip()[-300:])
    return float(m.group(1)) * UNIT[m.group(2)]


def scipy_median(a, x, runs):
    a @ (a @ x)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        a @ (a @ x)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    if not argv:
        raise SystemExit(__doc__)
    path, rounds = argv[0], 7
    if "--rounds" in argv:
        rounds = int(argv[argv.index("--rounds") + 1])
    a = sp.csr_matrix(scipy.io.mmread(path))
    x = np.random.default_rng(0).uniform(-1, 1, a.shape[1])
    exe = os.environ.get("TESSERA_BIN", "./target/release/tessera")
    with tempfile.TemporaryDirectory() as tmp:
        vector = Path(tmp) / "x.tns"
        vector.write_text("".join(f"{k + 1} {float(v)!r}\n" for k, v in enumerate(x)))
        args = [STATEMENT, "-i", f"A:{path}", "-i", f"B:{path}", "-f", "A:csr", "-f", "B:csr",
                "-i", f"x:{vector}", "-f", "x:dense", "-f", "y:dense", "--time", "5"] + extra
        ratios = []
        for r in range(rounds):
            t, s = tessera_median(exe, args), scipy_median(a, x, 5)
            ratios.append(t / s)
            print(f"round {r + 1}: tessera {t * 1e3:.3f} ms, scipy {s * 1e3:.3f} ms, ratio {t / s:.3f}")
    print(f"chain {Path(path).name}: tessera/scipy median ratio {float(np.median(ratios)):.3f} "
          f"over {rounds} rounds (below 1: tessera faster)")


if __name__ == "__main__":
    main()
