// Every example module parses and verifies.
// RUN: attn-opt %attn_src_root/examples/softmax.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/softmax_causal.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/relu.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/relu_causal.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/linear_elu.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/linear_elu_causal.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/favor.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/sliding_window.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/bigbird.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/sparse_fixed.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/lowrank.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/lsh.mlir -o /dev/null
// RUN: attn-opt %attn_src_root/examples/relative.mlir -o /dev/null
