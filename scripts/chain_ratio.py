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
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_timing import median_of_runs, tessera_median, use_peer_venv  # noqa: E402

use_peer_venv()

import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402

STATEMENT = "y(i) = A(i,j) * B(j,k) * x(k)"


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
            t, s = tessera_median(exe, args), median_of_runs(lambda: a @ (a @ x), 5)
            ratios.append(t / s)
            print(f"round {r + 1}: tessera {t * 1e3:.3f} ms, scipy {s * 1e3:.3f} ms, ratio {t / s:.3f}")
    print(f"chain {Path(path).name}: tessera/scipy median ratio {float(np.median(ratios)):.3f} "
          f"over {rounds} rounds (below 1: tessera faster)")


if __name__ == "__main__":
    main()
