//===- Npy.cpp - NumPy .npy files -----------------------------------------===//

#include "attn-opt/Runtime/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir::attn;
using namespace mlir::attn::npy;
using llvm::StringRef;

size_t npy::byteWidth(DType type) {
  switch (type) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  }
  llvm_unreachable("unknown dtype");
}

const char *npy::name(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  llvm_unreachable("unknown dtype");
}

static const char *descr(DType type) {
  switch (type) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  }
  llvm_unreachable("unknown dtype");
}

int64_t Array::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string Array::describe() const {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + name(type);
}

static llvm::Error fail(StringRef path, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + msg);
}

/// The value of `key` in the header dictionary, up to the next top-level
/// comma or the closing brace.
static std::optional<StringRef> headerValue(StringRef header, StringRef key) {
  size_t k = header.find(("'" + key + "'").str());
  if (k == StringRef::npos)
    return std::nullopt;
  size_t colon = header.find(':', k);
  if (colon == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(colon + 1).ltrim();
  int depth = 0;
  size_t end = 0;
  for (; end < rest.size(); ++end) {
    char c = rest[end];
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  return rest.take_front(end).trim();
}

llvm::Expected<Array> npy::read(StringRef path) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return fail(path, "cannot open: " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return fail(path, "not a NumPy .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) |
                (static_cast<uint8_t>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail(path, "truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                   << (8 * i);
    headerStart = 12;
  } else {
    return fail(path, "unsupported .npy format version " +
                          llvm::Twine(static_cast<int>(major)));
  }
  if (bytes.size() < headerStart + headerLen)
    return fail(path, "truncated header");
  StringRef header = bytes.substr(headerStart, headerLen);

  std::optional<StringRef> d = headerValue(header, "descr");
  std::optional<StringRef> fortran = headerValue(header, "fortran_order");
  std::optional<StringRef> shapeText = headerValue(header, "shape");
  if (!d || !fortran || !shapeText)
    return fail(path, "malformed header: " + header.trim());
  StringRef dt = d->trim("'\"");
  Array a;
  if (dt == "<f4")
    a.type = DType::F32;
  else if (dt == "<f2")
    a.type = DType::F16;
  else if (dt == "<u2" || dt == "|V2" || dt == "<V2")
    a.type = DType::BF16;
  else if (dt == "<i4")
    a.type = DType::I32;
  else if (dt == "<i8")
    a.type = DType::I64;
  else
    return fail(path, "unsupported dtype '" + dt +
                          "' (supported: <f4, <f2, <u2 or |V2 for bf16, "
                          "<i4, <i8)");
  if (*fortran != "False")
    return fail(path, "Fortran-order arrays are not supported; save a "
                      "C-order array (numpy.ascontiguousarray)");
  StringRef dims = shapeText->trim("()");
  llvm::SmallVector<StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef p : parts) {
    p = p.trim();
    if (p.empty())
      continue;
    int64_t v;
    if (p.getAsInteger(10, v) || v < 0)
      return fail(path, "malformed shape " + *shapeText);
    a.shape.push_back(v);
  }
  size_t want = a.numElements() * byteWidth(a.type);
  size_t have = bytes.size() - headerStart - headerLen;
  if (have < want)
    return fail(path, "truncated data: expected " + llvm::Twine(want) +
                          " bytes for " + a.describe() + ", found " +
                          llvm::Twine(have));
  if (have > want)
    return fail(path, "unexpected trailing data: expected " +
                          llvm::Twine(want) + " bytes for " + a.describe() +
                          ", found " + llvm::Twine(have));
  const uint8_t *begin =
      reinterpret_cast<const uint8_t *>(bytes.data() + headerStart + headerLen);
  a.data.assign(begin, begin + want);
  return a;
}

llvm::Error npy::write(StringRef path, const Array &array) {
  std::string shape;
  for (auto [i, d] : llvm::enumerate(array.shape))
    shape += (i ? ", " : "") + std::to_string(d);
  if (array.shape.size() == 1)
    shape += ",";
  std::string dict = "{'descr': '" + std::string(descr(array.type)) +
                     "', 'fortran_order': False, 'shape': (" + shape +
                     "), }";
  // Pad so that the data starts on a 64-byte boundary.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';

  std::string tmp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return fail(path, "cannot write: " + ec.message());
    os << "\x93NUMPY";
    os << static_cast<char>(1) << static_cast<char>(0);
    os << static_cast<char>(dict.size() & 0xff)
       << static_cast<char>((dict.size() >> 8) & 0xff);
    os << dict;
    os.write(reinterpret_cast<const char *>(array.data.data()),
             array.data.size());
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return fail(path, "write error");
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return fail(path, "cannot write: " + ec.message());
  }
  return llvm::Error::success();
}

float npy::halfToFloat(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

uint16_t npy::floatToHalf(float value) {
  _Float16 h = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

float npy::bf16ToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t npy::floatToBf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if ((u & 0x7fffffff) > 0x7f800000) // NaN: keep it a (quiet) NaN.
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1); // Round to nearest even.
  return static_cast<uint16_t>(u >> 16);
}

float npy::loadFloat(const Array &array, int64_t i) {
  switch (array.type) {
  case DType::F32: {
    float f;
    std::memcpy(&f, array.data.data() + 4 * i, 4);
    return f;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, array.data.data() + 2 * i, 2);
    return array.type == DType::F16 ? halfToFloat(bits) : bf16ToFloat(bits);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, array.data.data() + 4 * i, 4);
    return static_cast<float>(v);
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, array.data.data() + 8 * i, 8);
    return static_cast<float>(v);
  }
  }
  llvm_unreachable("unknown dtype");
}

void npy::storeFloat(Array &array, int64_t i, float value) {
  switch (array.type) {
  case DType::F32:
    std::memcpy(array.data.data() + 4 * i, &value, 4);
    return;
  case DType::F16:
  case DType::BF16: {
    uint16_t bits = array.type == DType::F16 ? floatToHalf(value)
                                             : floatToBf16(value);
    std::memcpy(array.data.data() + 2 * i, &bits, 2);
    return;
  }
  case DType::I32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(array.data.data() + 4 * i, &v, 4);
    return;
  }
  case DType::I64: {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(array.data.data() + 8 * i, &v, 8);
    return;
  }
  }
}
