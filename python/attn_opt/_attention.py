"""attn_opt.attention: the attn.attention op from keywords."""

import re
import threading

from . import _capabilities, _mods
from ._library import (_check_no_overlap, check_array, compile, dtype_name,
                       empty_like_kind, is_torch_tensor)


def _operand(x, name, dtype, written=False):
    """check_array, and the element type of q."""
    checked = check_array(x, name, written)
    if dtype_name(x) != dtype:
        raise TypeError(f"{name} has dtype {x.dtype}; q's is {dtype}")
    return checked


def _data_pointer(x):
    return x.data_ptr() if is_torch_tensor(x) else x.ctypes.data

_POINTWISE = ("relu", "relu2", "gelu", "softplus", "identity", "relu6",
              "sigmoid", "gelu_tanh")
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


def _signature(key):
    """The arguments, operand list, attribute dictionary and q, k, v and
    result types of one signature (dynamic batch and lengths, but for the
    static lengths of block layouts)."""
    (t, hq, hkv, d, dv, norm, pattern, scale, qk_eps, bias, gate, seg, kseg,
     proj, lengths, mods) = key
    bs = "?"
    lq, lk = ("?", "?") if lengths is None else (str(lengths[0]),
                                                 str(lengths[1]))
    q = _tensor([bs, str(hq), lq, str(d)], t)
    k = _tensor([bs, str(hkv), lk, str(d)], t)
    v = _tensor([bs, str(hkv), lk, str(dv)], t)
    r = _tensor([bs, str(hq), lq, str(dv)], t)
    args = [f"%query: {q}", f"%key: {k}", f"%value: {v}"]
    operands, grads = "", []
    if bias is not None:
        bt = _tensor([bias[0] if bias[0] == "1" else bs, bias[1], lq, lk], t)
        args.append(f"%bias: {bt}")
        operands += f" bias(%bias : {bt})"
        grads.append(("bias", bt))
    if gate:
        args.append(f"%gate: {r}")
        operands += f" gate(%gate : {r})"
        grads.append(("gate", r))
    if seg:
        st = f"tensor<?x{lq}x{seg}>"
        args.append(f"%segments: {st}")
        operands += f" segments(%segments : {st})"
    if kseg:
        st = f"tensor<?x{lk}x{kseg}>"
        args.append(f"%key_segments: {st}")
        operands += f" key_segments(%key_segments : {st})"
    if proj is not None:
        pt = _tensor([str(proj[0]), str(proj[1])], t)
        args.append(f"%projection: {pt}")
        operands += f" projection(%projection : {pt})"
    region_text = ""
    if mods is not None:
        cap_args, clause, region_text = _mods.regions(mods)
        args += cap_args
        operands += clause
    attrs = [f"normalizer = {norm}"]
    if pattern is not None:
        attrs.append(f"pattern = {pattern}")
    if scale is not None:
        attrs.append(f"scale = {_float(scale)} : f32")
    if qk_eps is not None:
        attrs.append(f"qk_norm_eps = {_float(qk_eps)} : f32")
    return (args, operands, "{" + ", ".join(attrs) + "}", (q, k, v, r), grads,
            region_text)


def _build(key, order=None):
    """MLIR source of one signature (dynamic batch and lengths); with an
    `order` ("contiguous" or "zigzag"), sequence-parallel: query, key, value
    and result sharded along the sequence over a 1-D grid of the ranks
    (docs/SequenceParallel.md)."""
    args, operands, attrs, (q, k, v, r), _, regions = _signature(key)
    if order is None:
        return (f"func.func @attention({', '.join(args)}) -> {r} {{\n"
                f"  %0 = attn.attention %query, %key, %value{operands} "
                f"{attrs}\n"
                f"      : {q}, {k}, {v} -> {r}{regions}\n"
                f"  return %0 : {r}\n}}\n")
    attrs = attrs[:-1] + f', attn.sequence_order = "{order}"}}'
    return ("shard.grid @ranks(shape = ?)\n"
            f"func.func @attention({', '.join(args)}) -> {r} {{\n"
            "  %s = shard.sharding @ranks split_axes = [[], [], [0]] "
            ": !shard.sharding\n"
            f"  %qs = shard.shard %query to %s : {q}\n"
            f"  %ks = shard.shard %key to %s : {k}\n"
            f"  %vs = shard.shard %value to %s : {v}\n"
            f"  %0 = attn.attention %qs, %ks, %vs{operands} {attrs}\n"
            f"      : {q}, {k}, {v} -> {r}{regions}\n"
            f"  %1 = shard.shard %0 to %s : {r}\n"
            f"  return %1 : {r}\n}}\n")


