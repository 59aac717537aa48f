//===- Model.cpp - the one client of the model ABI ------------------------===//

#include "kiln/Client/Model.h"

#include <algorithm>
#include <cstddef>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

namespace kiln::client {

namespace {

// A status's message, never empty: the ABI promises a message, but a model
// is not trusted with more than it has to be.
std::string statusText(kiln_status s) {
  return s.message && *s.message ? s.message
                                 : "status " + std::to_string(s.code);
}

std::string text(const char *s) { return s ? s : ""; }

// Element count of a shape of non-negative dimensions, or false when the
// bytes of `elementSize`-byte elements do not fit in a size_t.
bool countElements(const std::vector<int64_t> &shape, size_t elementSize,
                   size_t &count) {
  size_t n = 1, bytes;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, static_cast<size_t>(d), &n))
      return false;
  count = n;
  return !__builtin_mul_overflow(n, elementSize, &bytes);
}

// Copies one tensor description out of the metadata, rejecting what would
// make a client read out of bounds or size a buffer wrongly.
TensorInfo copyTensor(const kiln_tensor_info &t, const std::string &what,
                      size_t (*modelDtypeSize)(int32_t)) {
  if (!t.name)
    throw Error(what + " has no name");
  std::string named = what + " '" + t.name + "'";
  if (t.rank < 0 || (t.rank > 0 && !t.shape))
    throw Error(named + " has an invalid rank " + std::to_string(t.rank));
  TensorInfo info;
  info.name = t.name;
  if (t.rank > 0)
    info.shape.assign(t.shape, t.shape + t.rank);
  info.type = findDType(t.dtype);
  if (!info.type)
    throw Error(named + " has element type " + dtypeName(t.dtype) +
                ", which Kiln does not support");
  size_t theirs = modelDtypeSize(t.dtype);
  if (theirs != info.type->size)
    throw Error(named + ": the model's kiln_dtype_size(" +
                std::to_string(t.dtype) + ") is " + std::to_string(theirs) +
                "; expected " + std::to_string(info.type->size));
  for (int64_t d : info.shape)
    if (d < 0)
      throw Error(named + " has a negative dimension in shape " +
                  shapeText(info.shape));
  size_t count;
  if (!countElements(info.shape, info.type->size, count))
    throw Error(named + " has shape " + shapeText(info.shape) +
                ", too large to hold");
  return info;
}

template <typename Fn>
void lookUp(void *handle, const char *symbol, Fn &fn, const std::string &path) {
  dlerror();
  void *p = dlsym(handle, symbol);
  if (!p)
    throw Error(path + " is not a Kiln model: it does not export " + symbol);
  fn = reinterpret_cast<Fn>(p);
}

} // namespace

Error::Error(const char *call, kiln_status status)
    : std::runtime_error(std::string(call) + " failed: " + statusText(status)),
      code_(status.code), statusMessage_(statusText(status)) {}

