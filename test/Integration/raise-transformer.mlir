// The pre-norm Transformer block of examples/graphs (layer norms,
// projections, causal multi-head attention with linalg.softmax, GELU MLP,
// residuals): attn-lower-to-llvm-pipeline raises its attention and
// compiles the whole graph; the result matches the graph compiled without
// raising (activations reach ~200, so the elementwise tolerance is
// absolute 1e-3 plus relative 1e-3; the normwise error attn-run prints is ~2e-6).
// RUN: attn-run %attn_src_root/examples/graphs/transformer_block.mlir --random-inputs --seed 9 --check --remarks --rtol 1e-3 --atol 1e-3 2>&1 | FileCheck %s
// CHECK: remark: raised attention: linalg.softmax, causal mask from the indices, scale 0.353553, K transposed, [B*H, L, D] operands
// CHECK: check result0: {{.*}} ok
