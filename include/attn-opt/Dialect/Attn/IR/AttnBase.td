//===- AttnBase.td - attn dialect definition ---------------*- tablegen -*-===//
//
// The `attn` dialect: attention and its efficient variants as first-class IR.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNBASE_TD
#define ATTN_DIALECT_ATTN_IR_ATTNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention and its efficient variants";
  let description = [{
    The `attn` dialect represents multi-head attention as one operation whose
    attributes say *how* the scores are normalized (softmax, a pointwise
    function such as ReLU, or a kernel feature map) and *which* scores exist
    (a mask pattern: causal, sliding window, dilated, global tokens, strided,
    fixed, BigBird random blocks, explicit block layouts, document segments,
    their unions and intersections, and per-head assignments). Reformer LSH
    attention, Linformer low-rank attention and Transformer-XL relative
    attention have ops of their own.

    Keeping the whole computation in one op lets the compiler reason about it
    algebraically (reassociating kernelized attention into `phi(Q) (phi(K)^T
    V)`), exploit the mask at compile time (skipping empty blocks), and pick a
    fused lowering (online softmax, tiled pointwise loops) that never
    materializes the `Lq x Lk` score matrix.

    The semantics every lowering preserves are in `docs/Semantics.md`.

    ```mlir
    %o = attn.attention %q, %k, %v {normalizer = #attn.softmax,
                                    pattern = #attn.causal}
        : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
          tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::mpi::MPIDialect"];
}

/// Every tensor an attn op reads or writes can be allocated: its static
/// sizes multiply, with its element size, to at most 2^47 bytes (the user
/// address space of x86-64 and AArch64), without overflow.
def Attn_AllocatableTensors : NativeOpTrait<"AllocatableTensors"> {
  let cppNamespace = "::mlir::attn";
}

/// Base class of every attn operation.
class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, !listconcat([Attn_AllocatableTensors],
                                            traits)>;

/// Base class of every attn attribute.
class Attn_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Attn_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNBASE_TD