const char *statusCodeName(kiln_status_code code) {
  switch (code) {
  case KILN_OK:
    return "OK";
  case KILN_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case KILN_UNSUPPORTED_ISA:
    return "UNSUPPORTED_ISA";
  case KILN_OUT_OF_MEMORY:
    return "OUT_OF_MEMORY";
  case KILN_ARENA_TOO_SMALL:
    return "ARENA_TOO_SMALL";
  case KILN_NO_DEVICE:
    return "NO_DEVICE";
  case KILN_INTERNAL:
    return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    s += (d ? "," : "") + std::to_string(shape[d]);
  return s + "]";
}

size_t TensorInfo::elementCount() const {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

/// Reads section `i` of the file into `out` (at most `limit` bytes); false
/// when it lies outside the file or is larger.
static bool readSection(int fd, const Elf64_Shdr &sh, uint64_t size,
                        std::string &out, uint64_t limit) {
  if (sh.sh_type == SHT_NOBITS || sh.sh_offset > size ||
      sh.sh_size > size - sh.sh_offset || sh.sh_size > limit)
    return false;
  out.resize(sh.sh_size);
  return pread(fd, out.data(), out.size(), (off_t)sh.sh_offset) ==
         (ssize_t)out.size();
}

/// The Kiln checks of a shared object, before dlopen runs any of its code:
/// it defines the entry points of runtime.h in its dynamic symbol table and
/// needs no library but the C library (a Kiln model loads with libc only).
/// Returns why not, or "".
static std::string checkDynamicSection(int fd, const Elf64_Ehdr &eh,
                                       uint64_t size) {
  constexpr uint64_t kLimit = 64u << 20; // bytes of one symbol or string table
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
      (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff ||
      eh.e_shnum == 0)
    return "its section headers lie outside the file";
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (pread(fd, sections.data(), sections.size() * sizeof(Elf64_Shdr),
            (off_t)eh.e_shoff) !=
      (ssize_t)(sections.size() * sizeof(Elf64_Shdr)))
    return "its section headers cannot be read";
  std::set<std::string> defined, needed;
  for (const Elf64_Shdr &sh : sections) {
    if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_DYNAMIC)
      continue;
    if (sh.sh_link >= sections.size())
      return "a dynamic section names no string table";
    std::string table, strings;
    if (!readSection(fd, sh, size, table, kLimit) ||
        !readSection(fd, sections[sh.sh_link], size, strings, kLimit))
      return "its dynamic sections lie outside the file";
    auto name = [&](uint64_t offset) {
      if (offset >= strings.size())
        return std::string();
      return std::string(strings.c_str() + offset,
                         strnlen(strings.c_str() + offset,
                                 strings.size() - offset));
    };
    if (sh.sh_type == SHT_DYNSYM) {
      for (size_t at = 0; at + sizeof(Elf64_Sym) <= table.size();
           at += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        std::memcpy(&sym, table.data() + at, sizeof sym);
        if (sym.st_shndx != SHN_UNDEF && ELF64_ST_TYPE(sym.st_info) == STT_FUNC)
          defined.insert(name(sym.st_name));
      }
    } else {
      for (size_t at = 0; at + sizeof(Elf64_Dyn) <= table.size();
           at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn;
        std::memcpy(&dyn, table.data() + at, sizeof dyn);
        if (dyn.d_tag == DT_NEEDED)
          needed.insert(name(dyn.d_un.d_val));
      }
    }
  }
  for (const char *entry :
       {"kiln_get_model_info", "kiln_check_cpu", "kiln_session_create",
        "kiln_run", "kiln_session_destroy", "kiln_dtype_size"})
    if (!defined.count(entry))
      return std::string("it does not export ") + entry;
  static const std::set<std::string> libc = {
      "libc.so.6",       "libm.so.6",    "ld-linux-x86-64.so.2",
      "libpthread.so.0", "libdl.so.2",   "librt.so.1"};
  for (const std::string &lib : needed)
    if (!libc.count(lib))
      return "it needs " + lib +
             ", but a Kiln model needs only the C library";
  return "";
}

/// Checks, before dlopen maps it, that `file` is a 64-bit little-endian
/// x86-64 ELF shared object whose program headers and loadable segments lie
/// inside the file: dlopen maps segments past the end of a truncated file,
/// and the first touch of them is a SIGBUS that kills the host process.
static void checkElf(const std::string &path, const std::string &file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot load " + path + ": " + std::strerror(errno));
  struct stat st;
  Elf64_Ehdr eh;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh;
  std::string why;
  if (!ok)
    why = "not a regular file of at least an ELF header";
  else if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
           eh.e_ident[EI_CLASS] != ELFCLASS64 ||
           eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_DYN ||
           eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(Elf64_Phdr))
    why = "not an x86-64 ELF shared object";
  uint64_t size = ok ? (uint64_t)st.st_size : 0;
  if (why.empty() && (eh.e_phoff > size ||
                      (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) >
                          size - eh.e_phoff))
    why = "its program headers lie past the end of the file";
  for (unsigned i = 0; why.empty() && i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) !=
        (ssize_t)sizeof ph)
      why = "its program headers cannot be read";
    else if (ph.p_type == PT_LOAD &&
             (ph.p_offset > size || ph.p_filesz > size - ph.p_offset))
      why = "it is truncated: segment " + std::to_string(i) + " ends at byte " +
            std::to_string(ph.p_offset + ph.p_filesz) + " of " +
            std::to_string(size);
  }
  if (why.empty())
    why = checkDynamicSection(fd, eh, size);
  ::close(fd);
  if (why.rfind("it does not export ", 0) == 0) // as lookUp says it
    throw Error(path + " is not a Kiln model: " + why);
  if (!why.empty())
    throw Error("cannot load " + path + ": " + why +
                "; is it a model.so written by kiln-compile?");
}