def _features(key, captured, dynamic):
    """The feature keys (_capabilities.FEATURES) the module of signature
    `key` uses: what AttentionProblem's getFeatures reads off its op."""
    (t, hq, hkv, d, dv, norm, pattern, scale, qk_eps, bias, gate, seg, kseg,
     proj, lengths, mods) = key
    used = {"normalizer:" + re.match(r"#attn\.(\w+)", norm).group(1)}
    used.update("pattern:" + p for p in re.findall(r"#attn\.(\w+)",
                                                  pattern or ""))
    for present, feature in ((scale is not None, "attribute:scale"),
                             (qk_eps is not None, "attribute:qk_norm_eps"),
                             (bias is not None, "operand:bias"),
                             (gate, "operand:gate"),
                             (seg, "operand:segments"),
                             (kseg, "operand:key_segments"),
                             (proj is not None, "operand:projection"),
                             (bool(captured), "operand:captures"),
                             (t != "f32", "shape:" + t),
                             (hq != hkv, "shape:grouped_heads"),
                             (dynamic, "shape:dynamic_batch"),
                             (dynamic, "shape:dynamic_lengths")):
        if present:
            used.add(feature)
    if mods is not None:
        used.update(f"region:{r}" for r in _mods.regions_used(mods))
    return used


def _refusal(generator, used):
    """Why `generator` (its name in _capabilities, the compiler's one list
    of what each generator supports) does not take an attention using the
    feature keys `used`, or None; as Capability::refusal does."""
    features = _capabilities.FEATURES
    profiles, conflicts = _capabilities.GENERATORS[generator]
    normalizer = next(k for k in features
                      if k in used and k.startswith("normalizer:"))
    profile = profiles.get(normalizer.split(":", 1)[1])
    if profile is None:
        return features[normalizer][2]
    for k in features:
        if k in used and k not in profile:
            other = any(k in p for p in profiles.values())
            return features[k][2] + (" with " + features[normalizer][2]
                                     if other else "")
    for a, b in conflicts:
        if a in used and b in used:
            return features[a][2] + " with " + features[b][2]
    return None


def _mpi_handle(comm):
    """The C handle (an integer) and attn-compile's --mpi of an mpi4py
    communicator."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise TypeError("sequence_parallel takes an mpi4py communicator, "
                        "and mpi4py cannot be imported") from e
    if not isinstance(comm, MPI.Comm):
        raise TypeError(f"sequence_parallel takes an mpi4py communicator, "
                        f"not {type(comm).__name__}")
    if comm == MPI.COMM_NULL:
        raise ValueError("sequence_parallel got MPI.COMM_NULL")
    vendor = MPI.get_vendor()[0]
    if vendor not in ("Open MPI", "MPICH"):
        raise ValueError(f"sequence_parallel: mpi4py is built on {vendor}; "
                         f"attn-opt calls MPICH or Open MPI")
    return MPI._handleof(comm), ("openmpi" if vendor == "Open MPI"
                                 else "mpich")


_FLOATS = ("f32", "f16", "bf16")


def _float_captures(key):
    """The MLIR types of the floating-point captured tensors of signature
    `key`'s regions (in order): those with gradients."""
    mods = key[15]
    if mods is None:
        return []
    return ["tensor<" + "x".join("?" * rank) + f"x{elem}>"
            for elem, rank in mods[1] if elem in _FLOATS]


