//===- AttnEnums.td - attn dialect enums -------------------*- tablegen -*-===//
//
// Enumerations used by the attn dialect's attributes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD

include "mlir/IR/EnumAttr.td"

def Attn_PointwiseFn : I32EnumAttr<"PointwiseFn",
    "the function h of pointwise attention `L^-alpha * h(s)`", [
      I32EnumAttrCase<"relu", 0>,
      I32EnumAttrCase<"relu2", 1>,
      I32EnumAttrCase<"gelu", 2>,
      I32EnumAttrCase<"softplus", 3>,
      I32EnumAttrCase<"identity", 4>,
      I32EnumAttrCase<"relu6", 5>,
      I32EnumAttrCase<"sigmoid", 6>,
      I32EnumAttrCase<"gelu_tanh", 7>
    ]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
  let description = [{
    - `relu`: `max(s, 0)`
    - `relu2`: `max(s, 0)^2`
    - `gelu`: `s * Phi(s)` with the exact normal CDF, `0.5 s (1 + erf(s/sqrt 2))`
    - `softplus`: `log(1 + exp(s))`
    - `identity`: `s`
    - `relu6`: `min(max(s, 0), 6)`
    - `sigmoid`: `1 / (1 + exp(-s))`
    - `gelu_tanh`: GELU's tanh approximation (PyTorch's `approximate="tanh"`),
      `0.5 s (1 + tanh(sqrt(2/pi) (s + 0.044715 s^3)))`
  }];
}

def Attn_FeatureMap : I32EnumAttr<"FeatureMap",
    "the feature map phi of kernelized attention", [
      I32EnumAttrCase<"elu_plus_one", 0>,
      I32EnumAttrCase<"relu", 1>,
      I32EnumAttrCase<"favor", 2>
    ]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
  let description = [{
    - `elu_plus_one`: `elu(x) + 1`, elementwise (Katharopoulos et al. 2020);
      D features.
    - `relu`: `max(x, 0)`, elementwise; D features.
    - `favor`: Performer FAVOR+ positive random features
      `exp(w_r . x - |x|^2 / 2) / sqrt(m)` for `r < m` (Choromanski et al.
      2020); m features.
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD
