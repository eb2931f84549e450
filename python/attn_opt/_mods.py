"""FlexAttention's score_mod and mask_mod, traced into attn.attention's
score and mask regions (docs/FlexAttention.md).

A mod is called once with symbolic arguments (`Sym`): the score (f32), the
batch row, the head, the query and the key index (index). What it does to
them (Python arithmetic, comparisons, `&`, `|`, `~`, `^`, `%`, `//`, `abs`,
`torch.where`, `torch.tanh`, `torch.exp`, ..., indexing of captured torch
tensors or `attn_opt.capture(array)` by such values) is recorded as `arith`
and `math` operations; the regions are the recording. Anything else raises
AttnOptError naming the construct.
"""

import math

import numpy as np

from ._library import AttnOptError, dtype_name, is_torch_tensor

_INT = ("index", "i64", "i32", "i8", "i1")


class capture:
    """A NumPy array (or torch tensor) a mod indexes: `capture(ids)[b, q]`.
    (torch tensors can be indexed directly; NumPy arrays cannot take
    symbolic indices.)"""

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        tracer = _Tracer.active
        if tracer is None:
            return self.array[index]
        return tracer.extract(self.array, index)


class _Tracer:
    """The recording of one mod: MLIR lines, and the tensors it captures
    (shared by the mods of one attention, in first-use order)."""

    active = None

    def __init__(self, prefix, captures):
        self.prefix = prefix
        self.lines = []
        self.count = 0
        self.captures = captures  # list of (array, element type)

    def value(self, op, ty):
        name = f"%{self.prefix}{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {op}")
        return Sym(self, name, ty)

    def const(self, v, ty):
        if ty == "i1":
            text = "true" if v else "false"
        elif ty == "f32":
            v = float(v)
            if math.isinf(v):
                text = "0xFF800000" if v < 0 else "0x7F800000"
            elif math.isnan(v):
                text = "0x7FC00000"
            else:
                text = repr(v)
        else:
            text = str(int(v))
        return self.value(f"arith.constant {text} : {ty}", ty)

    # -- Conversions ------------------------------------------------------

    def lift(self, x, like=None):
        """A Sym for `x` (a Sym, or a Python number taking the type of the
        Sym `like` where it fits)."""
        if isinstance(x, Sym):
            return x
        if isinstance(x, bool):
            return self.const(x, "i1")
        if isinstance(x, int):
            ty = like.ty if like is not None and like.ty != "i1" else "index"
            return self.const(x, ty)
        if isinstance(x, float):
            return self.const(x, "f32")
        if is_torch_tensor(x) and x.dim() == 0:
            return self.lift(x.item(), like)
        raise AttnOptError(
            f"a mod computes with a {type(x).__name__}; traced mods take "
            f"numbers, their arguments and captured tensors indexed by them")

    def to_float(self, x):
        if x.ty == "f32":
            return x
        if x.ty == "index":
            x = self.value(f"arith.index_cast {x.name} : index to i64", "i64")
        if x.ty == "i1":
            return self.value(f"arith.uitofp {x.name} : i1 to f32", "f32")
        return self.value(f"arith.sitofp {x.name} : {x.ty} to f32", "f32")

    def to_int(self, x, ty):
        if x.ty == ty:
            return x
        if x.ty == "f32":
            raise AttnOptError("a mod uses a float where an integer is needed "
                               "(an index, a bitwise or integer operation)")
        if ty == "index" or x.ty == "index":
            cast = "index_castui" if x.ty == "i1" else "index_cast"
            return self.value(f"arith.{cast} {x.name} : {x.ty} to {ty}", ty)
        ext = "extui" if x.ty == "i1" else "extsi"
        return self.value(f"arith.{ext} {x.name} : {x.ty} to {ty}", ty)

    def unify(self, a, b):
        """Both operands as Syms of one type: f32 if either is a float, else
        index if either is, else the wider integer."""
        a = self.lift(a, b if isinstance(b, Sym) else None)
        b = self.lift(b, a)
        if a.ty == b.ty:
            return a, b
        if "f32" in (a.ty, b.ty):
            return self.to_float(a), self.to_float(b)
        order = {t: i for i, t in enumerate(_INT)}
        ty = min(a.ty, b.ty, key=lambda t: order[t])
        return self.to_int(a, ty), self.to_int(b, ty)

    def to_bool(self, x):
        x = self.lift(x)
        if x.ty == "i1":
            return x
        if x.ty == "f32":
            zero = self.const(0.0, "f32")
            return self.value(f"arith.cmpf une, {x.name}, {zero.name} : f32",
                              "i1")
        zero = self.const(0, x.ty)
        return self.value(f"arith.cmpi ne, {x.name}, {zero.name} : {x.ty}",
                          "i1")

    # -- Operations -------------------------------------------------------

    def binary(self, iop, fop, a, b):
        a, b = self.unify(a, b)
        if a.ty == "f32":
            if fop is None:
                raise AttnOptError(f"a mod applies {iop} to floats")
            return self.value(f"arith.{fop} {a.name}, {b.name} : f32", "f32")
        if iop is None:
            raise AttnOptError(f"a mod applies {fop} to integers")
        return self.value(f"arith.{iop} {a.name}, {b.name} : {a.ty}", a.ty)

    def compare(self, ipred, fpred, a, b):
        a, b = self.unify(a, b)
        if a.ty == "f32":
            return self.value(
                f"arith.cmpf {fpred}, {a.name}, {b.name} : f32", "i1")
        return self.value(f"arith.cmpi {ipred}, {a.name}, {b.name} : {a.ty}",
                          "i1")

    def select(self, c, a, b):
        c = self.to_bool(c)
        a, b = self.unify(a, b)
        return self.value(f"arith.select {c.name}, {a.name}, {b.name} : "
                          f"{a.ty}", a.ty)

    def floordiv(self, a, b):
        a, b = self.unify(a, b)
        if a.ty == "f32":
            q = self.value(f"arith.divf {a.name}, {b.name} : f32", "f32")
            return self.value(f"math.floor {q.name} : f32", "f32")
        return self.value(f"arith.floordivsi {a.name}, {b.name} : {a.ty}",
                          a.ty)

    def mod(self, a, b):
        """Python's %: the remainder takes the divisor's sign."""
        a, b = self.unify(a, b)
        if a.ty == "f32":
            q = self.floordiv(a, b)
            return self.binary(None, "subf", a,
                               self.binary(None, "mulf", q, b))
        r = self.value(f"arith.remsi {a.name}, {b.name} : {a.ty}", a.ty)
        zero = self.const(0, a.ty)
        r_neg = self.compare("slt", None, r, zero)
        b_neg = self.compare("slt", None, b, zero)
        nonzero = self.compare("ne", None, r, zero)
        flip = self.value(f"arith.xori {r_neg.name}, {b_neg.name} : i1", "i1")
        fix = self.value(f"arith.andi {nonzero.name}, {flip.name} : i1", "i1")
        return self.select(fix, self.binary("addi", None, r, b), r)

    def unary_math(self, op, x):
        x = self.to_float(self.lift(x))
        return self.value(f"math.{op} {x.name} : f32", "f32")

    def extract(self, array, index):
        if not isinstance(index, tuple):
            index = (index,)
        ndim = len(array.shape)
        if len(index) != ndim:
            raise AttnOptError(
                f"a mod indexes a captured tensor of rank {ndim} with "
                f"{len(index)} indices; index every dimension with a scalar")
        for i in index:
            if not isinstance(i, (Sym, int)) or isinstance(i, bool):
                raise AttnOptError(
                    f"a mod indexes a captured tensor with a "
                    f"{type(i).__name__}; indices are its arguments, integers "
                    f"and arithmetic on them (no slices)")
        at = [self.to_int(self.lift(i), "index") for i in index]
        c, elem = self.capture(array)
        ty = {"i8": "i8", "i32": "i32", "i64": "i64", "f32": "f32"}[elem]
        t = "tensor<" + "x".join("?" * ndim) + f"x{ty}>"
        v = self.value(f"tensor.extract %{self.prefix}c{c}"
                       f"[{', '.join(x.name for x in at)}] : {t}", ty)
        if elem == "i8" and _is_bool(array):
            return self.to_bool(v)
        return v

    def capture(self, array):
        for n, (a, elem) in enumerate(self.captures):
            if a is array:
                return n, elem
        name = dtype_name(array)
        if name is None and not _is_bool(array):
            raise AttnOptError(
                f"a mod captures a {type(array).__name__} of dtype "
                f"{getattr(array, 'dtype', '?')}; captured tensors are NumPy "
                f"arrays or CPU torch tensors of numbers")
        elem = ("i8" if _is_bool(array) or name in ("i8", "u8") else
                "i32" if name in ("i16", "i32", "u16") else
                "i64" if name in ("i64", "u32") else "f32")
        self.captures.append((array, elem))
        return len(self.captures) - 1, elem


