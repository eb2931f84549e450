# -*- Python -*-
# lit configuration of the attn-opt test suite.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "lib", "reference", "Inputs",
                   "reference.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%attn_lib_dir", config.attn_lib_dir))
config.substitutions.append(("%attn_src_root", config.attn_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# `not` and `count` at the start of a command come from PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Stock upstream tools by absolute path, so a test can name the one it means.
config.substitutions.append(
    ("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(
    ("%mlir_translate", os.path.join(config.llvm_tools_dir, "mlir-translate")))
config.substitutions.append(("%clang", os.path.join(config.llvm_tools_dir, "clang")))
config.substitutions.append(("%llvm_lib_dir", os.path.join(config.llvm_tools_dir, "..", "lib")))

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "attn-run", "attn-ref", "attn-launch", "attn-compile"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The Python package (build/python) and the interpreter it is tested with
# (Debian's python3, which has python3-numpy and python3-torch).
config.substitutions.append(("%attn_py3", config.attn_python))
config.substitutions.append(
    ("%attn_python_dir", os.path.join(config.attn_obj_root, "python")))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
config.substitutions.append(("%cc", config.attn_c_compiler))
import subprocess
for module in ("numpy", "torch"):
    try:
        if subprocess.run([config.attn_python, "-c", "import " + module],
                          capture_output=True, timeout=120).returncode == 0:
            config.available_features.add("python-" + module)
    except (OSError, subprocess.TimeoutExpired):
        pass
if shutil.which("cmake"):
    config.available_features.add("cmake")

# `asan`: a sanitizer build (scripts/sanitize.sh). Stock mlir-opt is not
# instrumented, so it cannot load the instrumented plugin.
if "Address" in getattr(config, "llvm_use_sanitizer", ""):
    config.available_features.add("asan")

# `cpu-avx512bf16`: this CPU has AVX512_BF16 (vdpbf16ps) and AVX-512F, so
# attn-run's kernels use bf16 dot products of pairs natively.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = set()
        for line in cpuinfo:
            if line.startswith("flags"):
                flags.update(line.split(":", 1)[1].split())
                break
    if {"avx512f", "avx512_bf16"} <= flags:
        config.available_features.add("cpu-avx512bf16")
except OSError:
    pass
config.substitutions.append(
    ("%llvm_objdump", os.path.join(config.llvm_tools_dir, "llvm-objdump")))

# GPU features. `ptxas`: the CUDA toolkit's assembler checks generated PTX.
# `cuda-gpu`: attn-run can run kernels on an NVIDIA GPU here.
ptxas = os.path.join(config.cuda_dir, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
config.substitutions.append(("%cuda_dir", config.cuda_dir))
config.substitutions.append(
    ("%ptxas_check", "python3 " + os.path.join(
        config.attn_src_root, "utils", "ptxas-check.py") +
     " --ptxas " + ptxas))
import subprocess
try:
    probe = subprocess.run(
        [os.path.join(config.attn_tools_dir, "attn-run"), "--probe-cuda"],
        capture_output=True, text=True, timeout=60)
    if probe.returncode == 0:
        config.available_features.add("cuda-gpu")
    lit_config.note(probe.stdout.strip())
except (OSError, subprocess.TimeoutExpired) as e:
    lit_config.note("cuda: probe failed: " + str(e))
# `mpi`: MPICH's launcher (Debian's mpiexec may be Open MPI's; the
# generated code speaks MPICH's ABI), for sequence-parallel attention.
import shutil
mpiexec = shutil.which("mpiexec.hydra") or shutil.which("mpiexec.mpich")
if mpiexec:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpiexec", mpiexec))
    # Compiling and linking a C program against MPICH (c-abi.test).
    for name, flag in (("%mpich_cflags", "--cflags"),
                       ("%mpich_libs", "--libs")):
        try:
            flags = subprocess.run(["pkg-config", flag, "mpich"],
                                   capture_output=True, text=True,
                                   timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            flags = ""
        config.substitutions.append(
            (name, flags or ("-I/usr/include/x86_64-linux-gnu/mpich"
                             if flag == "--cflags" else "-lmpich")))
    # MPICH loads UCX, whose libucm patches mmap's machine code when it is
    # loaded; in a sanitized process (ASan intercepts mmap) that patch
    # crashes. Its mmap hooks serve RDMA registration caches, which one
    # machine's shared memory does not use.
    if "asan" in config.available_features:
        config.environment["UCX_MEM_MMAP_HOOK_MODE"] = "none"
# `mpi4py-openmpi`: the Python package's sequence_parallel= with Debian's
# mpi4py, which is built on Open MPI (launched by its mpiexec; as root it
# must be allowed to run, and 1-4 ranks oversubscribe 2 cores).
mpiexec_openmpi = shutil.which("mpiexec.openmpi")
if mpiexec_openmpi:
    try:
        vendor = subprocess.run(
            [config.attn_python, "-c",
             "import mpi4py.MPI as M; print(M.get_vendor()[0])"],
            capture_output=True, text=True, timeout=120).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        vendor = ""
    if vendor == "Open MPI":
        config.available_features.add("mpi4py-openmpi")
        config.substitutions.append(
            ("%openmpiexec",
             mpiexec_openmpi + " --oversubscribe" +
             (" --allow-run-as-root" if os.geteuid() == 0 else "")))
# CUDA_HOME for the pipeline's libdevice lookup.
config.environment["CUDA_HOME"] = config.cuda_dir
