#include "Npz.h"

#include <zip.h>

#include <cstring>
#include <memory>
#include <regex>

namespace kilnrun {
namespace {
/// The Kiln dtype of a numpy descr such as "<f4", or 0.
int32_t dtypeOf(const std::string &descr) {
  for (const kiln::client::DType &t : kiln::client::kDTypes)
    if (t.npyDescr && descr == t.npyDescr)
      return t.onnx;
  return 0;
}

/// One .npy file's bytes as a tensor.
HostTensor parseNpy(const std::vector<char> &bytes, const std::string &what) {
  // Magic "\x93NUMPY", major, minor, header length (2 bytes for 1.x, 4 for
  // 2.x and 3.x), then a Python dict literal padded with spaces.
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw Error(what + " is not a .npy array");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t lenBytes = major == 1 ? 2 : 4, start = 8 + lenBytes, headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  if (bytes.size() < start + headerLen)
    throw Error(what + ": truncated .npy header");
  std::string header(bytes.data() + start, headerLen);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']+)'")))
    throw Error(what + ": .npy header without 'descr'");
  std::string descr = m[1];
  if (std::regex_search(header, m, std::regex("'fortran_order':\\s*True")))
    throw Error(what + " is in Fortran order; save it C-contiguous "
                       "(np.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    throw Error(what + ": .npy header without 'shape'");
  std::vector<int64_t> shape;
  std::string dims = m[1];
  static const std::regex number("\\d+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end;
       it != end; ++it)
    shape.push_back(std::stoll(it->str()));
  int32_t dtype = dtypeOf(descr);
  if (!dtype)
    throw Error(what + " has numpy dtype '" + descr +
                "', which Kiln does not read (use little-endian float, int, "
                "uint or bool)");
  HostTensor t(dtype, shape);
  size_t data = start + headerLen;
  if (bytes.size() - data != t.bytes())
    throw Error(what + " holds " + std::to_string(bytes.size() - data) +
                " bytes of data; its header says " + std::to_string(t.bytes()));
  std::memcpy(t.data(), bytes.data() + data, t.bytes());
  return t;
}
} // namespace

std::vector<std::pair<std::string, HostTensor>> readNpz(const std::string &path) {
  int err = 0;
  std::unique_ptr<zip_t, int (*)(zip_t *)> archive(
      zip_open(path.c_str(), ZIP_RDONLY, &err), zip_close);
  if (!archive) {
    zip_error_t error;
    zip_error_init_with_code(&error, err);
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error("cannot read " + path + " as a .npz (zip) archive: " + why);
  }
  std::vector<std::pair<std::string, HostTensor>> arrays;
  zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    if (zip_stat_index(archive.get(), i, 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
      throw Error(path + ": cannot read entry " + std::to_string(i));
    std::string name = st.name;
    std::string what = path + ": array '" + name + "'";
    std::unique_ptr<zip_file_t, int (*)(zip_file_t *)> file(
        zip_fopen_index(archive.get(), i, 0), zip_fclose);
    if (!file)
      throw Error(what + " cannot be opened");
    std::vector<char> bytes(st.size);
    if (zip_fread(file.get(), bytes.data(), st.size) !=
        static_cast<zip_int64_t>(st.size))
      throw Error(what + " cannot be read");
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
      name.resize(name.size() - 4);
    arrays.push_back({name, parseNpy(bytes, what)});
  }
  return arrays;
}

} // namespace kilnrun