def _is_bool(array):
    return str(getattr(array, "dtype", "")) in ("bool", "torch.bool")


class Sym:
    """A traced scalar of a mod: an SSA name and its type."""

    __array_priority__ = 1000  # numpy scalars defer to Sym's operators

    def __init__(self, tracer, name, ty):
        self.tracer, self.name, self.ty = tracer, name, ty

    __hash__ = object.__hash__

    def _t(self):
        return self.tracer

    # Arithmetic.
    def __add__(s, o): return s._t().binary("addi", "addf", s, o)
    def __radd__(s, o): return s._t().binary("addi", "addf", o, s)
    def __sub__(s, o): return s._t().binary("subi", "subf", s, o)
    def __rsub__(s, o): return s._t().binary("subi", "subf", o, s)
    def __mul__(s, o): return s._t().binary("muli", "mulf", s, o)
    def __rmul__(s, o): return s._t().binary("muli", "mulf", o, s)

    def __truediv__(s, o):
        t = s._t()
        return t.binary(None, "divf", t.to_float(s), t.to_float(t.lift(o)))

    def __rtruediv__(s, o):
        t = s._t()
        return t.binary(None, "divf", t.to_float(t.lift(o)), t.to_float(s))

    def __floordiv__(s, o): return s._t().floordiv(s, o)
    def __rfloordiv__(s, o): return s._t().floordiv(o, s)
    def __mod__(s, o): return s._t().mod(s, o)
    def __rmod__(s, o): return s._t().mod(o, s)

    def __neg__(s):
        t = s._t()
        if s.ty == "f32":
            return t.value(f"arith.negf {s.name} : f32", "f32")
        return t.binary("subi", None, 0, s)

    def __pos__(s): return s

    def __abs__(s):
        t = s._t()
        op = "math.absf" if s.ty == "f32" else "math.absi"
        return t.value(f"{op} {s.name} : {s.ty}", s.ty)

    def __pow__(s, o):
        if isinstance(o, int) and not isinstance(o, bool) and 1 <= o <= 8:
            r = s
            for _ in range(o - 1):
                r = r * s
            return r
        raise AttnOptError("a mod raises to a power other than a small "
                           "positive integer constant (x ** 2 is traced)")

    # Comparisons.
    def __lt__(s, o): return s._t().compare("slt", "olt", s, o)
    def __le__(s, o): return s._t().compare("sle", "ole", s, o)
    def __gt__(s, o): return s._t().compare("sgt", "ogt", s, o)
    def __ge__(s, o): return s._t().compare("sge", "oge", s, o)
    def __eq__(s, o): return s._t().compare("eq", "oeq", s, o)
    def __ne__(s, o): return s._t().compare("ne", "une", s, o)

    # Logic (on booleans; bitwise on integers).
    def _logic(s, o, op):
        t = s._t()
        a, b = t.unify(s, o)
        if a.ty == "f32":
            raise AttnOptError(f"a mod applies {op} to floats")
        return t.value(f"arith.{op} {a.name}, {b.name} : {a.ty}", a.ty)

    def __and__(s, o): return s._logic(o, "andi")
    def __rand__(s, o): return s._logic(o, "andi")
    def __or__(s, o): return s._logic(o, "ori")
    def __ror__(s, o): return s._logic(o, "ori")
    def __xor__(s, o): return s._logic(o, "xori")
    def __rxor__(s, o): return s._logic(o, "xori")

    def __invert__(s):
        t = s._t()
        ones = t.const(1 if s.ty == "i1" else -1, s.ty)
        return t.value(f"arith.xori {s.name}, {ones.name} : {s.ty}", s.ty)

    def __bool__(s):
        raise AttnOptError(
            "a mod uses a traced value in Python control flow (if, while, "
            "and, or, not, a chained comparison); write it with &, |, ~ and "
            "torch.where")

    def __index__(s):
        s._t().numpy_index = True
        raise AttnOptError(
            "a mod indexes a NumPy array with a traced value; wrap the array "
            "in attn_opt.capture(array), or pass a torch tensor")

    __int__ = __float__ = __index__

    # Methods FlexAttention code calls on tensors.
    def tanh(s): return s._t().unary_math("tanh", s)
    def exp(s): return s._t().unary_math("exp", s)
    def abs(s): return abs(s)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        tracer = _Tracer.active
        handler = _TORCH.get(name)
        if tracer is None or handler is None:
            raise AttnOptError(
                f"a mod uses torch.{name}, which attn_opt does not trace "
                f"(traced: {', '.join(sorted(n for n in _TORCH if n[0] != '_'))}"
                f", Python arithmetic, "
                f"comparisons, &, |, ~, %, //, abs, indexing of captured "
                f"tensors)")
        return handler(tracer, *args, **kwargs)


