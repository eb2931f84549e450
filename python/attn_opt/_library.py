"""Compiling modules with attn-compile, the disk cache, calling entries."""

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings

import numpy as np


class AttnOptError(RuntimeError):
    """attn-compile failed, or an entry reported an error."""


# dtype name of the C ABI -> NumPy dtype (bf16 has none: torch only).
_NUMPY_DTYPES = {
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "f16": np.dtype(np.float16), "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
}
_TORCH_DTYPE_NAMES = {
    "float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64",
}
_NUMPY_DTYPE_NAMES = {v: k for k, v in _NUMPY_DTYPES.items()}

_STATUS_SHAPE, _STATUS_VALUE, _STATUS_MEMORY = 1, 2, 3


def _raise_for_status(status, library):
    """Raises the error of a failed call: MemoryError when the generated
    code could not allocate, else ValueError, with the library's message."""
    if status == 0:
        return
    if status == _STATUS_MEMORY:
        raise MemoryError(library.last_error())
    raise ValueError(library.last_error())


def _torch():
    """The torch module if it is imported (inputs can only be torch tensors
    then), else None."""
    return sys.modules.get("torch")


def is_torch_tensor(x):
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def dtype_name(x):
    """The C ABI's dtype name of an array or tensor, or None."""
    if isinstance(x, np.ndarray):
        return _NUMPY_DTYPE_NAMES.get(x.dtype)
    if is_torch_tensor(x):
        return _TORCH_DTYPE_NAMES.get(str(x.dtype).replace("torch.", ""))
    return None


def check_array(x, what, written=False):
    """Checks that `x` is a contiguous, aligned NumPy array or CPU torch
    tensor (and, when the call writes it, a writable one); returns (data
    pointer, shape tuple)."""
    if isinstance(x, np.ndarray):
        if not x.flags.c_contiguous:
            raise ValueError(
                f"{what} is not C-contiguous (strides {x.strides}); attn_opt "
                f"does not copy inputs: pass np.ascontiguousarray({what})")
        if not x.flags.aligned:
            raise ValueError(
                f"{what} is not aligned to its {x.dtype.itemsize}-byte "
                f"elements (data at {x.ctypes.data:#x}); pass a copy "
                f"(np.array({what}))")
        if written and not x.flags.writeable:
            raise ValueError(f"{what} is read-only; the call writes it")
        return x.ctypes.data, x.shape
    if is_torch_tensor(x):
        if x.device.type != "cpu":
            raise ValueError(f"{what} is on {x.device}; attn_opt runs on the "
                             f"CPU: pass {what}.cpu()")
        if not x.is_contiguous():
            raise ValueError(
                f"{what} is not contiguous (strides {tuple(x.stride())}); "
                f"attn_opt does not copy inputs: pass {what}.contiguous()")
        if x.numel() and x.data_ptr() % x.element_size():
            raise ValueError(
                f"{what} is not aligned to its {x.element_size()}-byte "
                f"elements (data at {x.data_ptr():#x}); pass {what}.clone()")
        return x.data_ptr(), tuple(x.shape)
    raise TypeError(f"{what} must be a NumPy array or a torch tensor, not "
                    f"{type(x).__name__}")


def empty_like_kind(like, shape, dtype):
    """A new array of `shape` and C ABI dtype `dtype`: a torch tensor when
    `like` is one, else a NumPy array."""
    if is_torch_tensor(like):
        torch = _torch()
        return torch.empty(shape, dtype=getattr(
            torch, {v: k for k, v in _TORCH_DTYPE_NAMES.items()}[dtype]))
    if dtype not in _NUMPY_DTYPES:
        raise TypeError(f"NumPy has no {dtype}: use torch tensors for {dtype}")
    return np.empty(shape, _NUMPY_DTYPES[dtype])


def _byte_range(x):
    if isinstance(x, np.ndarray):
        return x.ctypes.data, x.ctypes.data + x.nbytes
    return x.data_ptr(), x.data_ptr() + x.numel() * x.element_size()


def _check_no_overlap(outs, args, names):
    """The generated code reads its arguments while it writes its results:
    a result buffer that shares memory with an argument (or another result)
    would give a wrong answer, so it is refused."""
    ranges = [_byte_range(a) for a in args]
    for i, o in enumerate(outs):
        lo, hi = _byte_range(o)
        if lo == hi:
            continue
        for name, (a_lo, a_hi) in zip(names, ranges):
            if lo < a_hi and a_lo < hi:
                raise ValueError(f"out shares memory with the argument {name}; "
                                 f"results need buffers of their own")
        for j in range(i):
            p_lo, p_hi = _byte_range(outs[j])
            if lo < p_hi and p_lo < hi:
                raise ValueError(f"out[{i}] shares memory with out[{j}]")
        ranges.append((lo, hi))


