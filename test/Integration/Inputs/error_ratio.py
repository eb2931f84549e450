#!/usr/bin/env python3
"""Checks that one run's error against the reference is at most FACTOR times
another's: FlashAttention's accuracy bar for low-precision kernels (error
against the exact result at most 2x that of a low-precision reference).

  error_ratio.py TESTED.txt BASELINE.txt [--factor 2]

Each file holds attn-ref --compare output ("ref-check @f: max_abs_err=...
fro_rel_err=... ok"), or attn-ref --grad's (a line per gradient, "ref-check
@f d_q: ..."); both the max-abs and the Frobenius errors of each line are
checked against the baseline's line of the same name.
"""
import argparse
import re
import sys


def errors(path):
    """{line name: {max_abs_err, fro_rel_err}} of an attn-ref output."""
    found = {}
    for line in open(path):
        m = re.match(r"ref-check (.*?):? max_abs_err", line)
        if not m:
            continue
        values = {k: float(v) for k, v in
                  re.findall(r"(max_abs_err|fro_rel_err)=([0-9.eE+-]+)", line)}
        if len(values) == 2:
            found[m.group(1)] = values
    if not found:
        sys.exit(f"error_ratio.py: no attn-ref errors in {path}")
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tested")
    parser.add_argument("baseline")
    parser.add_argument("--factor", type=float, default=2.0)
    args = parser.parse_args()
    tested, baseline = errors(args.tested), errors(args.baseline)
    if tested.keys() != baseline.keys():
        sys.exit(f"error_ratio.py: {sorted(tested)} against {sorted(baseline)}")
    ok = True
    for name in tested:
        for key in ("max_abs_err", "fro_rel_err"):
            bound = args.factor * baseline[name][key]
            good = tested[name][key] <= bound
            ok &= good
            print(f"{name} {key}: {tested[name][key]:.3e} vs {args.factor:g} x "
                  f"{baseline[name][key]:.3e} = {bound:.3e} "
                  f"{'ok' if good else 'FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
