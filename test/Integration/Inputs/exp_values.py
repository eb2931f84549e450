#!/usr/bin/env python3
"""Writes the inputs of exp.mlir and checks its results (without numpy).

  exp_values.py write X.npy
  exp_values.py check X.npy OUT.npy [--flush-below B]

The inputs: a grid from -110 to 92 (odd steps, so most are not round), the
bounds of the approximation's ranges on both sides (ln FLT_MIN, ln FLT_MAX,
-64, 89) and the special values -inf, +inf, NaN, +-0; 1024 in all.

Each result must be within 3e-7 relative of math.exp(x) rounded to f32,
with these rules: exp(x) above FLT_MAX is inf; exp(x) below FLT_MIN (the
subnormal range) may be 0 or within 1.2e-38 absolute; NaN gives NaN; with
--flush-below B, x < B gives exactly 0 (the kernels' softmax weights).
"""
import argparse
import ast
import math
import struct
import sys

FLT_MIN = 1.1754943508222875e-38
FLT_MAX = 3.4028234663852886e38
COUNT = 1024


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def inputs():
    special = [-math.inf, math.inf, math.nan, 0.0, -0.0, -64.0, -64.00001,
               -63.99999, -87.3365, -87.33655, -87.34, -88.0, -100.0, -103.9,
               -104.0, -149.0, 88.72283, 88.7228, 88.73, 89.0, 89.5, 1e-30,
               -1e-30, 0.5, -0.5, 0.34657, -0.34657, 1.0, -1.0]
    step = 202.0 / (COUNT - len(special))
    grid = [-110.0 + 0.37 + i * step for i in range(COUNT - len(special))]
    return [f32(x) for x in special + grid]


def write(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % (
        len(values))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


def read(path):
    data = open(path, "rb").read()
    header_len = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
    if header["descr"] != "<f4" or header["shape"] != (COUNT,):
        sys.exit(f"exp_values.py: {path}: not {COUNT} f32 values")
    return struct.unpack("<%df" % COUNT, data[10 + header_len:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["write", "check"])
    parser.add_argument("x")
    parser.add_argument("out", nargs="?")
    parser.add_argument("--flush-below", type=float)
    args = parser.parse_args()
    if args.mode == "write":
        write(args.x, inputs())
        return
    bad = 0
    for x, got in zip(read(args.x), read(args.out)):
        if math.isnan(x):
            ok = math.isnan(got)
        elif args.flush_below is not None and x < args.flush_below:
            ok = got == 0.0
        else:
            want = math.exp(x) if x < 709 else math.inf
            if want > FLT_MAX:
                ok = got == math.inf
            elif want < FLT_MIN:
                ok = got == 0.0 or abs(got - want) <= FLT_MIN
            else:
                ok = abs(got - want) <= 3e-7 * want
        if not ok:
            bad += 1
            if bad <= 10:
                print(f"exp({x!r}) = {got!r}, expected {math.exp(x) if x < 709 else math.inf!r}")
    if bad:
        sys.exit(f"exp_values.py: {bad} of {COUNT} results wrong")
    print(f"exp_values.py: {COUNT} results ok")


if __name__ == "__main__":
    main()