# -- attn-compile and the cache ---------------------------------------------

def _find_compiler():
    env = os.environ.get("ATTN_OPT_COMPILE")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    # Build tree: build/python/attn_opt; install: P/lib/python3/site-packages.
    for rel in ("../../bin", "../../../../bin"):
        path = os.path.normpath(os.path.join(here, rel, "attn-compile"))
        if os.access(path, os.X_OK):
            return path
    path = shutil.which("attn-compile")
    if path:
        return path
    raise AttnOptError("cannot find attn-compile: set ATTN_OPT_COMPILE or "
                       "put it on PATH")


def cache_dir():
    """Where compiled libraries are kept: $ATTN_OPT_CACHE_DIR, else
    $XDG_CACHE_HOME/attn-opt, else ~/.cache/attn-opt."""
    env = os.environ.get("ATTN_OPT_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "attn-opt")


def _compiler_identity(path):
    """Changes when attn-compile (or its run-time support) is rebuilt."""
    parts = [os.path.realpath(path)]
    bitcode = os.path.join(os.path.dirname(os.path.realpath(path)), "..",
                           "lib", "attn-opt", "kernel-runtime.bc")
    for p in (path, bitcode):
        try:
            st = os.stat(p)
            parts.append(f"{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return "|".join(parts)


_libraries = {}
_libraries_lock = threading.Lock()
# Compilations in this process (tests read it to see a cache hit).
compilations = 0


def compile(source, entry=None, threads=None, target="host", mpi="mpich"):
    """Compiles an attn module (MLIR text, or a path to a .mlir file) into a
    Library, reusing the disk cache (keyed by the source, the entries, the
    target and attn-compile itself).

    entry:   a function name or a list of names to export (default: every
             public function).
    threads: OpenMP threads of the library's calls (default: all cores).
    target:  attn-compile's --target (host, x86-64-v3, x86-64-v4, ...).
    mpi:     the MPI ABI of sequence-parallel modules, attn-compile's --mpi
             (mpich, or openmpi: mpi4py's MPI in Debian).

    With ATTN_OPT_OFFLINE=1 nothing is compiled: a library missing from the
    cache raises AttnOptError (deployments that ship a warm cache).

    Each cache entry holds a manifest with its key and the SHA-256 of its
    library: a damaged entry (truncated, replaced) is never loaded but
    compiled again (with ATTN_OPT_OFFLINE, an AttnOptError). A cache
    directory that cannot be written gives a RuntimeWarning and a library
    compiled into a private temporary directory.
    """
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and "\n" not in source
            and "{" not in source and os.path.isfile(source)):
        with open(source) as f:
            source = f.read()
    if not isinstance(source, str):
        raise TypeError("compile() takes MLIR text or a path to a .mlir file")
    entries = [] if entry is None else (
        [entry] if isinstance(entry, str) else list(entry))
    compiler = _find_compiler()
    key = hashlib.sha256("\0".join(
        [source, ",".join(entries), target, mpi,
         _compiler_identity(compiler)]).encode()).hexdigest()[:32]
    with _libraries_lock:
        lib = _libraries.get(key)
        if lib is None:
            lib = _load_or_compile(compiler, source, entries, target, mpi, key)
            _libraries[key] = lib
    if threads is not None:
        lib.set_num_threads(threads)
    return lib


_MANIFEST = "manifest.json"


def _file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _entry_problem(directory, key):
    """Why the cache entry `directory` cannot be loaded for `key` (None when
    it can): its manifest names the key and the SHA-256 of its library, so
    a truncated or replaced library is never loaded."""
    try:
        with open(os.path.join(directory, _MANIFEST)) as f:
            manifest = json.load(f)
        if manifest.get("key") != key:
            return "it was made for another module"
        if _file_digest(os.path.join(directory, "libkernels.so")) != \
                manifest.get("sha256"):
            return "its library does not match its manifest (truncated?)"
    except (OSError, ValueError, AttributeError) as e:
        return f"it cannot be read ({e})"
    return None


def _load_or_compile(compiler, source, entries, target, mpi, key):
    """The library of `key`: from the cache when its entry is sound; else
    compiled into the cache (a damaged entry is replaced); else, when the
    cache cannot be written, compiled into a private temporary directory
    (with a warning)."""
    global compilations
    directory = os.path.join(cache_dir(), key)
    path = os.path.join(directory, "libkernels.so")
    offline = os.environ.get("ATTN_OPT_OFFLINE", "") not in ("", "0")
    if os.path.exists(directory):
        problem = _entry_problem(directory, key)
        if problem is None:
            return Library(path)
        if offline:
            raise AttnOptError(f"ATTN_OPT_OFFLINE is set and the cache entry "
                               f"{directory} is damaged: {problem}")
        _remove_entry(directory)
    elif offline:
        raise AttnOptError(
            f"ATTN_OPT_OFFLINE is set and {directory} is not in "
            f"the cache: compile it once without it")
    try:
        _compile_into(compiler, source, entries, target, mpi, directory, key)
    except _CacheUnwritable as e:
        warnings.warn(f"attn_opt: the cache {cache_dir()} cannot be written "
                      f"({e.__cause__}); compiling into a temporary "
                      f"directory (set ATTN_OPT_CACHE_DIR)", RuntimeWarning,
                      stacklevel=3)
        private = tempfile.mkdtemp(prefix="attn-opt-")
        try:
            work = os.path.join(private, key)
            _compile_into(compiler, source, entries, target, mpi, work, key)
            compilations += 1
            # Loaded, the library needs its file no more.
            return Library(os.path.join(work, "libkernels.so"))
        finally:
            shutil.rmtree(private, ignore_errors=True)
    compilations += 1
    problem = _entry_problem(directory, key)
    if problem is not None:
        raise AttnOptError(f"the cache entry {directory} is damaged after "
                           f"compiling it: {problem}")
    return Library(path)


def _remove_entry(directory):
    """Moves a damaged entry out of the way (atomically: another process
    sees either it or nothing), then deletes it."""
    aside = f"{directory}.bad-{os.getpid()}-{threading.get_ident()}"
    try:
        os.rename(directory, aside)
    except OSError:
        return  # another process moved it, or the cache is read-only
    shutil.rmtree(aside, ignore_errors=True)


class _CacheUnwritable(Exception):
    """The cache directory cannot take a new entry."""


def _compile_into(compiler, source, entries, target, mpi, directory, key):
    try:
        os.makedirs(os.path.dirname(directory), exist_ok=True)
        # Build in a private directory, then rename: concurrent processes
        # never see a partial library.
        work = tempfile.mkdtemp(prefix=".tmp-",
                                dir=os.path.dirname(directory))
    except OSError as e:
        raise _CacheUnwritable() from e
    try:
        src = os.path.join(work, "kernels.mlir")
        with open(src, "w") as f:
            f.write(source)
        cmd = [compiler, src, "--prefix", "kernels", f"--target={target}",
               f"--mpi={mpi}",
               "-o", os.path.join(work, "libkernels.so"),
               "--header", os.path.join(work, "kernels.h")]
        for e in entries:
            cmd += ["--entry", e]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AttnOptError("attn-compile failed:\n" + proc.stderr.strip())
        with open(os.path.join(work, _MANIFEST), "w") as f:
            json.dump({"key": key, "sha256": _file_digest(
                os.path.join(work, "libkernels.so"))}, f)
        try:
            os.rename(work, directory)
        except OSError:
            if not os.path.exists(os.path.join(directory, "libkernels.so")):
                raise
    finally:
        if os.path.exists(work):
            shutil.rmtree(work, ignore_errors=True)


# -- Libraries and their entries --------------------------------------------

class Library:
    """A kernel library made by attn-compile: its entries as attributes."""

    def __init__(self, path, prefix="kernels"):
        self.path = path
        self._dll = ctypes.CDLL(path)
        sig = getattr(self._dll, prefix + "_signatures")
        sig.restype = ctypes.c_char_p
        self.signatures = json.loads(sig().decode())
        prefix = self.signatures["prefix"]
        self._last_error = getattr(self._dll, prefix + "_last_error")
        self._last_error.restype = ctypes.c_char_p
        self._set_threads = getattr(self._dll, prefix + "_set_num_threads")
        self._set_threads.argtypes = [ctypes.c_int32]
        self._num_threads = getattr(self._dll, prefix + "_num_threads")
        self._num_threads.restype = ctypes.c_int32
        self._set_max_memory = getattr(self._dll, prefix + "_set_max_memory")
        self._set_max_memory.argtypes = [ctypes.c_int64]
        self._set_communicator = getattr(self._dll,
                                         prefix + "_set_communicator")
        self._set_communicator.argtypes = [ctypes.c_int64]
        self.functions = {}
        for e in self.signatures["entries"]:
            self.functions[e["function"]] = Function(self, e)

    def __getattr__(self, name):
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"the library has no function {name!r} "
                             f"(it has {', '.join(functions) or 'none'})")

    def __getitem__(self, name):
        return self.functions[name]

    def last_error(self):
        return self._last_error().decode()

    def set_num_threads(self, n):
        self._set_threads(int(n))

    def num_threads(self):
        return self._num_threads()

    def set_communicator(self, handle):
        """The MPI communicator this thread's later calls of
        sequence-parallel entries use, as an integer handle (0:
        MPI_COMM_WORLD; an mpi4py communicator: MPI._handleof(comm))."""
        self._set_communicator(int(handle))

    def set_max_memory(self, n):
        """The most bytes the library's generated code may hold at once
        in its own buffers (0: no limit but the memory available); a call
        beyond it raises MemoryError."""
        self._set_max_memory(int(n))


