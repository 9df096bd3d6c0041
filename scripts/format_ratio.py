#!/usr/bin/env python3
"""tessera's SpMV `y(i) = A(i,j) * x(j)` with A stored in FORMAT against
scipy's product in the same storage (`A.todia() @ x` for dia, `A.tobsr((R, C))
@ x` for bcsr:RxC, `A.tocsr() @ x` for csr), in interleaved rounds on the
same data, as `../shared/tools/peer_ratio.py` times its kernels (which
compare with scipy's CSR only). Prints the median of per-round ratios;
below 1, tessera is faster.

    python3 scripts/format_ratio.py FILE.mtx dia|csr|bcsr:RxC [--rounds 7] [--kernel spmv|add] [-- EXTRA EVAL ARGS]

`--kernel add` times `C(i,j) = A(i,j) + B(i,j)`, A, B and C all in FORMAT
(B the same matrix), against scipy's `A + B` in that storage (scipy's sum of
two BSR matrices stays BSR; of two DIA matrices it is CSR).

`-- --tier interp` times the interpreter, `-- --threads 1` one thread.
Needs numpy and scipy (the peer's virtual environment is used when present).
"""
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_timing import median_of_runs, tessera_median, use_peer_venv  # noqa: E402

use_peer_venv()

import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402


def scipy_storage(a, fmt):
    """The matrix in scipy's storage of the same kind as tessera's `fmt`."""
    if fmt == "dia":
        return a.todia()
    if fmt == "csr":
        return a.tocsr()
    m = re.fullmatch(r"bcsr:(\d+)x(\d+)", fmt)
    if m:
        return a.tobsr(blocksize=(int(m.group(1)), int(m.group(2))))
    raise SystemExit(f"format {fmt!r}: dia, csr or bcsr:RxC")


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    if len(argv) < 2:
        raise SystemExit(__doc__)
    path, fmt, rounds = argv[0], argv[1], 7
    if "--rounds" in argv:
        rounds = int(argv[argv.index("--rounds") + 1])
    kernel = argv[argv.index("--kernel") + 1] if "--kernel" in argv else "spmv"
    if kernel not in ("spmv", "add"):
        raise SystemExit(f"kernel {kernel!r}: spmv or add")
    a = sp.csr_matrix(scipy.io.mmread(path))
    stored = scipy_storage(a, fmt)
    other = scipy_storage(a, fmt)
    x = np.random.default_rng(0).uniform(-1, 1, a.shape[1])
    exe = os.environ.get("TESSERA_BIN", "./target/release/tessera")
    with tempfile.TemporaryDirectory() as tmp:
        vector = Path(tmp) / "x.tns"
        vector.write_text("".join(f"{k + 1} {float(v)!r}\n" for k, v in enumerate(x)))
        if kernel == "spmv":
            args = ["y(i) = A(i,j) * x(j)", "-i", f"A:{path}", "-f", f"A:{fmt}",
                    "-i", f"x:{vector}", "-f", "x:dense", "-f", "y:dense", "--time", "20"] + extra
            peer = lambda: stored @ x  # noqa: E731
        else:
            args = ["C(i,j) = A(i,j) + B(i,j)", "-i", f"A:{path}", "-i", f"B:{path}", "-f", f"A:{fmt}",
                    "-f", f"B:{fmt}", "-f", f"C:{fmt}", "--time", "20"] + extra
            peer = lambda: stored + other  # noqa: E731
        ratios = []
        for r in range(rounds):
            t, s = tessera_median(exe, args), median_of_runs(peer, 20)
            ratios.append(t / s)
            print(f"round {r + 1}: tessera {t * 1e3:.3f} ms, scipy {s * 1e3:.3f} ms, ratio {t / s:.3f}")
    print(f"{kernel} {Path(path).name} in {fmt}: tessera/scipy median ratio {float(np.median(ratios)):.3f} "
          f"over {rounds} rounds (below 1: tessera faster)")


if __name__ == "__main__":
    main()