std::shared_ptr<const Model> Model::open(const std::string &path) {
  std::shared_ptr<Model> model(new Model(path));
  // dlopen searches the library path for a bare file name; users mean ./name.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  checkElf(path, file);
  // RTLD_LOCAL keeps this model's kiln_* symbols out of the global scope, so
  // the next model's calls bind to its own definitions.
  model->handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!model->handle_) {
    const char *why = dlerror();
    throw Error("cannot load " + path + ": " + (why ? why : "dlopen failed"));
  }
  model->resolveEntryPoints();
  model->copyMetadata();
  return model;
}

Model::~Model() {
  if (handle_)
    dlclose(handle_);
}

void Model::resolveEntryPoints() {
  lookUp(handle_, "kiln_get_model_info", getModelInfo_, path_);
  lookUp(handle_, "kiln_check_cpu", checkCpu_, path_);
  lookUp(handle_, "kiln_session_create", sessionCreate_, path_);
  lookUp(handle_, "kiln_run", run_, path_);
  lookUp(handle_, "kiln_session_destroy", sessionDestroy_, path_);
  lookUp(handle_, "kiln_dtype_size", dtypeSize_, path_);
  getDimsInfo_ = reinterpret_cast<decltype(getDimsInfo_)>(
      dlsym(handle_, "kiln_get_dims_info"));
  getOutputShape_ = reinterpret_cast<decltype(getOutputShape_)>(
      dlsym(handle_, "kiln_get_output_shape"));
}

void Model::copyMetadata() {
  const kiln_model_info *info = getModelInfo_();
  if (!info)
    throw Error(path_ + ": kiln_get_model_info returned NULL");
  if (info->abi_version != KILN_ABI_VERSION)
    throw Error(path_ + " was built for Kiln runtime ABI version " +
                std::to_string(info->abi_version) + "; this Kiln speaks version " +
                std::to_string(KILN_ABI_VERSION) + ": recompile the model");
  if ((info->num_inputs && !info->inputs) ||
      (info->num_outputs && !info->outputs) ||
      (info->num_batch_sizes && !info->batch_sizes))
    throw Error(path_ + ": the model metadata is incomplete");
  ModelInfo &m = info_;
  m.abiVersion = info->abi_version;
  m.name = text(info->name);
  m.hash = text(info->hash);
  m.compilerVersion = text(info->compiler_version);
  m.compileOptions = text(info->compile_options);
  m.targetTriple = text(info->target_triple);
  m.cpu = text(info->cpu);
  m.requiredIsa = text(info->required_isa);
  m.arenaBytes = info->arena_bytes;
  m.arenaAlignment = info->arena_alignment;
  for (uint32_t i = 0; i < info->num_inputs; ++i)
    m.inputs.push_back(copyTensor(info->inputs[i],
                                  path_ + ": input " + std::to_string(i),
                                  dtypeSize_));
  for (uint32_t i = 0; i < info->num_outputs; ++i)
    m.outputs.push_back(copyTensor(info->outputs[i],
                                   path_ + ": output " + std::to_string(i),
                                   dtypeSize_));
  for (uint32_t i = 0; i < info->num_batch_sizes; ++i) {
    int64_t b = info->batch_sizes[i];
    // 0 is a batch size: a single-variant model reports its leading
    // dimension, which may be empty.
    if (b < 0 || (i && b <= m.batchSizes.back()))
      throw Error(path_ + ": the batch sizes are not ascending and "
                          "non-negative");
    m.batchSizes.push_back(b);
  }
  if (info->num_batch_sizes && info->batch_arena_bytes)
    m.batchArenaBytes.assign(info->batch_arena_bytes,
                             info->batch_arena_bytes + info->num_batch_sizes);
  if (m.batchSizes.empty())
    m.batchSizes.push_back(1);
  copySymbols();
  // The ABI's promise for several variants: every tensor leads with the
  // batch size, so a variant's shapes follow from the first one's. With a
  // symbolic batch, only the tensors the dims table marks do (checked in
  // copySymbols).
  if (m.batchSizes.size() > 1 && !m.dynamic())
    for (const auto *list : {&m.inputs, &m.outputs})
      for (const TensorInfo &t : *list)
        if (t.shape.empty() || t.shape[0] != m.batchSizes.front())
          throw Error(path_ + " has several batch variants but a tensor whose "
                              "leading dimension is not the batch size");
}

