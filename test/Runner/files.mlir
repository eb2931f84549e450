// The files attn-run reads and writes (issue 40).
// RUN: rm -rf %t && mkdir -p %t/tmp
// DEFINE: %{run} = attn-run %s --entry attn
// RUN: %python %S/Inputs/make_npy.py %t/q.npy --shape 1,2,8,4
//
// Inputs are read from regular files only, and only as many bytes as the
// header declares: a device that never ends, a FIFO with no writer, a
// directory and a (sparse) 4 GiB file holding an 8x4 tensor are refused
// without reading them.
// RUN: not %{run} --input query=/dev/zero --random-inputs 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: attn-run: error: /dev/zero: is not a regular file (a character device); .npy inputs are read from regular files only
// RUN: mkfifo %t/fifo
// RUN: not %{run} --input query=%t/fifo --random-inputs 2>&1 | FileCheck %s --check-prefix=FIFO
// FIFO: attn-run: error: {{.*}}fifo: is not a regular file (a FIFO); .npy inputs are read from regular files only
// RUN: not %{run} --input query=%t/tmp --random-inputs 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: attn-run: error: {{.*}}tmp: is a directory, not an .npy file
// RUN: cp %t/q.npy %t/huge.npy && truncate -s 4G %t/huge.npy
// RUN: not %{run} --input query=%t/huge.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: attn-run: error: {{.*}}huge.npy: unexpected trailing data: expected 256 bytes for 1x2x8x4xf32, found 4294967168
//
// A header that claims more bytes than it may have, or a shape whose bytes
// overflow the address range.
// RUN: %python -c "import sys; open(sys.argv[1], 'wb').write(b'\x93NUMPY\x02\x00\xff\xff\xff\x7f')" %t/header.npy
// RUN: not %{run} --input query=%t/header.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=HEADER
// HEADER: attn-run: error: {{.*}}header.npy: header of 2147483647 bytes (at most 1048576 are read)
// RUN: %python -c "import sys; h = b\"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n\"; open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + bytes([len(h), 0]) + h)" %t/overflow.npy
// RUN: not %{run} --input query=%t/overflow.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: attn-run: error: {{.*}}overflow.npy: shape (4611686018427387904, 8) holds more bytes than can be addressed
//
// Outputs: a device, a directory, an input, or two outputs that are one file
// are refused before anything runs, and the input keeps its bytes.
// RUN: not %{run} --random-inputs --output /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: attn-run: error: /dev/null: is not a regular file (a device, FIFO or socket); outputs replace regular files only
// RUN: cp %t/q.npy %t/q.before
// RUN: not %{run} --input query=%t/q.npy --input key=%t/q.npy --input value=%t/q.npy --output %t/q.npy 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: attn-run: error: {{.*}}.npy: is the same file as the input {{.*}}q.npy; write the output to another file
// RUN: ln -s q.npy %t/qlink.npy
// RUN: not %{run} --input query=%t/q.npy --random-inputs --output %t/qlink.npy 2>&1 | FileCheck %s --check-prefix=SAME
// RUN: cmp %t/q.npy %t/q.before
// RUN: not attn-run %s --entry two --random-inputs --output %t/o.npy --output %t/o.npy 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: attn-run: error: {{.*}}o.npy: given for two outputs
//
// An output that is a symbolic link is written through: the link stays, its
// target gets the result (the same bytes as a plain output); a link that
// does not resolve is refused.
// RUN: %{run} --random-inputs --seed 3 --output %t/plain.npy > /dev/null
// RUN: touch %t/target.npy && ln -s target.npy %t/link.npy
// RUN: %{run} --random-inputs --seed 3 --output %t/link.npy > /dev/null
// RUN: test -L %t/link.npy && cmp %t/target.npy %t/plain.npy
// RUN: ln -s missing/file.npy %t/dangling.npy
// RUN: not %{run} --random-inputs --output %t/dangling.npy 2>&1 | FileCheck %s --check-prefix=DANGLING
// DANGLING: attn-run: error: {{.*}}dangling.npy: a symbolic link to a file that cannot be resolved (No such file or directory); outputs are written through links to existing files only
//
// Nothing is left in the temporary directory: not by a checked run on the
// CPU and on the GPU emulator, not by attn-compile when its link fails.
// RUN: env TMPDIR=%t/tmp HOME=%t/tmp %{run} --random-inputs --check --bench 2 > /dev/null
// RUN: env TMPDIR=%t/tmp HOME=%t/tmp %{run} --random-inputs --check --target=gpu-emulator > /dev/null
// RUN: env TMPDIR=%t/tmp not attn-compile %s -o %t/lib.so --linker=false 2>&1 | FileCheck %s --check-prefix=LINK
// LINK: attn-compile: error: linking {{.*}}lib.so.partial failed
// RUN: not test -e %t/lib.so
// RUN: ls -A %t/tmp | count 0

func.func @attn(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>, %value: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

func.func @two(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>, %value: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0, %0 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
