// Every example variant, generated at L = 256 by examples/generate.py, runs
// with --check (the default pipeline against the reference lowering).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %attn_src_root/examples/generate.py --length 256 --out %t
// RUN: attn-run %t/softmax.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/softmax_causal.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/relu.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/relu_causal.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/linear_elu.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/linear_elu_causal.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/favor.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/sliding_window.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/bigbird.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/sparse_fixed.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/lowrank.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/lsh.mlir --random-inputs --check | FileCheck %s
// RUN: attn-run %t/relative.mlir --random-inputs --check | FileCheck %s
// CHECK: check result0: {{.*}} ok
