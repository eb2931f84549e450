#!/usr/bin/env python3
"""Writes the ReLU-attention and linear-attention graphs of bench/raise.sh as
linalg (what a front end emits), at length L with BH = B*H heads of width D:

  relu.mlir    S = Q K^T (batch_matmul after a transpose), S * D^-1/2, relu,
               times 1/L (the ReLU-attention paper's L^-1), times V;
  linear.mlir  elu + 1 feature maps of Q and K, A = phi(Q) phi(K)^T,
               (A V) / (rowsum(A) + 1e-6) (linear attention in its
               quadratic form, the normalization after the V product).

  raise_variants.py OUT_DIR [--length L] [--heads BH] [--dim D]
"""
import argparse
import os


def graph(kind, length, heads, dim):
    qt = f"tensor<{heads}x{length}x{dim}xf32>"
    kt = f"tensor<{heads}x{dim}x{length}xf32>"
    st = f"tensor<{heads}x{length}x{length}xf32>"
    rt = f"tensor<{heads}x{length}xf32>"
    id3 = "affine_map<(d0, d1, d2) -> (d0, d1, d2)>"
    row3 = "affine_map<(d0, d1, d2) -> (d0, d1)>"
    par = '["parallel", "parallel", "parallel"]'

    def unary(name, src, t, body):
        return (f"  {name} = linalg.generic {{indexing_maps = [{id3}, {id3}], "
                f"iterator_types = {par}}} ins({src} : {t}) outs(%e_{name[1:]} : {t}) {{\n"
                f"  ^bb0(%x: f32, %o: f32):\n{body}"
                f"    linalg.yield %y : f32\n  }} -> {t}\n")

    lines = [f"func.func @{kind}(%q: {qt}, %k: {qt}, %v: {qt}) -> {qt} {{",
             "  %zero = arith.constant 0.0 : f32",
             "  %one = arith.constant 1.0 : f32"]
    text = "\n".join(lines) + "\n"
    q, k = "%q", "%k"
    if kind == "linear":
        elu = ("    %pos = arith.cmpf ogt, %x, %zero : f32\n"
               "    %a = arith.addf %x, %one : f32\n"
               "    %b = math.exp %x : f32\n"
               "    %y = arith.select %pos, %a, %b : f32\n")
        text += f"  %e_fq = tensor.empty() : {qt}\n" + unary("%fq", q, qt, elu)
        text += f"  %e_fk = tensor.empty() : {qt}\n" + unary("%fk", k, qt, elu)
        q, k = "%fq", "%fk"
    text += (f"  %e_kt = tensor.empty() : {kt}\n"
             f"  %kt = linalg.transpose ins({k} : {qt}) outs(%e_kt : {kt}) permutation = [0, 2, 1]\n"
             f"  %e_s = tensor.empty() : {st}\n"
             f"  %sz = linalg.fill ins(%zero : f32) outs(%e_s : {st}) -> {st}\n"
             f"  %s = linalg.batch_matmul ins({q}, %kt : {qt}, {kt}) outs(%sz : {st}) -> {st}\n"
             f"  %e_o = tensor.empty() : {qt}\n"
             f"  %oz = linalg.fill ins(%zero : f32) outs(%e_o : {qt}) -> {qt}\n")
    if kind == "relu":
        text += (f"  %c = arith.constant {dim ** -0.5:.9e} : f32\n"
                 f"  %f = arith.constant {1.0 / length:.9e} : f32\n"
                 f"  %e_ss = tensor.empty() : {st}\n"
                 + unary("%ss", "%s", st, "    %y = arith.mulf %x, %c : f32\n")
                 + f"  %e_r = tensor.empty() : {st}\n"
                 + unary("%r", "%ss", st, "    %y = arith.maximumf %x, %zero : f32\n")
                 + f"  %e_p = tensor.empty() : {st}\n"
                 + unary("%p", "%r", st, "    %y = arith.mulf %x, %f : f32\n")
                 + f"  %out = linalg.batch_matmul ins(%p, %v : {st}, {qt}) outs(%oz : {qt}) -> {qt}\n")
    else:
        text += (f"  %num = linalg.batch_matmul ins(%s, %v : {st}, {qt}) outs(%oz : {qt}) -> {qt}\n"
                 f"  %e_r = tensor.empty() : {rt}\n"
                 f"  %rz = linalg.fill ins(%zero : f32) outs(%e_r : {rt}) -> {rt}\n"
                 f"  %den = linalg.reduce ins(%s : {st}) outs(%rz : {rt}) dimensions = [2]\n"
                 "    (%x: f32, %acc: f32) {\n"
                 "      %y = arith.addf %x, %acc : f32\n"
                 "      linalg.yield %y : f32\n    }\n"
                 "  %eps = arith.constant 1.0e-06 : f32\n"
                 f"  %out = linalg.generic {{indexing_maps = [{id3}, {row3}, {id3}], iterator_types = {par}}} "
                 f"ins(%num, %den : {qt}, {rt}) outs(%e_o : {qt}) {{\n"
                 "  ^bb0(%n: f32, %d: f32, %o: f32):\n"
                 "    %de = arith.addf %d, %eps : f32\n"
                 "    %y = arith.divf %n, %de : f32\n"
                 f"    linalg.yield %y : f32\n  }} -> {qt}\n")
    text += f"  return %out : {qt}\n}}\n"
    return text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--length", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for kind in ("relu", "linear"):
        with open(os.path.join(args.out, kind + ".mlir"), "w") as f:
            f.write(graph(kind, args.length, args.heads, args.dim))


if __name__ == "__main__":
    main()
