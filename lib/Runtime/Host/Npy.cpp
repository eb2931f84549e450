//===- Npy.cpp - NumPy .npy files -----------------------------------------===//

#include "attn-opt/Runtime/Host/Npy.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::attn;
using namespace mlir::attn::npy;

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
  case DType::Bool:
    return 1;
  }
  std::abort();
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
  case DType::Bool:
    return "i1";
  }
  std::abort();
}

std::optional<DType> npy::parseDType(const std::string &text) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64,
                  DType::Bool})
    if (text == name(t))
      return t;
  return std::nullopt;
}

/// The dtype string of the .npy header.
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
  case DType::Bool:
    return "|b1";
  }
  std::abort();
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

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

static std::string trim(const std::string &s, const char *chars = " \t\n") {
  size_t b = s.find_first_not_of(chars);
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

/// The value of `key` in the header dictionary, up to the next top-level
/// comma or the closing brace.
static std::optional<std::string> headerValue(const std::string &header,
                                              const std::string &key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    return std::nullopt;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    return std::nullopt;
  int depth = 0;
  size_t end = colon + 1;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  return trim(header.substr(colon + 1, end - colon - 1));
}

/// An open file descriptor, closed on every path out of npy::read.
namespace {
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};
} // namespace

/// Reads `n` bytes at `offset` of `fd` into `out`; false (with errno) on a
/// read error or an early end (a file that shrank under the reader).
static bool readAt(int fd, uint64_t offset, size_t n, char *out) {
  while (n > 0) {
    ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      if (got == 0)
        errno = EIO;
      return false;
    }
    out += got;
    offset += got;
    n -= got;
  }
  return true;
}

/// The most header bytes an .npy file may have (NumPy writes a few hundred;
/// format 2 allows 4 GiB, which a hostile file would use to make the reader
/// allocate them).
static constexpr size_t kMaxHeaderBytes = 1 << 20;

