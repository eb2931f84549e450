//===- TestMaskLayout.cpp - Print mask tile classifications ---------------===//
//
// `test-attn-mask-layout{block-q=N block-k=M}` prints, for every
// attn.attention op, the classification of each (query tile, key tile) of
// each query head by the mask library: `#` full, `+` partial, `.` empty.
// Heads with the same picture are printed once.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
struct TestMaskLayoutPass
    : public PassWrapper<TestMaskLayoutPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestMaskLayoutPass)

  TestMaskLayoutPass() = default;
  TestMaskLayoutPass(const TestMaskLayoutPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-attn-mask-layout"; }
  StringRef getDescription() const final {
    return "Print the mask library's tile classification of attn.attention "
           "ops";
  }

  Option<int64_t> blockQ{*this, "block-q", llvm::cl::desc("query tile size"),
                         llvm::cl::init(64)};
  Option<int64_t> blockK{*this, "block-k", llvm::cl::desc("key tile size"),
                         llvm::cl::init(64)};

  void runOnOperation() override {
    if (blockQ < 1 || blockK < 1) {
      getOperation()->emitError("block-q and block-k must be positive");
      return signalPassFailure();
    }
    raw_ostream &os = llvm::outs();
    getOperation()->walk([&](AttentionOp op) {
      mask::Mask m = op.getMask();
      AttentionDims d = op.getDims();
      os << "mask layout " << d.queryLen << "x" << d.keyLen << " in tiles of "
         << blockQ << "x" << blockK << "\n";
      std::string previous;
      for (int64_t h = 0; h < d.queryHeads; ++h) {
        std::string picture;
        for (int64_t q = 0; q < d.queryLen; q += blockQ) {
          for (int64_t k = 0; k < d.keyLen; k += blockK) {
            mask::Tile t{q, std::min<int64_t>(q + blockQ, d.queryLen), k,
                         std::min<int64_t>(k + blockK, d.keyLen)};
            switch (m.classify(h, t)) {
            case mask::TileKind::Full:
              picture += '#';
              break;
            case mask::TileKind::Partial:
              picture += '+';
              break;
            case mask::TileKind::Empty:
              picture += '.';
              break;
            }
          }
          picture += '\n';
        }
        if (picture == previous)
          continue;
        os << "head " << h << ":\n" << picture;
        previous = picture;
      }
    });
  }
};
} // namespace

namespace mlir::attn::test {
void registerTestMaskLayoutPass() { PassRegistration<TestMaskLayoutPass>(); }
} // namespace mlir::attn::test
