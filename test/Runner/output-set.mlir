// attn-run writes its files as one set (issue 17): every output and every
// saved input goes to a temporary file next to its path, and all are
// renamed into place only once each was written. When one cannot be
// written, no new file appears, no temporary file or directory is left
// behind, and existing files keep their bytes.
// RUN: rm -rf %t && mkdir -p %t && cd %t
//
// A good run writes both outputs and the inputs.
// RUN: attn-run %s --random-inputs --output %t/a.npy --output %t/b.npy --save-inputs %t/in > /dev/null
// RUN: test -f %t/a.npy && test -f %t/b.npy && test -f %t/in/query.npy
//
// The second output cannot be written (no such directory): the first,
// which exists, is byte-identical afterwards; nothing else is written.
// RUN: cp %t/a.npy %t/a.before
// RUN: not attn-run %s --random-inputs --seed 9 --output %t/a.npy --output %t/no/such/dir/b.npy 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: attn-run: error: {{.*}}/no/such/dir/b.npy: cannot write: No such file or directory
// RUN: cmp %t/a.npy %t/a.before
//
// A first output that does not exist yet is not created either, nor are
// the saved inputs or their directory.
// RUN: not attn-run %s --random-inputs --output %t/new.npy --output %t/no/such/dir/b.npy --save-inputs %t/fresh/inputs 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not test -e %t/new.npy
// RUN: not test -e %t/fresh
//
// The second output is a directory: refused before anything runs (files.mlir
// has the other paths refused); no temporary file is left.
// RUN: mkdir -p %t/isdir.npy
// RUN: not attn-run %s --random-inputs --seed 9 --output %t/a.npy --output %t/isdir.npy 2>&1 | FileCheck %s --check-prefix=ISDIR
// ISDIR: attn-run: error: {{.*}}/isdir.npy: is a directory; give a file name for the output
// RUN: ls %t | FileCheck %s --check-prefix=NOTMP
// NOTMP-NOT: .tmp
//
// Saved inputs whose directory cannot be created: nothing is written.
// RUN: touch %t/plainfile
// RUN: not attn-run %s --random-inputs --output %t/c.npy --save-inputs %t/plainfile/sub 2>&1 | FileCheck %s --check-prefix=SAVE
// SAVE: attn-run: error: {{.*}}plainfile/sub: Not a directory
// RUN: not test -e %t/c.npy

func.func @two(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>, %value: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %1 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0, %1 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