def _build_grad(key, capture_grads=False, projection_grad=False, order=None):
    """MLIR source of the forward and backward entries of one signature,
    with dynamic batch and lengths as attention()'s own (one compilation
    serves every length: the fused backward classifies its blocks at run
    time): @forward returns the attention (and, for softmax, its
    log-sum-exp, which the backward reads with the output instead of
    recomputing them); @backward takes the arguments, the saved output
    (and log-sum-exp) and the output's cotangent, and returns the gradients
    of query, key, value (and bias, gate; with `projection_grad`, that of
    the FAVOR+ projection; with `capture_grads`, those of the
    floating-point tensors the score region captures). With an `order`,
    sequence-parallel as _build's: query, key, value, the output, its
    log-sum-exp and cotangent, and the gradients of query, key and value
    sharded along the sequence (attn-partition-sequence's backward ring)."""
    args, operands, attrs, (q, k, v, r), grads, regions = _signature(key)
    softmax = key[5] == "#attn.softmax"
    lengths = key[14]
    lse = _tensor(["?", str(key[1]), "?" if lengths is None
                   else str(lengths[0])], "f32")
    fwd_results = f"{r}, {lse}" if softmax else r
    qkv, shard, grid = "%query, %key, %value", "", ""
    if order is not None:
        attrs = attrs[:-1] + f', attn.sequence_order = "{order}"}}'
        grid = "shard.grid @ranks(shape = ?)\n"
        shard = ("  %s = shard.sharding @ranks split_axes = [[], [], [0]] "
                 ": !shard.sharding\n"
                 f"  %qs = shard.shard %query to %s : {q}\n"
                 f"  %ks = shard.shard %key to %s : {k}\n"
                 f"  %vs = shard.shard %value to %s : {v}\n")
        qkv = "%qs, %ks, %vs"

    def sharded(name, value, t):
        # `value` through a shard.shard named `name` (sequence-parallel).
        if order is None:
            return value, ""
        return f"%{name}", f"  %{name} = shard.shard {value} to %s : {t}\n"
    o0, so0 = sharded("o0", "%0#0" if softmax else "%0", r)
    o1, so1 = sharded("o1", "%0#1", lse) if softmax else ("", "")
    src = (grid +
           f"func.func @forward({', '.join(args)}) -> ({fwd_results}) {{\n"
           + shard +
           f"  %0{':2' if softmax else ''} = attn.attention {qkv}"
           f"{operands} {attrs}\n"
           f"      : {q}, {k}, {v} -> {fwd_results}{regions}\n" + so0 + so1 +
           f"  return {f'{o0}, {o1}' if softmax else o0} : {fwd_results}\n"
           f"}}\n")
    bargs = list(args)
    saved = ""
    pre = shard
    if softmax:
        bargs += [f"%output: {r}", f"%lse: {lse}"]
        out, s_out = sharded("out_s", "%output", r)
        lse_v, s_lse = sharded("lse_s", "%lse", lse)
        pre += s_out + s_lse
        saved = f" saved_output({out} : {r}) saved_lse({lse_v} : {lse})"
    bargs.append(f"%d_output: {r}")
    d_out, s_d = sharded("d_s", "%d_output", r)
    pre += s_d
    gtypes = [q, k, v] + [gt for _, gt in grads]
    optional = "".join(f" {name}({gt})" for name, gt in grads)
    if projection_grad:
        pt = _tensor([str(n) for n in key[13]], key[0])
        gtypes.append(pt)
        optional += f" projection({pt})"
    if capture_grads:
        gtypes += _float_captures(key)
        optional += f" captures({', '.join(_float_captures(key))})"
    n = len(gtypes)
    rets, post = [], ""
    for i, t in enumerate(gtypes):
        value, line = sharded(f"g{i}", f"%1#{i}", t) if i < 3 else \
            (f"%1#{i}", "")
        rets.append(value)
        post += line
    src += (f"func.func @backward({', '.join(bargs)}) -> "
            f"({', '.join(gtypes)}) {{\n" + pre +
            f"  %0 = attn.attention {qkv}{operands} {attrs}\n"
            f"      : {q}, {k}, {v} -> {r}{regions}\n"
            f"  %1:{n} = attn.attention_grad %0, {d_out}{saved}\n"
            f"      : {r}, {r} -> {q}, {k}, {v}{optional}\n" + post +
            f"  return {', '.join(rets)} : "
            f"{', '.join(gtypes)}\n}}\n")
    return src


