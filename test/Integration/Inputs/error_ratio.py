#!/usr/bin/env python3
"""Checks that one run's error against the reference is at most FACTOR times
another's: FlashAttention's accuracy bar for low-precision kernels (error
against the exact result at most 2x that of a low-precision reference).

  error_ratio.py TESTED.txt BASELINE.txt [--factor 2]

Each file holds attn-ref --compare output ("ref-check @f: max_abs_err=...
fro_rel_err=... ok"); both the max-abs and the Frobenius errors are checked.
"""
import argparse
import re
import sys


def errors(path):
    text = open(path).read()
    found = {k: float(v) for k, v in
             re.findall(r"(max_abs_err|fro_rel_err)=([0-9.eE+-]+)", text)}
    if len(found) != 2:
        sys.exit(f"error_ratio.py: no attn-ref errors in {path}")
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tested")
    parser.add_argument("baseline")
    parser.add_argument("--factor", type=float, default=2.0)
    args = parser.parse_args()
    tested, baseline = errors(args.tested), errors(args.baseline)
    ok = True
    for key in ("max_abs_err", "fro_rel_err"):
        bound = args.factor * baseline[key]
        verdict = "ok" if tested[key] <= bound else "FAILED"
        ok &= tested[key] <= bound
        print(f"{key}: {tested[key]:.3e} vs {args.factor:g} x "
              f"{baseline[key]:.3e} = {bound:.3e} {verdict}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
