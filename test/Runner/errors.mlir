// attn-run rejects bad inputs with a clear message naming the file and
// writes no output file on any error.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_npy.py %t/q.npy --shape 1,2,8,4
// RUN: %python %S/Inputs/make_npy.py %t/shape.npy --shape 1,2,8,5
// RUN: %python %S/Inputs/make_npy.py %t/dtype.npy --dtype '<f8' --shape 1,2,8,4
// RUN: %python %S/Inputs/make_npy.py %t/f16.npy --dtype '<f2' --shape 1,2,8,4
// RUN: %python %S/Inputs/make_npy.py %t/fortran.npy --shape 1,2,8,4 --fortran
// RUN: %python %S/Inputs/make_npy.py %t/truncated.npy --shape 1,2,8,4 --truncate 3
// RUN: %python %S/Inputs/make_npy.py %t/magic.npy --shape 1,2,8,4 --bad-magic
// RUN: %python %S/Inputs/make_npy.py %t/long.npy --shape 1,2,8,4
// RUN: printf 'xx' >> %t/long.npy

/// A good run writes the output.
// RUN: attn-run %s --input query=%t/q.npy --input key=%t/q.npy --input value=%t/q.npy --output %t/good.npy | FileCheck %s --check-prefix=GOOD
// RUN: test -f %t/good.npy
// GOOD: result result0: 1x2x8x4xf32

/// Positional inputs in argument order.
// RUN: attn-run %s --input %t/q.npy --input %t/q.npy --input %t/q.npy | FileCheck %s --check-prefix=GOOD

// RUN: not attn-run %s --input query=%t/shape.npy --random-inputs --output %t/o1.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not test -e %t/o1.npy
// SHAPE: attn-run: error: {{.*}}shape.npy: holds 1x2x8x5xf32 but argument query of @attention is 1x2x8x4xf32

// RUN: not attn-run %s --input key=%t/dtype.npy --random-inputs --output %t/o2.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not test -e %t/o2.npy
// DTYPE: attn-run: error: {{.*}}dtype.npy: unsupported dtype '<f8'

// RUN: not attn-run %s --input key=%t/f16.npy --random-inputs --output %t/o3.npy 2>&1 | FileCheck %s --check-prefix=F16
// RUN: not test -e %t/o3.npy
// F16: attn-run: error: {{.*}}f16.npy: holds 1x2x8x4xf16 but argument key of @attention is 1x2x8x4xf32

// RUN: not attn-run %s --input value=%t/fortran.npy --random-inputs --output %t/o4.npy 2>&1 | FileCheck %s --check-prefix=FORTRAN
// RUN: not test -e %t/o4.npy
// FORTRAN: attn-run: error: {{.*}}fortran.npy: Fortran-order arrays are not supported

// RUN: not attn-run %s --input query=%t/truncated.npy --random-inputs --output %t/o5.npy 2>&1 | FileCheck %s --check-prefix=TRUNC
// RUN: not test -e %t/o5.npy
// TRUNC: attn-run: error: {{.*}}truncated.npy: truncated data: expected 256 bytes for 1x2x8x4xf32, found 253

// RUN: not attn-run %s --input query=%t/long.npy --random-inputs --output %t/o6.npy 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not test -e %t/o6.npy
// LONG: attn-run: error: {{.*}}long.npy: unexpected trailing data

// RUN: not attn-run %s --input query=%t/magic.npy --random-inputs --output %t/o7.npy 2>&1 | FileCheck %s --check-prefix=MAGIC
// RUN: not test -e %t/o7.npy
// MAGIC: attn-run: error: {{.*}}magic.npy: not a NumPy .npy file

// RUN: not attn-run %s --input query=%t/missing.npy --random-inputs --output %t/o8.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not test -e %t/o8.npy
// MISSING: attn-run: error: {{.*}}missing.npy: cannot open

// RUN: not attn-run %s --input nope=%t/q.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: attn-run: error: --input nope={{.*}}: @attention has no argument named 'nope' (arguments: query, key, value)

// RUN: not attn-run %s --input query=%t/q.npy --output %t/o9.npy 2>&1 | FileCheck %s --check-prefix=NOINPUT
// RUN: not test -e %t/o9.npy
// NOINPUT: attn-run: error: no input for argument key of @attention (use --input or --random-inputs)

// RUN: not attn-run %s --random-inputs --output %t/a.npy --output %t/b.npy 2>&1 | FileCheck %s --check-prefix=OUTPUTS
// OUTPUTS: attn-run: error: --output given 2 times but @attention has 1 results

// RUN: not attn-run %s --random-inputs --entry missing 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: attn-run: error: no function @missing with a body in

// RUN: not attn-run %s --random-inputs --pipeline='no-such-pass' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: attn-run: error: invalid --pipeline 'no-such-pass'

// RUN: not attn-run %s --random-inputs --target=tpu 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: attn-run: error: unknown --target 'tpu'

// RUN: not attn-run %s --random-inputs --threads=0 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: attn-run: error: --threads takes a positive integer

/// An output path that cannot be written is an error too, and leaves nothing.
// RUN: not attn-run %s --random-inputs --output %t/no/such/dir/out.npy 2>&1 | FileCheck %s --check-prefix=WRITE
// WRITE: attn-run: error: {{.*}}out.npy: cannot write

/// Options are checked before anything runs: tolerances finite and >= 0,
/// a named entry, a file name for each output ("-" is not standard output:
/// no file named "-" is written), a GPU architecture for --chip.
// RUN: not attn-run %s --random-inputs --check --rtol -5 2>&1 | FileCheck %s --check-prefix=RTOL
// RTOL: attn-run: error: --rtol must be a finite number >= 0, not '-5.000000'
// RUN: not attn-run %s --random-inputs --check --atol nan 2>&1 | FileCheck %s --check-prefix=ATOL
// ATOL: attn-run: error: --atol must be a finite number >= 0, not 'nan'
// RUN: not attn-run %s --random-inputs --entry '' 2>&1 | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: attn-run: error: --entry needs a function name
// RUN: mkdir -p %t/cwd && cd %t/cwd && not attn-run %s --random-inputs --output - 2>&1 | FileCheck %s --check-prefix=STDOUT
// RUN: not test -e %t/cwd/-
// STDOUT: attn-run: error: --output '-': results are .npy files; give a file name (standard output is not supported)
// RUN: not attn-run %s --random-inputs --target=gpu-emulator --chip sm_1 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: attn-run: error: --chip 'sm_1' is not an NVIDIA GPU architecture (sm_80, sm_90a, ...)

func.func @attention(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>,
                     %value: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}