def _minmax(op):
    def f(t, a, b):
        a, b = t.unify(a, b)
        if a.ty == "f32":
            return t.value(f"arith.{op}imumf {a.name}, {b.name} : f32", "f32")
        return t.value(f"arith.{op}si {a.name}, {b.name} : {a.ty}", a.ty)
    return f


def _clamp(t, x, min=None, max=None):
    if min is not None:
        x = _minmax("max")(t, x, min)
    if max is not None:
        x = _minmax("min")(t, x, max)
    return x


def _sigmoid(t, x):
    x = t.to_float(t.lift(x))
    e = t.unary_math("exp", -x)
    return 1.0 / (1.0 + e)


_TORCH = {
    "where": lambda t, c, a, b: t.select(c, a, b),
    "tanh": lambda t, x: t.unary_math("tanh", x),
    "exp": lambda t, x: t.unary_math("exp", x),
    "log": lambda t, x: t.unary_math("log", x),
    "sqrt": lambda t, x: t.unary_math("sqrt", x),
    "abs": lambda t, x: abs(t.lift(x)),
    "sigmoid": _sigmoid,
    "minimum": _minmax("min"),
    "maximum": _minmax("max"),
    "clamp": _clamp,
    "clip": _clamp,
    "__getitem__": lambda t, a, i: t.extract(a, i),
    "logical_and": lambda t, a, b: t.to_bool(a) & t.to_bool(b),
    "logical_or": lambda t, a, b: t.to_bool(a) | t.to_bool(b),
    "logical_not": lambda t, a: ~t.to_bool(a),
}


