//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reading and writing the arrays the tools exchange with users: NumPy .npy
// files (format versions 1.0 to 3.0), C order, little endian. Part of the
// LLVM-free host library (no LLVM or MLIR needed where it runs).
//
// Element types: f32 (`<f4`), f16 (`<f2`), bf16, i32 (`<i4`), i64 (`<i8`),
// bool (`|b1`, bytes 0 or 1; other bytes are rejected).
// NumPy has no bfloat16, so a bf16 array is stored as its raw 16-bit
// patterns with dtype `<u2` (also read: `|V2`, as ml_dtypes writes it).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOST_NPY_H
#define ATTN_RUNTIME_HOST_NPY_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::npy {

enum class DType { F32, F16, BF16, I32, I64, Bool };

/// Bytes per element.
size_t byteWidth(DType type);
/// "f32", "f16", "bf16", "i32", "i64", "i1" (bool).
const char *name(DType type);
/// The type named `name` ("f32", ...), if any.
std::optional<DType> parseDType(const std::string &name);

/// An array in C order.
struct Array {
  DType type = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numElements() const;
  /// "1x8x64x64xf32".
  std::string describe() const;
};

/// Reads `path`. On failure returns std::nullopt and sets `error` to a
/// message that names the file and says what is wrong (not an .npy,
/// unsupported dtype, Fortran order, truncated data, data beyond the
/// declared tensor, not a regular file: a device such as /dev/zero or a
/// FIFO is refused without reading it).
std::optional<Array> read(const std::string &path, std::string &error);

/// The file an output named `path` goes to: `path` itself, or, when `path`
/// is a symbolic link, the file it resolves to (outputs are written through
/// links, replacing the target). A directory, a device, a FIFO or a socket
/// (at `path` or as the link's target) and a link that does not resolve are
/// refused: std::nullopt, with the reason in `error`.
std::optional<std::string> outputTarget(const std::string &path,
                                        std::string &error);

/// Writes `array` to `path` atomically: a temporary file renamed into place,
/// so a failure never leaves a partial file behind. On failure returns false
/// and sets `error`.
bool write(const std::string &path, const Array &array, std::string &error);

/// One file of a set written by writeAll.
struct FileToWrite {
  std::string path;
  const Array *array;
};

/// Writes the files of `files` as a set: each to a temporary file next to
/// its target (outputTarget: a link is written through), renamed into place
/// only once every one was written. On a failure no temporary file is left, no
/// new file appears and every existing file is untouched (unless a rename
/// itself fails midway, which leaves the files renamed before it). Returns
/// false and sets `error`.
bool writeAll(const std::vector<FileToWrite> &files, std::string &error);

/// Element conversions.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);

/// Element `i` of raw data of `type` as a double, and back (rounding to the
/// type; integers truncate).
double loadElement(DType type, const void *data, int64_t i);
void storeElement(DType type, void *data, int64_t i, double value);

/// Element `i` of an array as a float, and back.
float loadFloat(const Array &array, int64_t i);
void storeFloat(Array &array, int64_t i, float value);

} // namespace mlir::attn::npy

#endif // ATTN_RUNTIME_HOST_NPY_H
