#!/usr/bin/env python3
"""Writes a .npy file without numpy, optionally broken, for attn-run's
error-path tests.

make_npy.py OUT --dtype '<f4' --shape 1,2,3,4 [--fortran] [--truncate N]
           [--bad-magic] [--fill X] [--cycle N] [--values A,B,...]
           [--random SEED [--nan-rows R]]

--random fills floats with seeded uniform values in [-1, 1); --nan-rows R
then makes every row from R on (along the second-to-last dimension) NaN,
the padding that varlen lowerings must never read.
"""
import argparse
import struct

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--dtype", default="<f4")
p.add_argument("--shape", default="1")
p.add_argument("--fortran", action="store_true")
p.add_argument("--truncate", type=int, default=0, help="drop N data bytes")
p.add_argument("--bad-magic", action="store_true")
p.add_argument("--fill", type=float, default=0.5)
p.add_argument("--cycle", type=int, default=0,
               help="integer values i mod N (unsorted ids) instead of --fill")
p.add_argument("--random", type=int, default=None)
p.add_argument("--nan-rows", type=int, default=None)
p.add_argument("--bad-value", default="nan",
               help="what --nan-rows puts in its rows: nan, inf or -inf")
p.add_argument("--values", default="",
               help="the elements, comma-separated (instead of --fill)")
a = p.parse_args()

shape = tuple(int(s) for s in a.shape.split(",") if s)
n = 1
for d in shape:
    n *= d
# bf16: stored as '<u2' (what attn-run reads as bf16), the upper half of
# each f32 (rounded toward zero).
bf16 = a.dtype == "bf16"
if bf16:
    a.dtype = "<u2"
width = {"<f4": 4, "<f2": 2, "<u2": 2, "<i4": 4, "<i8": 8, "<f8": 8}[a.dtype]
fmt = {"<f4": "<f", "<f2": "<e", "<u2": "<H", "<i4": "<i", "<i8": "<q",
       "<f8": "<d"}[a.dtype]
value = int(a.fill) if fmt in ("<H", "<i", "<q") else a.fill
if a.random is not None:
    import random
    rng = random.Random(a.random)
    row = shape[-1] if shape else 1
    rows = shape[-2] if len(shape) > 1 else 1
    vals = []
    for i in range(n):
        r = (i // row) % rows
        nan = a.nan_rows is not None and r >= a.nan_rows
        vals.append(float(a.bad_value) if nan else rng.uniform(-1.0, 1.0))
    if bf16:
        data = b"".join(struct.pack("<f", v)[2:] for v in vals)
    else:
        data = b"".join(struct.pack(fmt, v) for v in vals)
elif a.values:
    vals = [float(v) for v in a.values.split(",")]
    if len(vals) != n:
        raise SystemExit("make_npy.py: %d values for %d elements" % (len(vals), n))
    data = b"".join(struct.pack(fmt, int(v) if fmt in ("<H", "<i", "<q") else v)
                    for v in vals)
elif a.cycle:
    data = b"".join(struct.pack(fmt, i % a.cycle) for i in range(n))
else:
    data = struct.pack(fmt, value) * n
if a.truncate:
    data = data[: len(data) - a.truncate]
shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
    a.dtype, "True" if a.fortran else "False", shape_text)
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
magic = b"\x93NUMPX" if a.bad_magic else b"\x93NUMPY"
with open(a.out, "wb") as f:
    f.write(magic + bytes([1, 0]) + struct.pack("<H", len(header)))
    f.write(header.encode("latin1"))
    f.write(data)