def _trace_one(fn, kind, captures):
    """The body lines of one region (without its block header)."""
    prefix = "m" if kind == "mask_mod" else "s"
    tracer = _Tracer(prefix, captures)
    index = [Sym(tracer, f"%{prefix}{n}", "index") for n in "bhij"]
    args = index if kind == "mask_mod" else \
        [Sym(tracer, f"%{prefix}s", "f32")] + index
    previous, _Tracer.active = _Tracer.active, tracer
    try:
        result = fn(*args)
    except AttnOptError as e:
        raise AttnOptError(f"{kind}: {e}") from None
    except (IndexError, TypeError):
        # NumPy turns the AttnOptError of Sym.__index__ into its own.
        if getattr(tracer, "numpy_index", False):
            raise AttnOptError(
                f"{kind}: a mod indexes a NumPy array with a traced value; "
                f"wrap the array in attn_opt.capture(array), or pass a torch "
                f"tensor") from None
        raise
    finally:
        _Tracer.active = previous
    try:
        if kind == "mask_mod":
            r = tracer.to_bool(result)
        else:
            r = tracer.to_float(tracer.lift(result))
    except AttnOptError as e:
        raise AttnOptError(f"{kind} returns {type(result).__name__}: {e}") \
            from None
    tracer.lines.append(f"attn.yield {r.name} : {r.ty}")
    return tracer.lines


