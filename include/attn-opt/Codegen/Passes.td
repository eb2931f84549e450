//===- Passes.td - attn CPU code generation passes ---------*- tablegen -*-===//

#ifndef ATTN_PIPELINES_PASSES_TD
#define ATTN_PIPELINES_PASSES_TD

include "attn-opt/Conversion/CpuTargetOptions.td"
include "mlir/Pass/PassBase.td"

def AttnParallelizeLinalg : Pass<"attn-parallelize-linalg", "func::FuncOp"> {
  let summary = "Tile the outer parallel loops of linalg ops into scf.forall";
  let description = [{
    The threading step of the generic CPU lowering. Each linalg op on
    tensors is tiled along its leading parallel loops (those before the
    first reduction loop, never the innermost loop) with `scf.forall`: size
    1 for all but the last of them, which is cut into `chunks` pieces. The
    foralls become OpenMP work-sharing loops later in the pipeline; the
    untiled inner loops stay contiguous for LLVM's vectorizer.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel", "parallel",
                                      "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<1x8x1x4096x64xf32>, tensor<1x8x64x4096xf32>) ...
    ```

    becomes an `scf.forall` over `(b, kvHead, g, rowChunk)` holding the
    same generic on a `1x1x1x(4096/chunks)` slice.

    Ops are tiled when they run once per call: in the function body or
    under `scf.if` (such as the guards of the run-time size checks), not in
    loops. A dynamic size of the chunked loop gets the tile size
    `max(1, ceil(n / chunks))`, computed at run time.
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", /*default=*/"8",
           "pieces the last tiled loop is cut into">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnTileContractions : Pass<"attn-tile-contractions", "func::FuncOp"> {
  let summary = "Tile the contractions of a graph (matmuls) for threads";
  let description = [{
    The non-attention contractions of a graph (projections, MLPs:
    `linalg.matmul`, `linalg.batch_matmul`, contraction `linalg.generic`s;
    f32, static shapes, one M, N and K dim) are tiled with upstream's
    TilingInterface into an `scf.forall` over the batch dims (size 1) and M
    cut into pieces, each a multiple of `row-tile` rows: as many pieces as
    make `chunks` tasks with the batch and outer dims (a batch of 8 heads
    and `chunks = 8` leaves M whole, so each task packs its B panel once
    for all its rows) (the
    pipeline passes the register tile's rows of
    `attn-vectorize-contractions`, which takes the tiles after
    bufferization: 6 on AVX2, 14 on AVX-512). Other linalg ops are left to
    `attn-parallelize-linalg`.

    First, a `linalg.transpose` of a contraction's only result (into a
    fill) is folded into the contraction, whose output map is permuted: a
    projection that a graph transposes into heads (`[L, H, D] -> [H, L,
    D]`) writes heads first. Then M, N or K dims in groups of consecutive
    loops, contiguous in every operand, are collapsed into one. Remaining
    extra M or N dims are outer dims (tiles of 1): `n` is the output's last
    dim, `m` its innermost M dim.

    ```mlir
    %y = linalg.matmul ins(%x, %w : tensor<4096x512xf32>, tensor<512x2048xf32>)
                       outs(%z : tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
    ```

    becomes an `scf.forall` over 8 chunks of 512 rows, each a
    `linalg.matmul` of `512x512` by `512x2048`. A `linalg.fill` that
    initializes a contraction (also through a reshape of the collapse) is
    fused into each chunk (`attn-vectorize-contractions` folds it into the
    first K block).
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", /*default=*/"8",
           "tasks to make (M is cut into ceil(chunks / batch) pieces)">,
    Option<"rowTile", "row-tile", "int64_t", /*default=*/"8",
           "chunks are a multiple of this many rows">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnVectorizeContractions : Pass<"attn-vectorize-contractions",
                                     "func::FuncOp"> {
  let summary = "Register-tile and vectorize contractions on buffers";
  let description = [{
    After bufferization, each contraction `linalg` op on memrefs (f32, one
    M, N and K dim: the row chunks of `attn-tile-contractions`, and the
    contractions of reference lowerings that `attn-parallelize-linalg`
    tiled) becomes register tiles of `mr x nr` outputs: `nr` two vectors of
    `vector-width` lanes, `mr` as many rows as leave registers for the B
    row and a broadcast (`(vector-registers - 3) / 2`: 6 with AVX2's 16
    registers, 14 with AVX-512's 32).

    When the body is a plain multiply-add, B and the output are contiguous
    along N (N their last dim, unit stride) and N and K are static, the op
    becomes the broadcast-FMA micro-kernel (BLIS-style):

    ```
    for batch, k0 step KB, n1 step NC:
      pack B[k0 : k0+KB, n1 : n1+NC] panel by panel: [NC/nr][KB][nr]
      for M blocks of MC rows (whole tiles):
        pack A[block, k0 : k0+KB] tile by tile: [MC/mr][KB][lanes]  // (see below)
        for each panel p, m0 step mr in the M block:
          acc = k0 == 0 and a fill was folded ? splat(fill value)
                                               : C tile (mr x nr/lanes vectors)
          for k < KB (unrolled by k-tile): load the packed B row of p;
            per row i: acc[i] += broadcast(packed A[m0+i, k]) * B row
          C tile = acc
      the remaining M % mr rows: the same, one row at a time (A unpacked)
    the last N % nr columns: the op on them (loops, after the fill)
    ```

    `KB` is K up to the rows of a 32 KiB panel (512 with AVX2's 16-float
    panels, 256 with AVX-512's 32), else the largest power of two from
    there down to 16 that divides K (else K): the panel stays in L1. `NC`
    columns of B's K block take 2 MiB (a thread's share of L3), packed once
    per chunk; `MC` rows of A's K block take 256 KiB (L2) and are reused by
    every panel. (Unpacked, B's rows, N floats apart, fall into the same
    cache sets and every M tile fetches the panel again.) A's tile is
    packed as `lanes` rows (the last `lanes - mr` of them padding: M's last
    row again) of `lanes` K steps loaded as vectors and transposed in
    registers (log2(lanes) stages of two-source `vector.shuffle`s: 64
    shuffle instructions for 16 x 16), each result one packed K step of
    `lanes` floats. When A is not contiguous along K or KB is not a
    multiple of `lanes`, A is packed by a scalar copy to `[MC/mr][KB][mr]`
    (which LLVM vectorizes into scatters, about a cycle per element), and
    only when an N block has at least 4 panels (a packed element serves
    one broadcast per panel); with fewer panels the tiles broadcast from
    A's rows in place. (Measured on Linformer's projections, N = D = 64,
    two panels: the copy took a third of their time; in place they took
    about a sixth less, by transposes a little less still.) The remark
    says which. A `linalg.fill` of the whole output just before the op
    (nothing in between touching memory; `attn-tile-contractions` fuses an
    init fill into each chunk) is
    folded: the first K block starts from the fill value instead of loading
    the output, and the fill is erased. Other layouts (a transposed B or output)
    and other bodies (a fused unary op on an input) are tiled with `scf.for`
    loops (order: batch, N, M, K) into the same
    register tiles with K steps of `k-tile` (halved until it divides K),
    each whole tile vectorized (`linalg::vectorize`) into a
    `vector.contract` lowered to outer products, the accumulator hoisted out
    of the K loop; ragged edge tiles stay linalg ops. A remark on each op
    gives its tiles and kernel.
  }];
  let options = !listconcat(Attn_CpuTargetOptions, [
    Option<"kTile", "k-tile", "int64_t", /*default=*/"16",
           "K steps of one vector.contract">,
  ]);
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def AttnReadOnlyArguments : Pass<"attn-read-only-arguments",
                                 "func::FuncOp"> {
  let summary = "Mark the tensor arguments of public functions read-only "
                "for bufferization";
  let description = [{
    One-shot bufferization assumes function arguments writable: an op that
    writes into an argument tensor (a `linalg.matmul` accumulating into its
    `outs` argument) would write into the caller's buffer, which the
    library ABI declares `const` and attn-run reuses for every call and for
    --check. This pass sets `bufferization.writable = false` on the tensor
    arguments of public functions with a body, so such ops work on a copy.
  }];
}

def AttnDistinctResults : Pass<"attn-distinct-results", "func::FuncOp"> {
  let summary = "Give each tensor a function returns a buffer of its own";
  let description = [{
    Run before bufferization: a tensor returned more than once by a
    `func.return` (`return %0, %0`) is copied (`bufferization.alloc_tensor
    copy(...)`) for each return after the first, so every result of the
    function is its own buffer. buffer-results-to-out-params (MLIR 22,
    `hoist-static-allocs`) replaces a returned allocation by its out
    parameter and erases it once per result: an allocation returned twice
    was erased twice, a crash of every pipeline on such a function.

    ```mlir
    func.func @two(...) -> (tensor<8xf32>, tensor<8xf32>) {
      ...
      return %0, %0 : tensor<8xf32>, tensor<8xf32>
    }
    ```

    becomes

    ```mlir
      %1 = bufferization.alloc_tensor() copy(%0) : tensor<8xf32>
      return %0, %1 : tensor<8xf32>, tensor<8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def AttnSeparateBufferReads : Pass<"attn-separate-buffer-reads",
                                   "func::FuncOp"> {
  let summary = "Give each kernel its own read-only bufferization.to_buffer "
                "of a tensor";
  let description = [{
    The fused kernels read their tensor operands through
    `bufferization.to_buffer ... read_only`, created right before the
    kernel: one-shot bufferization counts the tensor as read there and lets
    later ops reuse its buffer. CSE merges the `to_buffer` ops of two
    kernels reading the same tensor into the first one, and the second
    kernel then reads a buffer that an op between the two may have
    overwritten in place (the gradient of kernelized attention runs four
    kernels over shared operands and met this). This pass, run just before
    bufferization, splits them again: each read-only `to_buffer` of a tensor
    that is not a function argument, used by several ops of its block (or
    by ops nested in them), gets a copy right before each such op after
    the first, so the read happens where the kernel reads.

    ```mlir
    %m = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
    "kernel.a"(%m) : (memref<4xf32>) -> ()
    %u = linalg.generic ... outs(%e)   // may write %t's buffer in place
    "kernel.b"(%m) : (memref<4xf32>) -> ()
    // becomes
    %m = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
    "kernel.a"(%m) : (memref<4xf32>) -> ()
    %u = linalg.generic ... outs(%e)   // now must not overwrite %t
    %m2 = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
    "kernel.b"(%m2) : (memref<4xf32>) -> ()
    ```
  }];
}

def AttnDecomposeAggregates : Pass<"attn-decompose-aggregates",
                                   "func::FuncOp"> {
  let summary = "Decompose aggregate linalg ops (linalg.softmax) into "
                "linalg.generic";
  let description = [{
    Ops with `linalg::AggregatedOpInterface` (such as `linalg.softmax`) are
    not `LinalgOp`s, so the CPU pipeline's loop lowering cannot take them.
    This pass replaces each by its decomposition (for softmax: a max
    reduction, `exp(x - max)`, a sum reduction and a division, all
    `linalg.generic`), so that graphs that use them compile. It runs after
    the attn passes (`attn-raise` sees the named op first).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
  ];
}

def AttnMathApproximation : Pass<"attn-math-approximation"> {
  let summary = "Replace math ops by polynomial approximations LLVM vectorizes";
  let description = [{
    Applies MLIR's polynomial approximations (`exp`, `log`, `log1p`, `erf`,
    `tanh`, ...; f32 accuracy within a few ulp) so that the math in
    vectorizable loops becomes plain arithmetic instead of libm calls.
    `exp` of NaN stays NaN (a select around the approximation, whose
    underflow test would give 0).

    With `avx512`, `exp` of `vector<16xf32>` becomes its own approximation
    instead (14 vector ops against MLIR's 21 plus the NaN select):
    `2^k exp(r)` with `k = round(x log2 e)`, `r = x - k ln 2` in two parts
    (Cody-Waite), `exp(r)` by Cephes' degree-7 polynomial (Horner, 7 FMAs;
    relative error within 2e-7) and `2^k` applied by AVX-512's `vscalefps`
    (`x86vector.avx512.mask.scalef`) under a lane mask: x above 89 is
    clamped to 89 (inf), NaN stays NaN, and lanes with x below ln(FLT_MIN)
    (-87.34; -inf included) are 0 without being computed: results there
    are subnormal, and x86 CPUs take a slow microcode assist for every
    subnormal or underflowing result (libm's exp would return subnormals
    down to x = -103.9; these are flushed to 0, an absolute error below
    1.2e-38).

    An `exp` with `attn.flush_below = b` (the kernels' softmax weights,
    `softmaxExp`) gives exactly 0 for `x < b` in both forms: with
    `avx512` through the same mask (no extra op), else by a compare and a
    select after the approximation.

    ```mlir
    %p = math.exp %d {attn.flush_below = -6.400000e+01 : f32} : vector<16xf32>
    // avx512: the lane mask (uge -64), the clamp at 89, k, r, 7 FMAs, then
    %m = llvm.bitcast %keep : vector<16xi1> to i16
    %e = x86vector.avx512.mask.scalef %poly, %k, %zero, %m, %c4_i32 : vector<16xf32>
    // (operands in the intrinsic's order: a * 2^b, passthru 0 off the mask)
    ```
  }];
  let options = [
    Option<"avx512", "avx512", "bool", /*default=*/"false",
           "exp of vector<16xf32> through AVX-512's vscalefps (the target "
           "has AVX-512F)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
    "::mlir::LLVM::LLVMDialect",
  ];
}

def AttnOrderConstantGlobals : Pass<"attn-order-constant-globals",
                                    "ModuleOp"> {
  let summary = "Name and order bufferization's constant globals by first use";
  let description = [{
    One-Shot Module Bufferize turns each tensor constant into a
    `memref.global` named `__constant_<shape>` (with `_0`, `_1`, ... for
    further constants of the same type), function by function in an order
    that depends on where the functions sit in memory: the same module gave
    differently numbered and ordered globals from one run to the next (with
    the pass manager's threads) and from one build to another. This pass
    renames the constant globals whose names start with `__constant_` in
    the order of their first `memref.get_global` in the module (functions
    in module order, ops in block order), upstream's naming scheme, and
    moves their definitions to the start of the module in that order, so
    the same input prints the same IR. Globals without a use follow, in
    the order of their values' text.

    ```mlir
    memref.global "private" constant @__constant_2xi32_0 : memref<2xi32> = dense<[3, 4]>
    memref.global "private" constant @__constant_2xi32 : memref<2xi32> = dense<[1, 2]>
    func.func @f() {
      %0 = memref.get_global @__constant_2xi32 : memref<2xi32>
      %1 = memref.get_global @__constant_2xi32_0 : memref<2xi32>
    ```

    becomes

    ```mlir
    memref.global "private" constant @__constant_2xi32 : memref<2xi32> = dense<[1, 2]>
    memref.global "private" constant @__constant_2xi32_0 : memref<2xi32> = dense<[3, 4]>
    func.func @f() {
      %0 = memref.get_global @__constant_2xi32 : memref<2xi32>
      %1 = memref.get_global @__constant_2xi32_0 : memref<2xi32>
    ```

    The pipelines run it right after bufferization.
  }];
}

def AttnScheduleThreads : Pass<"attn-schedule-threads"> {
  let summary = "Set the schedule of the OpenMP work-sharing loops";
  let description = [{
    Every `omp.wsloop` without a schedule (those of `convert-scf-to-openmp`)
    gets `schedule-kind`, by default `guided`: each free thread takes the
    next chunk of iterations, chunks that start at the iterations left over
    twice the threads and shrink to one. Without a schedule OpenMP splits
    the iterations into equal static shares, and a call takes as long as
    its slowest thread: one core slowed down by another process, a sibling
    hyperthread or a virtual machine's neighbour holds every other thread
    until it has done its share. Guided chunks give the others the slow
    one's remaining work at the cost of one atomic per chunk (a few per
    thread and loop), and keep a thread's first chunks contiguous (the
    prefetchers follow the rows from one task to the next, which one
    iteration per chunk, `dynamic`, loses).

    Measured with FAVOR+ (B = 1, H = 8, L = 4096, m = 256; kv_state's 16
    tasks and state_apply's 512), 2 threads: with another process busy on
    one of the two cores, 35 ms a call against 50 ms static; on the shared
    machine alone, alternating rounds, the same best time (17.9 against
    17.7 ms) and 0.90 of the median time (22.3 against 24.9 ms).

    ```mlir
    omp.wsloop {
      omp.loop_nest (%h, %c) : index = (%c0, %c0) to (%c8, %c2) step (%c1, %c1) {
    ```

    becomes

    ```mlir
    omp.wsloop schedule(guided) {
      omp.loop_nest (%h, %c) : index = (%c0, %c0) to (%c8, %c2) step (%c1, %c1) {
    ```

    A loop that already has a schedule keeps it. `static` leaves the loops
    alone (OpenMP's default); `runtime` defers to `OMP_SCHEDULE` (libomp
    reads an unset one as static).
  }];
  let options = [
    Option<"scheduleKind", "schedule-kind", "std::string",
           /*default=*/"\"guided\"",
           "guided (the default), dynamic, static (OpenMP's default) or "
           "runtime (OMP_SCHEDULE)">,
  ];
  let dependentDialects = [
    "::mlir::omp::OpenMPDialect",
  ];
}

def AttnExportEntries : Pass<"attn-export-entries", "ModuleOp"> {
  let summary = "Give every public function an entry for the C ABI of a "
                "kernel library";
  let description = [{
    The first step of `attn-compile` (docs/Library.md). For every public
    function with a body, whose arguments and results are ranked tensors,
    adds a function `@<name>__entry` that takes one memref per argument and
    one per result, every dimension dynamic (the caller's buffers and their
    sizes), and returns nothing. It has `llvm.emit_c_interface`, and
    `attn.entry = "<name>"` names the function it exports. The original
    function becomes private (SymbolDCE removes it unless it is called).

    The entry checks the caller's sizes before it computes: each dimension
    is not negative, and a static dimension of the function's type equals
    the buffer's (else `attn_opt_runtime_error` with code ArgumentSize, or
    ResultSize for a result buffer). Under these checks it reads the
    arguments as tensors (`bufferization.to_tensor ... restrict`: inputs are
    read, never written), computes the function's body (cloned), checks
    every dynamic dimension of each result against its buffer (ResultSize)
    and writes the result into the buffer
    (`bufferization.materialize_in_destination`). A failed check skips the
    computation; the buffers are left as they were.

    ```mlir
    func.func @f(%q: tensor<?x8x?x64xf32>, ...) -> tensor<?x8x?x64xf32>
    ```

    gets

    ```mlir
    func.func @f__entry(%arg0: memref<?x?x?x?xf32>, ...,
                        %arg3: memref<?x?x?x?xf32>)
        attributes {attn.entry = "f", llvm.emit_c_interface} {
      // dims >= 0; dim 1 == 8, dim 3 == 64 (else the error hook)
      scf.if %ok {
        %q = bufferization.to_tensor %cast0 restrict : memref<?x8x?x64xf32>
        ...                                  // the body of @f
        // result dims 0 and 2 == the buffer's
        scf.if %fits {
          bufferization.materialize_in_destination %r in restrict writable
            %cast3 : (tensor<?x8x?x64xf32>, memref<?x8x?x64xf32>) -> ()
        }
      }
      return
    }
    ```

    Supported element types: f16, bf16, f32, f64 and signless integers of
    1, 8, 16, 32 and 64 bits. Other argument types, results that are not
    ranked tensors, or bodies of more than one block are errors on the
    function.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnForwardEntryOutputs : Pass<"attn-forward-entry-outputs",
                                   "func::FuncOp"> {
  let summary = "Compute the results of kernel-library entries in the "
                "caller's buffers";
  let description = [{
    Runs after bufferization on the entries of `attn-export-entries`
    (functions with `attn.entry`). There a result is computed into a new
    buffer and copied into the caller's (`memref.copy %alloc, %out`, from
    `bufferization.materialize_in_destination`). When

    - the copy is in the block of the allocation (so every size of the
      result was checked against the caller's buffer before computing),
    - nothing uses the allocation after the copy,
    - the caller's buffer is a function argument used only by this copy
      (through one `memref.cast`) and by `memref.dim`,
    - and the two have the same type,

    the allocation is replaced by (a cast of) the caller's buffer and the
    copy is erased: the kernels write the result where the caller wants
    it, with no extra pass over the output.

    ```mlir
    %alloc = memref.alloc(%b, %l) : memref<?x8x?x64xf32>
    ...                                   // the kernel writes %alloc
    %out = memref.cast %arg3 : memref<?x?x?x?xf32> to memref<?x8x?x64xf32>
    memref.copy %alloc, %out : ...
    ```

    becomes

    ```mlir
    %alloc = memref.cast %arg3 : memref<?x?x?x?xf32> to memref<?x8x?x64xf32>
    ...                                   // the kernel writes the caller's
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnGuardAllocationSizes : Pass<"attn-guard-allocation-sizes",
                                    "ModuleOp"> {
  let summary = "Refuse heap allocations of more than 2^47 bytes at run time";
  let description = [{
    Runs on bufferized code, before `finalize-memref-to-llvm` (the first
    step of the CPU pipeline's lowering to LLVM; docs/Semantics.md,
    "Limits"). A `memref.alloc` with dynamic sizes computes its byte count
    from them; with sizes large enough that count exceeds any memory, or
    wraps around 64 bits and becomes small, and the code would then write
    past a short buffer. For each such allocation the pass checks, without
    overflow, that the sizes are not negative and that the bytes are at
    most 2^47 (`kMaxTensorBytes`, the limit of every attn tensor). When
    they are not, the code reports `AllocationTooLarge` through
    `attn_opt_runtime_error` and allocates a size `malloc` refuses (the
    first dynamic size becomes `-(2^62 / bytes per step)`, the others 1), so
    that `attn-check-allocations` skips the code that would use the buffer.

    ```mlir
    %a = memref.alloc(%n, %m) : memref<?x8x?xf32>
    ```

    becomes

    ```mlir
    // %ok: %n >= 0, %n <= 2^47 / 32, %m >= 0, %m <= 2^47 / (32 * max(%n, 1))
    scf.if %too_large { func.call @attn_opt_runtime_error(%c12, ...) }
    %n2 = arith.select %ok, %n, %sentinel : index
    %m2 = arith.select %ok, %m, %c1 : index
    %a = memref.alloc(%n2, %m2) : memref<?x8x?xf32>
    ```

    Allocations with static sizes are left alone (the verifier bounds the
    attn ops' tensors, and a static buffer's bytes are known).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def AttnHoistStackBuffers : Pass<"attn-hoist-stack-buffers", "ModuleOp"> {
  let summary = "Allocate loops' static stack buffers once per allocation "
                "scope";
  let description = [{
    `convert-vector-to-scf` gives an N-d vector transfer a temporary
    buffer (`memref.alloca` of a static vector) next to it. Inside a loop
    of a parallel region (the alloca scope `convert-scf-to-openmp` put in
    the loop body is inlined by the canonicalizer while it holds no
    allocation) each iteration then takes new stack: LLVM releases an
    alloca outside a function's entry block only at return, so a loop over
    the rows overflows the stack (the reference gradient with lengths
    known at run time ended in SIGSEGV from L of about 3000).

    The pass moves each `memref.alloca` with static sizes that sits inside
    a loop (`scf.for`, `scf.while`, `scf.parallel`, `omp.loop_nest`) and
    whose uses all lie in the region it is defined in to the start of its
    nearest automatic allocation scope (`func.func`; `omp.parallel`: one
    buffer per thread), allocated once. Sound for buffers that do not
    outlive an iteration: an alloca's contents are undefined when it is
    allocated, and one thread's iterations run one after another.

    ```mlir
    omp.parallel {
      omp.wsloop { omp.loop_nest (%i) ... {
        scf.for %j = ... {
          %t = memref.alloca() : memref<vector<14x32xf32>>
          ...
    ```

    becomes

    ```mlir
    omp.parallel {
      %t = memref.alloca() : memref<vector<14x32xf32>>
      omp.wsloop { omp.loop_nest (%i) ... {
        scf.for %j = ... {
          ...
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnCheckAllocations : Pass<"attn-check-allocations", "ModuleOp"> {
  let summary = "Check every heap allocation of the lowered code and skip "
                "what would use a failed one";
  let description = [{
    Runs on the LLVM dialect, after the CPU or the NVVM pipeline's
    conversion. Every call of `malloc`, `aligned_alloc`,
    `_mlir_memref_to_llvm_alloc` (what `finalize-memref-to-llvm` emits for
    `memref.alloc`) or `mgpuMemAlloc` (`gpu.alloc`) is followed by a
    check: a NULL result for a non-zero size is a failed allocation. Then,
    instead of writing through NULL:

    - at the top level of a function: the code reports `OutOfMemory` (the
      size) through `attn_opt_runtime_error` and returns (a function with a
      result returns zeros: its result is unspecified after an error, as
      after any run-time error);
    - in the body of an `omp.loop_nest` (a parallel loop's iteration): the
      iteration stores the size into a flag of its function (atomically) and
      ends; after the enclosing top-level op (the `omp.parallel`) the
      function's own thread reads the flag, reports `OutOfMemory` and
      returns. Reports thus come from the thread that called the function
      (a kernel library keeps its status per calling thread).

    A call of a function of the module that checks allocations (itself or
    in what it calls) is followed by `attn_opt_runtime_failed()`; when the
    running call has failed, the caller returns too.

    ```mlir
    %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
    ...
    ```

    becomes

    ```mlir
    %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
    %null = llvm.icmp "eq" %p, %zero : !llvm.ptr
    %sized = llvm.icmp "ne" %size, %c0 : i64
    %failed = llvm.and %null, %sized : i1
    llvm.cond_br %failed weights([1, 1048575]), ^oom, ^ok
    ^oom:
      llvm.call @attn_opt_runtime_error(%c11, %size, %c0, %c0) : ...
      llvm.br ^return
    ^ok:
      ...
    ```

    Buffers the function allocated before the failed one are not freed on
    this path, unless `release-on-error` is set (kernel libraries, whose
    run-time support tracks the buffers of each thread): then the function
    (and each parallel iteration) takes `__attn_rt_mark()` on entry and
    calls `__attn_rt_release(mark)` on the error path, which frees the
    buffers allocated since. Allocations or calls of such functions in other regions
    (inside `omp.parallel` but outside a loop, in `omp.single`, ...) are
    errors of the pass: the pipelines do not emit them. The NVVM
    pipeline's host code is checked the same way: its `gpu.alloc`s become
    `mgpuMemAlloc(size, stream, host_shared)`, which returns NULL when the
    device has no memory for them (attn-opt's CUDA runtime), so the
    function reports `OutOfMemory` and launches no kernel on a NULL
    buffer.
  }];
  let options = [
    Option<"releaseOnError", "release-on-error", "bool", /*default=*/"false",
           "Free the buffers held since entry on the error path "
           "(__attn_rt_mark / __attn_rt_release of a kernel library)">,
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::omp::OpenMPDialect",
  ];
}

def AttnLowerCommunication : Pass<"attn-lower-communication", "ModuleOp"> {
  let summary = "attn's communication ops (buffer form) to MPI calls";
  let description = [{
    After bufferization and deallocation, turns the buffer form of
    attn.exchange, attn.exchange_wait and attn.allreduce into MPI calls:
    an exchange starts `MPI_Irecv` and `MPI_Isend` (skipped for a negative
    peer), its wait calls `MPI_Wait` on both, so the kernel the partitioning
    put between them runs while the block travels; `attn.allreduce` becomes
    `mpi.allreduce`. MLIR 22's `mpi` lowering has no `mpi.isend` /
    `mpi.irecv` / `mpi.wait`, so the nonblocking calls are emitted here as
    `func.call`s for the module's MPI ABI (its `dlti.map`
    "MPI:Implementation", as the upstream lowering reads it): MPICH's
    handles are ints (MPI_FLOAT = 0x4c00040a, requests 4 bytes,
    MPI_STATUS_IGNORE = 1), Open MPI's pointers (`&ompi_mpi_float`,
    requests 8 bytes, NULL). f32 travels as MPI_FLOAT, other types as
    bytes. MPI sends 1-D buffers, so contiguous buffers are collapsed to
    one dimension; others are staged through a contiguous copy (sent from
    it, or received into it and copied out), freed at the wait.

    Every byte handed to MPI (a send to a rank, an all-reduce's input) is
    added to a module counter, read by the public function
    `attn_opt_bytes_sent() -> i64` (attn-run reports it with `--bench`).

    The communicator is the host's: each `mpi.comm_world` becomes the
    handle `attn_opt_communicator() -> i64` returns (a kernel library's
    PREFIX_set_communicator, per thread), or MPI_COMM_WORLD where it
    returns 0:

    ```mlir
    %w = mpi.comm_world : !mpi.comm
    %wi = builtin.unrealized_conversion_cast %w : !mpi.comm to i64
    %h = func.call @attn_opt_communicator() : () -> i64
    %unset = arith.cmpi eq, %h, %c0_i64 : i64
    %s = arith.select %unset, %wi, %h : i64
    %comm = builtin.unrealized_conversion_cast %s : i64 to !mpi.comm
    ```

    ```mlir
    %sr, %rr = attn.exchange %k into %buf to %d from %s tag %t comm %c
        : memref<1x8x?x64xf32>, memref<1x8x?x64xf32>
    ... the kernel of the block in hand ...
    attn.exchange_wait %buf sent %k requests %sr, %rr : ...
    ```

    becomes (MPICH)

    ```mlir
    %kf = memref.collapse_shape %k [[0, 1, 2, 3]] : ... into memref<?xf32>
    %bf = memref.collapse_shape %buf [[0, 1, 2, 3]] : ... into memref<?xf32>
    %reqs = memref.alloc() : memref<2xi32>
    scf.if %has_source {
      func.call @MPI_Irecv(%bf_ptr, %n, %MPI_FLOAT, %s, %t, %comm, %req1) : ...
    }
    scf.if %has_dest {
      func.call @MPI_Isend(%kf_ptr, %n, %MPI_FLOAT, %d, %t, %comm, %req0) : ...
    }
    ... the kernel ...
    scf.if %has_source { func.call @MPI_Wait(%req1, %status_ignore) : ... }
    scf.if %has_dest { func.call @MPI_Wait(%req0, %status_ignore) : ... }
    memref.dealloc %reqs : memref<2xi32>
    ```
  }];
  let dependentDialects = ["::mlir::mpi::MPIDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // ATTN_PIPELINES_PASSES_TD
