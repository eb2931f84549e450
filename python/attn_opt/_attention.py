"""attn_opt.attention: the attn.attention op from keywords."""

import threading

from ._library import (check_array, compile, dtype_name, empty_like_kind,
                       is_torch_tensor)


def _operand(x, name, dtype):
    """check_array, and the element type of q."""
    checked = check_array(x, name)
    if dtype_name(x) != dtype:
        raise TypeError(f"{name} has dtype {x.dtype}; q's is {dtype}")
    return checked


def _data_pointer(x):
    return x.data_ptr() if is_torch_tensor(x) else x.ctypes.data

_POINTWISE = ("relu", "relu2", "gelu", "softplus", "identity", "relu6",
              "sigmoid")
# Short names of kernel (linear attention) feature maps.
_KERNELS = {"elu_plus_one": "elu_plus_one", "linear": "elu_plus_one",
            "linear_elu": "elu_plus_one", "linear_relu": "relu",
            "favor": "favor"}


def _float(x):
    return f"{float(x):.9e}"


# -- Mask patterns: the MLIR spelling of each kind --------------------------

def causal():
    return "#attn.causal"


def window(before, after=0):
    return f"#attn.window<before = {int(before)}, after = {int(after)}>"


def dilated(before, after, dilation):
    return (f"#attn.dilated<before = {int(before)}, after = {int(after)}, "
            f"dilation = {int(dilation)}>")


def global_tokens(tokens):
    return "#attn.global<[" + ", ".join(str(int(t)) for t in tokens) + "]>"


def strided(stride):
    return f"#attn.strided<stride = {int(stride)}>"


def fixed(stride, c):
    return f"#attn.fixed<stride = {int(stride)}, c = {int(c)}>"


def random_blocks(blocks, block_size, seed=0):
    return (f"#attn.random<blocks = {int(blocks)}, block_size = "
            f"{int(block_size)}, seed = {int(seed)}>")


def block(size, layout):
    rows = ", ".join('"' + r + '"' for r in layout)
    return f"#attn.block<size = {int(size)}, layout = [{rows}]>"


def segments():
    return "#attn.segments"


def _pattern_attr(p):
    if p is None:
        return None
    if not isinstance(p, str):
        raise TypeError(f"pattern must be a string, not {type(p).__name__}")
    if p.startswith("#attn."):
        return p
    short = {"causal": causal(), "segments": segments(), "full": None,
             "causal_segments":
                 "#attn.intersect<[#attn.causal, #attn.segments]>"}
    if p in short:
        return short[p]
    raise ValueError(f"unknown pattern {p!r}: use 'causal', 'segments', "
                     f"'causal_segments', a helper (attn_opt.window(...), "
                     f"...) or the MLIR spelling ('#attn.window<before = 64, "
                     f"after = 0>')")


def _parts(patterns, what):
    parts = [_pattern_attr(p) for p in patterns]
    if any(p is None for p in parts):
        raise ValueError(f"{what} takes patterns, not None or 'full'")
    return ", ".join(parts)


def union(*patterns):
    return "#attn.union<[" + _parts(patterns, "union") + "]>"


def intersect(*patterns):
    return "#attn.intersect<[" + _parts(patterns, "intersect") + "]>"


def per_head(patterns):
    """One pattern per query head."""
    return "#attn.per_head<[" + _parts(patterns, "per_head") + "]>"


def _normalizer_attr(n, alpha, features, seed, orthogonal, eps):
    if not isinstance(n, str):
        raise TypeError(f"normalizer must be a string, not {type(n).__name__}")
    if n.startswith("#attn."):
        return n
    if n == "softmax":
        return "#attn.softmax"
    if n in _POINTWISE:
        return (f"#attn.pointwise<{n}" +
                ("" if alpha is None else f", alpha = {_float(alpha)}") + ">")
    if n in _KERNELS:
        params = []
        if _KERNELS[n] == "favor":
            if not features:
                raise ValueError("normalizer='favor' needs features=M")
            params.append(f"features = {int(features)}")
        if orthogonal:
            params.append("orthogonal = true")
        if seed:
            params.append(f"seed = {int(seed)}")
        if eps:
            params.append(f"eps = {_float(eps)}")
        return ("#attn.kernel<" + _KERNELS[n] +
                "".join(", " + p for p in params) + ">")
    raise ValueError(
        f"unknown normalizer {n!r}: softmax, a pointwise function "
        f"({', '.join(_POINTWISE)}; alpha=), a feature map "
        f"({', '.join(_KERNELS)}), or the MLIR spelling "
        f"('#attn.pointwise<relu, alpha = 0.5>')")