class Function:
    """One entry: call it with arrays or tensors; returns the result (a
    tuple for several). `out=` gives result buffers to write into."""

    def __init__(self, library, signature):
        self.library = library
        self.signature = signature
        self.name = signature["function"]
        self._args = signature["args"]
        self._results = signature["results"]
        self._fn = getattr(library._dll, signature["symbol"])
        n = len(self._args) + len(self._results)
        self._fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)] * n
        self._fn.restype = ctypes.c_int32
        self._shape_types = [ctypes.c_int64 * len(t["shape"])
                             for t in self._args + self._results]

    def __repr__(self):
        def fmt(t):
            dims = ", ".join("?" if d < 0 else str(d) for d in t["shape"])
            return f"{t['name']}: {t['dtype']}[{dims}]"
        return (f"<attn_opt.Function {self.name}(" +
                ", ".join(fmt(t) for t in self._args) + ") -> (" +
                ", ".join(fmt(t) for t in self._results) + ")>")

    def __call__(self, *args, out=None):
        if len(args) != len(self._args):
            raise TypeError(f"{self.name}() takes {len(self._args)} arrays, "
                            f"got {len(args)}")
        params = []
        shapes = []
        for a, t, st in zip(args, self._args, self._shape_types):
            name = t["name"]
            ptr, shape = check_array(a, name)
            self._check_tensor(a, shape, t, name)
            shapes.append(shape)
            params += [ptr, st(*shape)]
        if out is None:
            outs = [empty_like_kind(args[0] if args else None,
                                    self._result_shape(r, shapes), r["dtype"])
                    for r in self._results]
        else:
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(self._results):
                raise TypeError(f"{self.name}() has {len(self._results)} "
                                f"results, out= gives {len(outs)}")
        for o, r, st in zip(outs, self._results,
                            self._shape_types[len(self._args):]):
            ptr, shape = check_array(o, "out", written=True)
            self._check_tensor(o, shape, r, "out")
            params += [ptr, st(*shape)]
        if out is not None:
            _check_no_overlap(outs, args, [t["name"] for t in self._args])
        _raise_for_status(self._fn(*params), self.library)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _call_checked(self, tensors):
        """The fast path of attention(): `tensors` holds the (pointer,
        shape) of every argument and result, already checked against the
        signature."""
        params = []
        for (ptr, shape), st in zip(tensors, self._shape_types):
            params.append(ptr)
            params.append(st(*shape))
        _raise_for_status(self._fn(*params), self.library)

    def _check_tensor(self, a, shape, t, what):
        if len(shape) != len(t["shape"]):
            raise ValueError(f"{what} has rank {len(shape)}; {self.name} "
                             f"takes rank {len(t['shape'])}")
        dtype = dtype_name(a)
        if dtype != t["dtype"]:
            raise TypeError(f"{what} has dtype {a.dtype}; {self.name} takes "
                            f"{t['dtype']}")
        for i, (got, want) in enumerate(zip(shape, t["shape"])):
            if want >= 0 and got != want:
                raise ValueError(f"dimension {i} of {what} is {got}; "
                                 f"{self.name} takes {want}")

    def _result_shape(self, r, shapes):
        dims = []
        for i, d in enumerate(r["shape"]):
            if d >= 0:
                dims.append(d)
                continue
            tie = r.get("size_of", [None] * len(r["shape"]))[i]
            if tie is None:
                raise ValueError(
                    f"cannot tell dimension {i} of {self.name}'s result "
                    f"{r['name']} from the arguments: pass out=")
            dims.append(shapes[tie[0]][tie[1]])
        return tuple(dims)