def _needs_grad(*tensors):
    """True if a torch tensor among `tensors` requires a gradient and
    gradients are being recorded."""
    torch = _torch_module()
    if torch is None or not torch.is_grad_enabled():
        return False
    return any(is_torch_tensor(x) and x.requires_grad for x in tensors
               if x is not None)


def _torch_module():
    import sys
    return sys.modules.get("torch")


_grad_functions = {}


def _grad_library(key, learned=(False, False), sharded=None):
    """The library of _build_grad(key, *learned): `learned` says whether
    the projection's and the captures' gradients are asked for; `sharded`
    is None or (sequence order, attn-compile's --mpi, communicator handle)
    for sequence parallelism (the library then runs on that
    communicator)."""
    order, mpi = sharded[:2] if sharded else (None, None)
    lib = _grad_functions.get((key, learned, order, mpi))
    if lib is None:
        with _functions_lock:
            lib = _grad_functions.get((key, learned, order, mpi))
            if lib is None:
                lib = compile(_build_grad(key, learned[1], learned[0], order),
                              **({"mpi": mpi} if mpi else {}))
                _grad_functions[(key, learned, order, mpi)] = lib
    if sharded:
        lib.set_communicator(sharded[2])
    return lib


def _autograd_function():
    """attn_opt's torch.autograd.Function (made once torch is imported)."""
    global _AttentionFunction
    if _AttentionFunction is not None:
        return _AttentionFunction
    torch = _torch_module()

    class AttentionFunction(torch.autograd.Function):
        """Forward through @forward (saving the output and, for softmax,
        its log-sum-exp), backward through @backward (attn.attention_grad:
        the fused backward kernels where they apply)."""

        @staticmethod
        def forward(ctx, q, k, v, bias, gate, call, *learned):
            # (`learned`: the FAVOR+ projection when it requires a
            # gradient, then the floating-point captured tensors of the
            # score region when one does: inputs here so that autograd
            # reaches them; `passive` holds them detached. call[3] says
            # which.)
            key, passive, threads, which, sharded = call
            lib = _grad_library(key, which, sharded)
            if threads is not None:
                lib.set_num_threads(threads)
            inputs = [x.detach().contiguous()
                      for x in (q, k, v, bias, gate) if x is not None]
            results = lib.forward(*inputs, *passive)
            saved = results if isinstance(results, tuple) else (results,)
            ctx.call = call
            ctx.has = (bias is not None, gate is not None)
            ctx.save_for_backward(*inputs, *saved)
            return saved[0]

        @staticmethod
        def backward(ctx, d_output):
            if torch.is_grad_enabled():
                # create_graph=True (double backward, a gradient penalty):
                # these gradients would be constants to autograd, and the
                # second-order terms silently zero.
                raise RuntimeError(
                    "attn_opt.attention has no second-order gradient: its "
                    "backward was called with create_graph=True (a "
                    "gradient penalty or double backward); compute that "
                    "part with PyTorch's attention")
            key, passive, threads, which, sharded = ctx.call
            lib = _grad_library(key, which, sharded)
            if threads is not None:
                lib.set_num_threads(threads)
            tensors = ctx.saved_tensors
            n_in = 3 + sum(ctx.has)
            inputs, saved = tensors[:n_in], tensors[n_in:]
            softmax = key[5] == "#attn.softmax"
            d = d_output.to(inputs[0].dtype).contiguous()
            args = list(inputs) + list(passive)
            if softmax:
                args += list(saved)
            grads = lib.backward(*args, d)
            grads = list(grads) if isinstance(grads, tuple) else [grads]
            out = list(grads[:3])
            rest = iter(grads[3:])
            out.append(next(rest) if ctx.has[0] else None)
            out.append(next(rest) if ctx.has[1] else None)
            learned = list(rest)
            learned = [g if need else None for g, need in
                       zip(learned, ctx.needs_input_grad[6:])]
            return (*out, None, *learned)

    _AttentionFunction = AttentionFunction
    return AttentionFunction