_elem = {"f32": "f32", "f16": "f16", "bf16": "bf16"}
# The MLIR spelling of each combination of attribute keywords seen.
_spelled = {}
_functions = {}
_functions_lock = threading.Lock()


def _tensor(dims, t):
    return "tensor<" + "x".join(dims) + "x" + t + ">"


def _build(key):
    """MLIR source of one signature (dynamic batch and lengths)."""
    (t, hq, hkv, d, dv, norm, pattern, scale, qk_eps, bias, gate, seg, kseg,
     proj, lengths) = key
    lq, lk = ("?", "?") if lengths is None else (str(lengths[0]),
                                                 str(lengths[1]))
    q = _tensor(["?", str(hq), lq, str(d)], t)
    k = _tensor(["?", str(hkv), lk, str(d)], t)
    v = _tensor(["?", str(hkv), lk, str(dv)], t)
    r = _tensor(["?", str(hq), lq, str(dv)], t)
    args = [f"%query: {q}", f"%key: {k}", f"%value: {v}"]
    operands, types = "", []
    if bias is not None:
        bt = _tensor([bias[0], bias[1], lq, lk], t)
        args.append(f"%bias: {bt}")
        operands += f" bias(%bias : {bt})"
    if gate:
        args.append(f"%gate: {r}")
        operands += f" gate(%gate : {r})"
    if seg:
        st = f"tensor<?x?x{seg}>"
        args.append(f"%segments: {st}")
        operands += f" segments(%segments : {st})"
    if kseg:
        st = f"tensor<?x?x{kseg}>"
        args.append(f"%key_segments: {st}")
        operands += f" key_segments(%key_segments : {st})"
    if proj is not None:
        pt = _tensor([str(proj[0]), str(proj[1])], t)
        args.append(f"%projection: {pt}")
        operands += f" projection(%projection : {pt})"
    attrs = [f"normalizer = {norm}"]
    if pattern is not None:
        attrs.append(f"pattern = {pattern}")
    if scale is not None:
        attrs.append(f"scale = {_float(scale)} : f32")
    if qk_eps is not None:
        attrs.append(f"qk_norm_eps = {_float(qk_eps)} : f32")
    return (f"func.func @attention({', '.join(args)}) -> {r} {{\n"
            f"  %0 = attn.attention %query, %key, %value{operands} "
            f"{{{', '.join(attrs)}}}\n"
            f"      : {q}, {k}, {v} -> {r}\n"
            f"  return %0 : {r}\n}}\n")