void Model::copySymbols() {
  const kiln_dims_info *dims = getDimsInfo_ ? getDimsInfo_() : nullptr;
  if (!dims)
    return;
  ModelInfo &m = info_;
  std::string where = path_ + ": the symbolic dimensions ";
  if (dims->struct_size < offsetof(kiln_dims_info, flags) ||
      (dims->num_symbols && !dims->symbols) || !dims->input_symbols ||
      !dims->output_symbols)
    throw Error(where + "are incomplete");
  for (uint32_t k = 0; k < dims->num_symbols; ++k) {
    const kiln_dim_symbol &sym = dims->symbols[k];
    if (sym.min < 0 || sym.max < sym.min)
      throw Error(where + "have an empty range");
    m.symbols.push_back({text(sym.name), sym.min, sym.max});
  }
  m.runtimeExtents =
      dims->struct_size >= offsetof(kiln_dims_info, flags) + sizeof(uint32_t) &&
      (dims->flags & KILN_DIMS_RUNTIME_EXTENTS);
  // With run-time extents any axis may carry a symbol, and an output axis
  // may be computed (-2); a symbolic batch marks axis 0 only.
  int32_t lowest = m.runtimeExtents ? -2 : -1;
  auto copyAxes = [&](const std::vector<TensorInfo> &ts,
                      const int32_t *const *table, const char *kind) {
    std::vector<std::vector<int32_t>> rows;
    for (size_t i = 0; i < ts.size(); ++i) {
      std::vector<int32_t> row(ts[i].shape.size(), -1);
      for (size_t d = 0; d < row.size() && table[i]; ++d) {
        int32_t s = table[i][d];
        if (s < lowest || s >= (int32_t)m.symbols.size() ||
            (s >= 0 && d != 0 && !m.runtimeExtents) ||
            (s == -2 && table == dims->input_symbols))
          throw Error(where + "name an unknown symbol for " + kind + " " +
                      std::to_string(i));
        if (s >= 0 && !m.runtimeExtents &&
            ts[i].shape[0] != m.batchSizes.front())
          throw Error(where + "mark " + kind + " " + std::to_string(i) +
                      ", which does not lead with the first batch size");
        row[d] = s;
      }
      rows.push_back(std::move(row));
    }
    return rows;
  };
  m.inputSymbols = copyAxes(m.inputs, dims->input_symbols, "input");
  m.outputSymbols = copyAxes(m.outputs, dims->output_symbols, "output");
  if (m.runtimeExtents) {
    // Trusted only as far as the tables agree: symbol 0 at axis 0 of every
    // input and output and nowhere else.
    bool batch = (dims->flags & KILN_DIMS_INDEPENDENT_BATCH) &&
                 !m.symbols.empty() && !m.inputs.empty();
    for (const auto *rows : {&m.inputSymbols, &m.outputSymbols})
      for (const std::vector<int32_t> &row : *rows)
        batch = batch && !row.empty() && row[0] == 0 &&
                std::count(row.begin(), row.end(), 0) == 1;
    m.independentBatch = batch;
    return;
  }
  if (m.symbols.size() != 1 || m.batchSizes.front() != 1)
    throw Error(where + "are not one batch with a batch-1 variant; this "
                        "client runs only that kind");
}