_AttentionFunction = None


def _differentiable(q, k, v, bias, gate, kwargs):
    """attention() of torch tensors that require gradients: through
    AttentionFunction. float64 tensors (torch.autograd.gradcheck's dtype)
    are computed in f32, attn-opt's widest type, and returned in float64
    (the casts are differentiable)."""
    torch = _torch_module()
    if kwargs.pop("out") is not None:
        raise ValueError("out= does not apply to tensors that require "
                         "gradients")
    f64 = q.dtype == torch.float64
    # Strided views (a transpose of heads) are copied: differentiably, so
    # their gradients flow back through the copy as PyTorch's own ops do.
    cast = (lambda x: None if x is None else x.to(torch.float32).contiguous()) \
        if f64 else (lambda x: None if x is None else x.contiguous())
    for name in ("projection",):
        if kwargs[name] is not None and f64:
            kwargs[name] = kwargs[name].to(torch.float32)
    o = attention(cast(q), cast(k), cast(v), bias=cast(bias), gate=cast(gate),
                  _grad=True, **kwargs)
    return o.to(torch.float64) if f64 else o


def attention(q, k, v, *, normalizer="softmax", pattern=None, scale=None,
              alpha=None, features=None, seed=None, orthogonal=False,
              eps=None, qk_norm_eps=None, bias=None, gate=None, segments=None,
              key_segments=None, projection=None, score_mod=None,
              mask_mod=None, threads=None, out=None, sequence_parallel=None,
              sequence_order="contiguous", _grad=None):
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
    score_mod(score, b, h, q_idx, kv_idx) -> score and
    mask_mod(b, h, q_idx, kv_idx) -> bool: FlexAttention's mods, traced
        into the op's score and mask regions (docs/FlexAttention.md):
        arithmetic, comparisons, &, |, ~, %, //, abs, torch.where,
        torch.tanh, torch.exp, ... and indexing of captured torch tensors
        (or attn_opt.capture(array)); compiled once per traced IR.
    sequence_parallel: an mpi4py communicator: every rank calls with its
        own chunk of the sequence (q, k, v rows of the same positions;
        chunks may differ in length) and gets its rows of the result
        (docs/SequenceParallel.md). sequence_order: "contiguous" (rank r
        holds the r-th chunk) or "zigzag" (rank r holds chunks r and
        2P-1-r of 2P, concatenated: balances causal work). Tensors that
        require gradients get theirs (the backward ring: each rank its rows
        of dQ, dK, dV; a captured bias table's or a FAVOR+ projection's
        summed over the ranks); what attn-partition-sequence
        supports (attn_opt._capabilities,
        docs/Kernels.md): segments= / key_segments= are the whole
        sequence's ids on every rank, as are the mods' captured tensors
        (their q_idx and kv_idx are positions in the whole sequence).
    Each signature (dtypes, head counts and dims, attributes, operands) is
    compiled once; batch and lengths are dynamic (except with the block
    tables #attn.block and #attn.random, compiled per length).
    """
    if sequence_parallel is not None:
        if sequence_order not in ("contiguous", "zigzag"):
            raise ValueError(f"sequence_order is 'contiguous' or 'zigzag', "
                             f"not {sequence_order!r}")

    def differentiable():
        return _differentiable(q, k, v, bias, gate, dict(
            normalizer=normalizer, pattern=pattern, scale=scale, alpha=alpha,
            features=features, seed=seed, orthogonal=orthogonal, eps=eps,
            qk_norm_eps=qk_norm_eps, segments=segments,
            key_segments=key_segments, projection=projection,
            score_mod=score_mod, mask_mod=mask_mod, threads=threads,
            out=out, sequence_parallel=sequence_parallel,
            sequence_order=sequence_order))
    if _grad is None and _needs_grad(q, k, v, bias, gate):
        return differentiable()
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
    if sequence_parallel is not None and lq != lk:
        raise ValueError(f"sequence_parallel: q and k hold the same "
                         f"positions, but their chunks have {lq} and {lk} "
                         f"rows")
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
            if sequence_parallel is not None:
                # Replicated: every rank passes the whole sequence's ids
                # (their length is checked against the chunks' sum).
                if ids.ndim != 2 or ids.shape[0] != b:
                    raise ValueError(f"{name} must be [B, L] (the whole "
                                     f"sequence) with B = {b}; got "
                                     f"{tuple(ids.shape)}")
            elif tuple(ids.shape) != (b, length):
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
    mods_key = None
    captured = []
    if score_mod is not None or mask_mod is not None:
        mods_key, captured = _mods.trace(score_mod, mask_mod)
        for n, c in enumerate(captured):
            tensors.append(check_array(c, f"captured tensor {n}"))
    # Gradients reach q, k, v, bias, gate, a FAVOR+ projection and the
    # floating-point tensors a score_mod captures (a mask_mod's reads have
    # none: a mask is piecewise constant).
    projection_grad = _needs_grad(projection)
    capture_grads = score_mod is not None and _needs_grad(*captured)
    if projection_grad and _grad is None:
        return differentiable()
    if capture_grads and _grad is None:
        # (Only a captured tensor, a learned bias table, trains.)
        return differentiable()

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
           (lq, lk) if spelled[2] else None, mods_key)
    handle = mpi = order = None
    if sequence_parallel is not None:
        why = _refusal("partition-sequence", _features(
            key, captured, dynamic=True))
        if why is not None:
            raise ValueError(f"sequence_parallel: {why} is not supported "
                             f"with a sharded sequence "
                             f"(attn-partition-sequence)")
        handle, mpi = _mpi_handle(sequence_parallel)
        order = sequence_order
        if capture_grads and any(dtype_name(c) != "f32" for c in captured
                                 if dtype_name(c) in _FLOATS):
            raise ValueError("sequence_parallel: the gradient of a captured "
                             "tensor that is not float32 is not supported")
    if _grad is not None:
        # Differentiable: one compilation of the forward and backward for
        # every batch and length, as without gradients.
        # (The floating-point captures are the Function's inputs when one
        # requires a gradient: the backward returns theirs.)
        floats = [c for c in captured if dtype_name(c) in _FLOATS] \
            if capture_grads else []
        detach = (lambda x: x.detach() if is_torch_tensor(x) else x)
        passive = [detach(x) for x in (segments if seg_key else None,
                                       key_segments if kseg_key else None,
                                       projection) if x is not None] + [
            detach(c) for c in captured]
        learned = ([projection] if projection_grad else []) + floats
        call = (key, passive, threads, (projection_grad, capture_grads),
                (order, mpi, handle) if order else None)
        return _autograd_function().apply(q, k, v, bias, gate, call, *learned)
    fn = _functions.get((key, order, mpi))
    if fn is None:
        with _functions_lock:
            fn = _functions.get((key, order, mpi))
            if fn is None:
                fn = compile(_build(key, order), **(
                    {"mpi": mpi} if mpi else {})).attention
                _functions[(key, order, mpi)] = fn
    if threads is not None:
        fn.library.set_num_threads(threads)
    if sequence_parallel is not None:
        fn.library.set_communicator(handle)
    if out is None:
        out = empty_like_kind(q, (b, hq, lq, dv), t)
        tensors.append((_data_pointer(out), (b, hq, lq, dv)))
    else:
        tensors.append(_operand(out, "out", t, written=True))
        if tuple(out.shape) != (b, hq, lq, dv):
            raise ValueError(f"out must be [B, Hq, Lq, Dv] = "
                             f"{(b, hq, lq, dv)}; got {tuple(out.shape)}")
        _check_no_overlap([out], [q, k, v], ["q", "k", "v"])
    fn._call_checked(tensors)
    return out
