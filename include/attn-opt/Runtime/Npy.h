//===- Npy.h - NumPy .npy files -------------------------------------*- C++ -*-===//
//
// Reading and writing the arrays attn-run exchanges with users: NumPy .npy
// files (format versions 1.0 to 3.0), C order, little endian.
//
// Element types: f32 (`<f4`), f16 (`<f2`), bf16, i32 (`<i4`), i64 (`<i8`).
// NumPy has no bfloat16, so a bf16 array is stored as its raw 16-bit
// patterns with dtype `<u2` (also read: `|V2`, as ml_dtypes writes it).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_NPY_H
#define ATTN_RUNTIME_NPY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::attn::npy {

enum class DType { F32, F16, BF16, I32, I64 };

/// Bytes per element.
size_t byteWidth(DType type);
/// "f32", "f16", "bf16", "i32", "i64".
const char *name(DType type);

/// An array in C order.
struct Array {
  DType type = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numElements() const;
  /// "1x8x64x64xf32".
  std::string describe() const;
};

/// Reads `path`. Errors name the file and say what is wrong (not an .npy,
/// unsupported dtype, Fortran order, truncated data, ...).
llvm::Expected<Array> read(llvm::StringRef path);

/// Writes `array` to `path` atomically: a temporary file renamed into place,
/// so a failure never leaves a partial file behind.
llvm::Error write(llvm::StringRef path, const Array &array);

/// Element conversions.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);

/// Element `i` of a float array (f32, f16 or bf16) as a float.
float loadFloat(const Array &array, int64_t i);
/// Stores `value` into element `i` of a float array, rounding to its type.
void storeFloat(Array &array, int64_t i, float value);

} // namespace mlir::attn::npy

#endif // ATTN_RUNTIME_NPY_H