def trace(score_mod, mask_mod):
    """The regions of score_mod and mask_mod (either may be None): a key
    (the traced IR and the captures' element types and ranks, what the
    compiled library depends on) and the captured arrays, converted to the
    element types the IR reads (bool to int8, other floats to float32).

    Each mod is traced twice: a mod whose two traces differ (it reads
    random numbers, a counter, anything but its arguments and captures) is
    refused."""
    def once():
        captures = []
        bodies = tuple(
            None if fn is None else tuple(_trace_one(fn, kind, captures))
            for fn, kind in ((mask_mod, "mask_mod"), (score_mod, "score_mod")))
        return bodies, captures

    bodies, captures = once()
    again, captures2 = once()
    if again != bodies or len(captures) != len(captures2) or any(
            a is not b for (a, _), (b, _) in zip(captures, captures2)):
        raise AttnOptError(
            "a mod is not a pure function of its arguments: two traces of it "
            "differ (it reads random numbers, a counter or other state); "
            "pass such data as a captured tensor")
    types = tuple((elem, len(a.shape)) for a, elem in captures)
    arrays = [_converted(a, elem) for a, elem in captures]
    return (bodies, types), arrays


def _converted(array, elem):
    want = {"i8": "i8", "i32": "i32", "i64": "i64", "f32": "f32"}[elem]
    if dtype_name(array) == want:
        return array
    if is_torch_tensor(array):
        import torch
        return array.to({"i8": torch.int8, "i32": torch.int32,
                         "i64": torch.int64,
                         "f32": torch.float32}[want]).contiguous()
    return np.ascontiguousarray(array.astype(
        {"i8": np.int8, "i32": np.int32, "i64": np.int64,
         "f32": np.float32}[want]))


def regions(mods_key):
    """The function arguments, captures clause and region text of a traced
    key."""
    (mask, score), types = mods_key
    cap_types = ["tensor<" + "x".join("?" * rank) + f"x{elem}>"
                 for elem, rank in types]
    args = [f"%cap{n}: {t}" for n, t in enumerate(cap_types)]
    clause = ""
    if cap_types:
        clause = (" captures(" + ", ".join(f"%cap{n}" for n in
                                           range(len(cap_types))) +
                  " : " + ", ".join(cap_types) + ")")
    text = ""
    for body, prefix, kind in ((mask, "m", "mask_mod"),
                               (score, "s", "score_mod")):
        if body is None:
            continue
        head = [] if kind == "mask_mod" else [f"%{prefix}s: f32"]
        head += [f"%{prefix}{n}: index" for n in "bhij"]
        head += [f"%{prefix}c{n}: {t}" for n, t in enumerate(cap_types)]
        text += (f"\n      {kind} {{\n      ^bb0({', '.join(head)}):\n" +
                 "".join(f"        {line}\n" for line in body) + "      }")
    return args, clause, text


def regions_used(mods_key):
    """The regions ("mask_mod", "score_mod") a traced key has."""
    (mask, score), _ = mods_key
    return [kind for body, kind in ((mask, "mask_mod"), (score, "score_mod"))
            if body is not None]
