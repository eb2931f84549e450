//===- TestPrintBlockLayout.cpp - Print block layouts of mask patterns ----===//
//
// `test-attn-print-block-layout{block-q=N block-k=M}` prints, for every
// attn.attention op, its `layout` attribute or else the block layout the
// block-layout analysis computes: a picture per distinct head layout
// (`#` full, `+` partial, `.` empty) and the compressed (CSR) lists.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Mask/BlockLayout.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
struct TestPrintBlockLayoutPass
    : public PassWrapper<TestPrintBlockLayoutPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintBlockLayoutPass)

  TestPrintBlockLayoutPass() = default;
  TestPrintBlockLayoutPass(const TestPrintBlockLayoutPass &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-attn-print-block-layout"; }
  StringRef getDescription() const final {
    return "Print the block layouts of attn ops (the block-layout analysis)";
  }

  Option<int64_t> blockQ{*this, "block-q", llvm::cl::desc("query block"),
                         llvm::cl::init(64)};
  Option<int64_t> blockK{*this, "block-k", llvm::cl::desc("key block"),
                         llvm::cl::init(64)};

  void print(const BlockLayout &l, int64_t queryLen, int64_t keyLen) {
    raw_ostream &os = llvm::outs();
    os << "block layout " << queryLen << "x" << keyLen << " in blocks of "
       << l.getBlockQ() << "x" << l.getBlockK() << ": " << l.countVisited()
       << " of " << l.countBlocks() << " blocks visited, " << l.countFull()
       << " full\n";
    for (size_t i = 0; i < l.getLayouts().size(); ++i) {
      os << "heads";
      for (int64_t h = 0; h < l.getNumHeads(); ++h)
        if (l.getLayoutOfHead(h) == static_cast<int64_t>(i))
          os << " " << h;
      os << ":\n";
      int64_t head = 0;
      while (l.getLayoutOfHead(head) != static_cast<int64_t>(i))
        ++head;
      os << l.render(head);
      const BlockLayout::Compressed &c = l.getLayouts()[i];
      auto list = [&](StringRef name, const std::vector<int32_t> &v) {
        os << name << " [";
        llvm::interleaveComma(v, os);
        os << "]\n";
      };
      list("full offsets", c.fullOffsets);
      list("full blocks", c.fullBlocks);
      list("partial offsets", c.partialOffsets);
      list("partial blocks", c.partialBlocks);
    }
  }

  void runOnOperation() override {
    if (blockQ < 1 || blockK < 1) {
      getOperation()->emitError("block-q and block-k must be positive");
      return signalPassFailure();
    }
    getOperation()->walk([&](AttentionOp op) {
      AttentionDims d = op.getDims();
      // The op's own layout when it has one, else the one of these blocks.
      BlockLayout layout =
          op.getLayoutAttr()
              ? op.getLayoutAttr().getLayout()
              : BlockLayout::compute(op.getPatternMask(), blockQ, blockK);
      print(layout, d.queryLen, d.keyLen);
    });
  }
};
} // namespace

namespace mlir::attn::test {
void registerTestPrintBlockLayoutPass() {
  PassRegistration<TestPrintBlockLayoutPass>();
}
} // namespace mlir::attn::test