/// Parses the header of an .npy file from `prefix` (its first bytes) into
/// the type and shape of `a`, and the offset of its data into `dataStart`;
/// `needed` is set when `prefix` is too short to hold the whole header.
/// Returns the error or an empty string.
static std::string parseHeader(const std::string &prefix, Array &a,
                               size_t &dataStart, size_t &needed) {
  needed = 0;
  if (prefix.size() < 10 || prefix.compare(0, 6, "\x93NUMPY") != 0)
    return "not a NumPy .npy file (bad magic)";
  uint8_t major = prefix[6];
  size_t headerLen = 0, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(prefix[8]) |
                (static_cast<uint8_t>(prefix[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (prefix.size() < 12)
      return "truncated header";
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(prefix[8 + i]))
                   << (8 * i);
    headerStart = 12;
  } else {
    return "unsupported .npy format version " + std::to_string(major);
  }
  if (headerLen > kMaxHeaderBytes)
    return "header of " + std::to_string(headerLen) + " bytes (at most " +
           std::to_string(kMaxHeaderBytes) + " are read)";
  if (prefix.size() < headerStart + headerLen) {
    needed = headerStart + headerLen;
    return "truncated header";
  }
  std::string header = prefix.substr(headerStart, headerLen);
  dataStart = headerStart + headerLen;

  std::optional<std::string> d = headerValue(header, "descr");
  std::optional<std::string> fortran = headerValue(header, "fortran_order");
  std::optional<std::string> shapeText = headerValue(header, "shape");
  if (!d || !fortran || !shapeText)
    return "malformed header: " + trim(header);
  std::string dt = trim(*d, "'\"");
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
  else if (dt == "|b1")
    a.type = DType::Bool;
  else
    return "unsupported dtype '" + dt +
           "' (supported: <f4, <f2, <u2 or |V2 for bf16, <i4, <i8, |b1)";
  if (*fortran != "False")
    return "Fortran-order arrays are not supported; save a C-order array "
           "(numpy.ascontiguousarray)";
  std::string dims = trim(*shapeText, "() ");
  size_t pos = 0;
  // The byte count of the data, which must fit in memory's address range.
  uint64_t bytes = byteWidth(a.type);
  while (pos <= dims.size()) {
    size_t comma = dims.find(',', pos);
    if (comma == std::string::npos)
      comma = dims.size();
    std::string p = trim(dims.substr(pos, comma - pos));
    pos = comma + 1;
    if (p.empty())
      continue;
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(p.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < 0)
      return "malformed shape " + *shapeText;
    if (v != 0 && bytes > (uint64_t(1) << 62) / static_cast<uint64_t>(v))
      return "shape " + *shapeText + " holds more bytes than can be addressed";
    bytes *= static_cast<uint64_t>(v);
    a.shape.push_back(v);
  }
  return "";
}

/// Reads the .npy file at `path` into `a`: only a regular file, and only
/// the bytes its header declares (a device such as /dev/zero, a FIFO, or a
/// file longer than its tensor is refused before its data is read).
/// Returns the error or an empty string.
static std::string readNpy(const std::string &path, Array &a) {
  Fd file;
  // O_NONBLOCK: opening a FIFO with no writer must not wait for one.
  file.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (file.fd < 0)
    return "cannot open: " + std::string(std::strerror(errno));
  struct stat st;
  if (::fstat(file.fd, &st) != 0)
    return "cannot read: " + std::string(std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return "is a directory, not an .npy file";
  if (!S_ISREG(st.st_mode))
    return std::string("is not a regular file (") +
           (S_ISFIFO(st.st_mode)   ? "a FIFO"
            : S_ISCHR(st.st_mode)  ? "a character device"
            : S_ISBLK(st.st_mode)  ? "a block device"
            : S_ISSOCK(st.st_mode) ? "a socket"
                                   : "not a file") +
           "); .npy inputs are read from regular files only";
  uint64_t size = static_cast<uint64_t>(st.st_size);
  std::string prefix(std::min<uint64_t>(size, 4096), '\0');
  if (!readAt(file.fd, 0, prefix.size(), prefix.data()))
    return "cannot read: " + std::string(std::strerror(errno));
  size_t dataStart = 0, needed = 0;
  std::string error = parseHeader(prefix, a, dataStart, needed);
  if (needed && needed <= size) {
    prefix.resize(needed);
    if (!readAt(file.fd, 0, needed, prefix.data()))
      return "cannot read: " + std::string(std::strerror(errno));
    a.shape.clear();
    error = parseHeader(prefix, a, dataStart, needed);
  }
  if (!error.empty())
    return error;
  uint64_t want = static_cast<uint64_t>(a.numElements()) * byteWidth(a.type);
  uint64_t have = size - dataStart;
  if (have < want)
    return "truncated data: expected " + std::to_string(want) + " bytes for " +
           a.describe() + ", found " + std::to_string(have);
  if (have > want)
    return "unexpected trailing data: expected " + std::to_string(want) +
           " bytes for " + a.describe() + ", found " + std::to_string(have);
  a.data.resize(want);
  if (want && !readAt(file.fd, dataStart, want,
                      reinterpret_cast<char *>(a.data.data())))
    return "cannot read: " + std::string(std::strerror(errno));
  if (a.type == DType::Bool)
    for (size_t i = 0; i < want; ++i)
      if (a.data[i] > 1)
        return "bool element " + std::to_string(i) + " is the byte " +
               std::to_string(a.data[i]) + ", not 0 or 1";
  return "";
}

std::optional<Array> npy::read(const std::string &path, std::string &error) {
  Array a;
  error = readNpy(path, a);
  if (!error.empty()) {
    error = path + ": " + error;
    return std::nullopt;
  }
  return a;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// The .npy header of `array`.
static std::string headerOf(const npy::Array &array) {
  std::string shape;
  for (size_t i = 0; i < array.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(array.shape[i]);
  if (array.shape.size() == 1)
    shape += ",";
  std::string dict = "{'descr': '" + std::string(descr(array.type)) +
                     "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Pad so that the data starts on a 64-byte boundary.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string head = "\x93NUMPY";
  head += static_cast<char>(1);
  head += static_cast<char>(0);
  head += static_cast<char>(dict.size() & 0xff);
  head += static_cast<char>((dict.size() >> 8) & 0xff);
  head += dict;
  return head;
}

/// Writes `array` to the temporary file `tmp`; on failure removes it.
static bool writeTemp(const std::string &path, const std::string &tmp,
                      const npy::Array &array, std::string &error) {
  std::string head = headerOf(array);
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    error = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size() &&
            std::fwrite(array.data.data(), 1, array.data.size(), f) ==
                array.data.size();
  ok &= std::fclose(f) == 0;
  if (!ok) {
    std::remove(tmp.c_str());
    error = path + ": write error";
  }
  return ok;
}

std::optional<std::string> npy::outputTarget(const std::string &path,
                                             std::string &error) {
  struct stat st;
  std::string target = path;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char *resolved = ::realpath(path.c_str(), nullptr);
    if (!resolved) {
      error = path + ": a symbolic link to a file that cannot be resolved (" +
              std::strerror(errno) + "); outputs are written through links " +
              "to existing files only";
      return std::nullopt;
    }
    target = resolved;
    std::free(resolved);
  }
  if (::stat(target.c_str(), &st) != 0)
    return target; // a new file
  if (S_ISDIR(st.st_mode)) {
    error = path + ": is a directory; give a file name for the output";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + ": is not a regular file (a device, FIFO or socket); " +
            "outputs replace regular files only";
    return std::nullopt;
  }
  return target;
}

bool npy::write(const std::string &path, const Array &array,
                std::string &error) {
  return writeAll({{path, &array}}, error);
}

bool npy::writeAll(const std::vector<FileToWrite> &files, std::string &error) {
  // Temporary names unique to this process, next to each target (a rename
  // within one file system).
  std::vector<std::string> temps;
  auto removeTemps = [&](size_t from) {
    for (size_t i = from; i < temps.size(); ++i)
      std::remove(temps[i].c_str());
  };
  // Each file's target: a symbolic link is written through.
  std::vector<std::string> targets;
  for (const FileToWrite &file : files) {
    std::optional<std::string> target = outputTarget(file.path, error);
    if (!target)
      return false;
    targets.push_back(*target);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const FileToWrite &file = files[i];
    temps.push_back(targets[i] + ".tmp" + std::to_string(::getpid()));
    if (!writeTemp(file.path, temps.back(), *file.array, error)) {
      temps.pop_back();
      removeTemps(0);
      return false;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (std::rename(temps[i].c_str(), targets[i].c_str()) != 0) {
      error = files[i].path + ": cannot write: " + std::strerror(errno);
      removeTemps(i);
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Elements
//===----------------------------------------------------------------------===//

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

/// The element of type T at index i of `data`.
template <typename T>
static T loadAs(const void *data, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t *>(data) + sizeof(T) * i,
              sizeof(T));
  return v;
}
template <typename T>
static void storeAs(void *data, int64_t i, T v) {
  std::memcpy(static_cast<uint8_t *>(data) + sizeof(T) * i, &v, sizeof(T));
}

double npy::loadElement(DType type, const void *data, int64_t i) {
  switch (type) {
  case DType::F32:
    return loadAs<float>(data, i);
  case DType::F16:
    return halfToFloat(loadAs<uint16_t>(data, i));
  case DType::BF16:
    return bf16ToFloat(loadAs<uint16_t>(data, i));
  case DType::I32:
    return loadAs<int32_t>(data, i);
  case DType::I64:
    return static_cast<double>(loadAs<int64_t>(data, i));
  case DType::Bool:
    return loadAs<uint8_t>(data, i) != 0 ? 1.0 : 0.0;
  }
  std::abort();
}

void npy::storeElement(DType type, void *data, int64_t i, double value) {
  switch (type) {
  case DType::F32:
    return storeAs(data, i, static_cast<float>(value));
  case DType::F16:
    return storeAs(data, i, floatToHalf(static_cast<float>(value)));
  case DType::BF16:
    return storeAs(data, i, floatToBf16(static_cast<float>(value)));
  case DType::I32:
    return storeAs(data, i, static_cast<int32_t>(value));
  case DType::I64:
    return storeAs(data, i, static_cast<int64_t>(value));
  case DType::Bool:
    return storeAs(data, i, static_cast<uint8_t>(value != 0));
  }
}

float npy::loadFloat(const Array &array, int64_t i) {
  return static_cast<float>(loadElement(array.type, array.data.data(), i));
}

void npy::storeFloat(Array &array, int64_t i, float value) {
  storeElement(array.type, array.data.data(), i, value);
}