def attention(q, k, v, *, normalizer="softmax", pattern=None, scale=None,
              alpha=None, features=None, seed=None, orthogonal=False,
              eps=None, qk_norm_eps=None, bias=None, gate=None, segments=None,
              key_segments=None, projection=None, threads=None, out=None):
    """Attention of q [B, Hq, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv]
    (NumPy arrays or CPU torch tensors of f32, f16, or bf16 (torch)):
    returns [B, Hq, Lq, Dv] of the same kind (docs/Semantics.md).

    normalizer: "softmax"; a pointwise function "relu", "relu2", "gelu",
        "softplus", "identity", "relu6", "sigmoid" (with alpha=); a feature
        map "elu_plus_one" (or "linear"), "linear_relu", "favor" (with
        features=, seed=, orthogonal=, or projection=); or the MLIR spelling.
    pattern: None (every key), "causal", "segments", "causal_segments", a
        helper's result (attn_opt.window(64), attn_opt.union(...)), or the
        MLIR spelling ("#attn.window<before = 64, after = 0>").
    segments / key_segments: [B, Lq] / [B, Lk] int32 or int64 ids.
    Each signature (dtypes, head counts and dims, attributes, operands) is
    compiled once; batch and lengths are dynamic (except with the block
    tables #attn.block and #attn.random, compiled per length).
    """
    tensors = [check_array(q, "q"), check_array(k, "k"), check_array(v, "v")]
    t = dtype_name(q)
    if t not in _elem:
        raise TypeError(f"q has dtype {q.dtype}; attention takes float32, "
                        f"float16 or bfloat16")
    for name, x in (("k", k), ("v", v)):
        if dtype_name(x) != t:
            raise TypeError(f"{name} has dtype {x.dtype}, q has {q.dtype}")
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"q, k and v must have rank 4 [B, H, L, D]; got "
                         f"ranks {q.ndim}, {k.ndim}, {v.ndim}")
    b, hq, lq, d = tensors[0][1]
    _, hkv, lk, dk = tensors[1][1]
    dv = tensors[2][1][3]
    if k.shape[0] != b or v.shape[0] != b:
        raise ValueError(f"batch sizes differ: q {b}, k {k.shape[0]}, "
                         f"v {v.shape[0]}")
    if v.shape[1] != hkv or v.shape[2] != lk:
        raise ValueError(f"k {tuple(k.shape)} and v {tuple(v.shape)} differ "
                         f"in heads or length")
    if dk != d:
        raise ValueError(f"q and k head dims differ: {d} and {dk}")
    if hkv == 0 or hq % hkv:
        raise ValueError(f"the query heads ({hq}) are not a multiple of the "
                         f"key/value heads ({hkv})")
    bias_key = None
    if bias is not None:
        tensors.append(_operand(bias, "bias", t))
        if bias.ndim != 4 or bias.shape[0] not in (1, b) or \
                bias.shape[1] not in (1, hq) or bias.shape[2:] != (lq, lk):
            raise ValueError(f"bias must be [B or 1, Hq or 1, Lq, Lk] = "
                             f"[{b} or 1, {hq} or 1, {lq}, {lk}]; got "
                             f"{tuple(bias.shape)}")
        bias_key = ("1" if bias.shape[0] == 1 else "?",
                    "1" if bias.shape[1] == 1 else str(hq))
    if gate is not None:
        tensors.append(_operand(gate, "gate", t))
        if tuple(gate.shape) != (b, hq, lq, dv):
            raise ValueError(f"gate must be [B, Hq, Lq, Dv] = "
                             f"{(b, hq, lq, dv)}; got {tuple(gate.shape)}")
    seg_key = kseg_key = None
    if key_segments is not None and segments is None:
        raise ValueError("key_segments needs segments")
    if segments is not None:
        if key_segments is None and lq != lk:
            raise ValueError("segments with Lq != Lk need key_segments")
        if key_segments is None:
            key_segments = segments
        for name, ids, length in (("segments", segments, lq),
                                  ("key_segments", key_segments, lk)):
            tensors.append(check_array(ids, name))
            if dtype_name(ids) not in ("i32", "i64"):
                raise TypeError(f"{name} must be int32 or int64 ids")
            if tuple(ids.shape) != (b, length):
                raise ValueError(f"{name} must be [B, L] = {(b, length)}; "
                                 f"got {tuple(ids.shape)}")
        seg_key, kseg_key = dtype_name(segments), dtype_name(key_segments)
    proj_key = None
    if projection is not None:
        tensors.append(_operand(projection, "projection", t))
        if projection.ndim != 2 or projection.shape[1] != d:
            raise ValueError(f"projection must be [features, D = {d}]; got "
                             f"{tuple(projection.shape)}")
        proj_key = tuple(projection.shape)

    attrs = (normalizer, alpha, features, seed, orthogonal, eps, pattern)
    spelled = _spelled.get(attrs)
    if spelled is None:
        pattern_attr = _pattern_attr(pattern)
        spelled = (_normalizer_attr(normalizer, alpha, features, seed,
                                    orthogonal, eps), pattern_attr,
                   # Block tables (#attn.block, #attn.random) are grids
                   # fixed at compile time: static lengths, one
                   # compilation per (Lq, Lk).
                   bool(pattern_attr) and ("#attn.block<" in pattern_attr or
                                           "#attn.random<" in pattern_attr))
        _spelled[attrs] = spelled
    if spelled[1] and "#attn.segments" in spelled[1] and segments is None:
        raise ValueError(f"pattern {spelled[1]} needs segments= ids")
    key = (t, hq, hkv, d, dv, spelled[0], spelled[1], scale, qk_norm_eps,
           bias_key, gate is not None, seg_key, kseg_key, proj_key,
           (lq, lk) if spelled[2] else None)
    fn = _functions.get(key)
    if fn is None:
        with _functions_lock:
            fn = _functions.get(key)
            if fn is None:
                fn = compile(_build(key)).attention
                _functions[key] = fn
    if threads is not None:
        fn.library.set_num_threads(threads)
    if out is None:
        out = empty_like_kind(q, (b, hq, lq, dv), t)
        tensors.append((_data_pointer(out), (b, hq, lq, dv)))
    else:
        tensors.append(_operand(out, "out", t))
        if tuple(out.shape) != (b, hq, lq, dv):
            raise ValueError(f"out must be [B, Hq, Lq, Dv] = "
                             f"{(b, hq, lq, dv)}; got {tuple(out.shape)}")
    fn._call_checked(tensors)
    return out
