#!/usr/bin/env python3
"""Checks which rows of an f32 (or bf16, '<u2') .npy result are NaN
(without numpy).

  nan_rows.py OUT.npy --first-nan R

Every row (along the second-to-last dimension, in every batch and head)
before R must be finite, every row from R on all NaN (with --confined:
anything).
"""
import argparse
import ast
import math
import struct
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--first-nan", type=int, required=True)
    parser.add_argument("--confined", action="store_true")
    args = parser.parse_args()
    data = open(args.path, "rb").read()
    header_len = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
    if header["descr"] not in ("<f4", "<u2") or header["fortran_order"]:
        sys.exit(f"nan_rows.py: {args.path}: not a C-order f32 or bf16 array")
    shape = header["shape"]
    rows, width = shape[-2], shape[-1]
    count = 1
    for d in shape:
        count *= d
    body = data[10 + header_len:]
    if header["descr"] == "<u2":  # bf16: the upper half of an f32
        body = b"".join(b"\0\0" + body[i:i + 2] for i in range(0, len(body), 2))
    values = struct.unpack(f"<{count}f", body)
    bad = 0
    for start in range(0, count, width):
        row = (start // width) % rows
        v = values[start:start + width]
        want_nan = row >= args.first_nan
        if want_nan and args.confined:
            continue
        ok = all(math.isnan(x) for x in v) if want_nan else all(
            math.isfinite(x) for x in v)
        if not ok:
            bad += 1
            if bad <= 5:
                print(f"row {row}: expected {'NaN' if want_nan else 'finite'}"
                      f", got {v[:4]}...")
    if bad:
        sys.exit(f"nan_rows.py: {bad} rows wrong")
    print(f"nan_rows.py: {count // width} rows ok")


if __name__ == "__main__":
    main()