Signature Model::signatureForBatch(int64_t batch) const {
  if (!info_.dynamic())
    throw Error(path_ + " has no symbolic dimension; its batch sizes are "
                        "fixed");
  const ModelInfo::Symbol &sym = info_.symbols.front();
  if (batch < sym.min || batch > sym.max)
    throw Error("batch " + std::to_string(batch) + " is outside the range " +
                std::to_string(sym.min) + ".." + std::to_string(sym.max) +
                " of '" + sym.name + "' that " + path_ + " was compiled for");
  Signature sig;
  sig.batchSize = batch;
  sig.inputs = info_.inputs;
  sig.outputs = info_.outputs;
  auto setBatch = [&](std::vector<TensorInfo> &ts,
                      const std::vector<std::vector<int32_t>> &axes) {
    for (size_t i = 0; i < ts.size(); ++i) {
      if (i >= axes.size() || axes[i].empty() || axes[i][0] < 0)
        continue;
      ts[i].shape[0] = batch;
      size_t count;
      if (!countElements(ts[i].shape, ts[i].type->size, count))
        throw Error(path_ + ": '" + ts[i].name + "' is too large at batch " +
                    std::to_string(batch));
    }
  };
  setBatch(sig.inputs, info_.inputSymbols);
  setBatch(sig.outputs, info_.outputSymbols);
  return sig;
}

std::vector<int64_t> Session::outputShape(size_t i) const {
  if (i >= signature_.outputs.size())
    throw Error("output " + std::to_string(i) + " does not exist");
  std::vector<int64_t> shape(signature_.outputs[i].shape.size());
  if (!model_->getOutputShape_)
    return signature_.outputs[i].shape;
  kiln_status s = model_->getOutputShape_(session_, i, shape.data(),
                                          shape.size());
  if (s.code)
    throw Error("kiln_get_output_shape", s);
  return shape;
}

void Model::checkCpu() const {
  kiln_status s = checkCpu_();
  if (s.code)
    throw Error("kiln_check_cpu", s);
}

Signature Model::signatureForInputs(
    const std::vector<std::vector<int64_t>> &inputShapes) const {
  if (!info_.dynamic())
    return signature({});
  if (inputShapes.size() != info_.inputs.size())
    throw Error(path_ + " takes " + std::to_string(info_.inputs.size()) +
                " inputs; got " + std::to_string(inputShapes.size()) +
                " shapes");
  if (!info_.runtimeExtents) {
    for (size_t i = 0; i < info_.inputs.size(); ++i)
      if (i < info_.inputSymbols.size() && !info_.inputSymbols[i].empty() &&
          info_.inputSymbols[i][0] >= 0) {
        if (inputShapes[i].empty())
          throw Error("input " + std::to_string(i) + " ('" +
                      info_.inputs[i].name + "') is a scalar; it leads with "
                      "the batch '" + info_.symbols[0].name + "'");
        return signatureForBatch(inputShapes[i][0]);
      }
    return signatureForBatch(1);
  }
  std::vector<int64_t> sizes(info_.symbols.size(), -1);
  Signature sig;
  sig.batchSize = 0;
  sig.inputs = info_.inputs;
  sig.outputs = info_.outputs;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    TensorInfo &t = sig.inputs[i];
    const std::vector<int64_t> &got = inputShapes[i];
    std::string what = "input " + std::to_string(i) + " ('" + t.name + "')";
    if (got.size() != t.shape.size())
      throw Error(what + " has rank " + std::to_string(got.size()) +
                  "; the model expects " + std::to_string(t.shape.size()));
    for (size_t d = 0; d < got.size(); ++d) {
      int32_t s = info_.inputSymbols[i][d];
      if (s < 0) {
        if (got[d] != t.shape[d])
          throw Error(what + ": dimension " + std::to_string(d) + " is " +
                      std::to_string(got[d]) + "; the model expects " +
                      std::to_string(t.shape[d]));
        continue;
      }
      const ModelInfo::Symbol &sym = info_.symbols[s];
      if (got[d] < sym.min || got[d] > sym.max)
        throw Error(what + ": dimension " + std::to_string(d) + " ('" +
                    sym.name + "') is " + std::to_string(got[d]) +
                    ", outside the range " + std::to_string(sym.min) + ".." +
                    std::to_string(sym.max) + " that " + path_ +
                    " was compiled for");
      if (sizes[s] >= 0 && sizes[s] != got[d])
        throw Error(what + ": dimension " + std::to_string(d) + " ('" +
                    sym.name + "') is " + std::to_string(got[d]) +
                    ", but an earlier input gives it " +
                    std::to_string(sizes[s]) + "; inputs sharing '" +
                    sym.name + "' must agree");
      sizes[s] = got[d];
      t.shape[d] = got[d];
    }
  }
  for (size_t o = 0; o < sig.outputs.size(); ++o)
    for (size_t d = 0; d < sig.outputs[o].shape.size(); ++d) {
      int32_t s = info_.outputSymbols[o][d];
      if (s >= 0 && sizes[s] >= 0)
        sig.outputs[o].shape[d] = sizes[s];
    }
  return sig;
}

