// The GQA graph of examples/graphs/gqa_window.mlir through the default
// pipeline: the window mask computed in the graph is raised as a constant,
// read as #attn.window and compiled block-sparse; the mask given as a
// boolean tensor is raised as the mask operand and classified at run time.
// Both against the same graph compiled without raising (--check).
// RUN: attn-run %attn_src_root/examples/graphs/gqa_window.mlir --entry gqa_window --random-inputs --seed 3 --check --remarks 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: remark: raised attention: linalg.softmax, mask from the indices (a constant), scale 0.125, grouped heads (4 query heads per key/value head)
// WINDOW: remark: attn-infer-mask: the constant mask is #attn.window<before = 64, after = 64>
// WINDOW: remark: attn-block-sparse:
// WINDOW: check result0: {{.*}} ok
// RUN: attn-run %attn_src_root/examples/graphs/gqa_window.mlir --entry gqa_mask_tensor --random-inputs --seed 4 --check --remarks 2>&1 | FileCheck %s --check-prefix=TENSOR
// TENSOR: remark: raised attention: linalg.softmax, boolean mask tensor, scale 0.125, grouped heads (4 query heads per key/value head)
// TENSOR: the blocks of the mask tensor classified at run time
// TENSOR: check result0: {{.*}} ok