Signature Model::signature(const SessionOptions &options) const {
  if (info_.runtimeExtents) {
    // The largest shapes (a run at other sizes takes signatureForInputs).
    Signature sig;
    sig.inputs = info_.inputs;
    sig.outputs = info_.outputs;
    return sig;
  }
  if (info_.dynamic())
    return signatureForBatch(options.batchSize ? options.batchSize : 1);
  Signature sig;
  sig.batchSize = options.batchSize ? options.batchSize : info_.batchSizes[0];
  sig.inputs = info_.inputs;
  sig.outputs = info_.outputs;
  if (sig.batchSize == info_.batchSizes[0])
    return sig; // the metadata describes the first variant as it is
  std::string sizes;
  bool compiled = false;
  for (int64_t b : info_.batchSizes) {
    sizes += (sizes.empty() ? "" : ",") + std::to_string(b);
    compiled = compiled || b == sig.batchSize;
  }
  if (!compiled)
    throw Error(path_ + " has no batch size " +
                std::to_string(sig.batchSize) + "; it was compiled for " +
                sizes);
  // Several variants: every tensor has rank >= 1 (checked at open).
  for (auto *list : {&sig.inputs, &sig.outputs})
    for (TensorInfo &t : *list) {
      t.shape[0] = sig.batchSize;
      size_t count;
      if (!countElements(t.shape, t.type->size, count))
        throw Error(path_ + ": '" + t.name + "' is too large at batch size " +
                    std::to_string(sig.batchSize));
    }
  return sig;
}

std::unique_ptr<Session>
Model::createSession(const SessionOptions &options) const {
  Signature sig = signature(options);
  kiln_session_options abi = {};
  abi.struct_size = sizeof(abi);
  abi.num_threads = options.numThreads;
  // 0 picks the first variant, which is also right for a model that declares
  // no batch sizes at all.
  abi.batch_size = info_.runtimeExtents || sig.batchSize == info_.batchSizes[0] ||
                           info_.dynamic()
                       ? 0
                       : sig.batchSize;
  kiln_session *session = nullptr;
  kiln_status s = sessionCreate_(&abi, &session);
  if (s.code)
    throw Error("kiln_session_create", s);
  if (!session)
    throw Error("kiln_session_create",
                {KILN_INTERNAL, "it returned KILN_OK and no session"});
  return std::unique_ptr<Session>(
      new Session(shared_from_this(), session, std::move(sig)));
}

Session::~Session() { model_->sessionDestroy_(session_); }

void Session::run(const kiln_tensor *inputs, size_t numInputs,
                  kiln_tensor *outputs, size_t numOutputs) {
  kiln_status s =
      model_->run_(session_, inputs, numInputs, outputs, numOutputs);
  if (s.code)
    throw Error("kiln_run", s);
}

} // namespace kiln::client
