// N sessions of one compiled model.so, run from N threads at once, must give
// bit-identical outputs to one session run alone. Loads the model through the
// public C ABI only.
//
// usage: kiln-concurrency-test MODEL.so [threads] [runs]
#include "kiln/runtime.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {
struct Api {
  const kiln_model_info *(*info)(void);
  kiln_status (*create)(const kiln_session_options *, kiln_session **);
  kiln_status (*run)(kiln_session *, const kiln_tensor *, size_t, kiln_tensor *,
                     size_t);
  void (*destroy)(kiln_session *);
  size_t (*dtypeSize)(int32_t);
};

struct Buffers {
  std::vector<std::vector<unsigned char>> data;
  std::vector<kiln_tensor> tensors;
};

Buffers allocate(const Api &api, const kiln_tensor_info *infos, uint32_t n) {
  Buffers b;
  b.data.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    size_t elems = 1;
    for (int32_t d = 0; d < infos[i].rank; ++d)
      elems *= (size_t)infos[i].shape[d];
    b.data[i].assign(elems * api.dtypeSize(infos[i].dtype), 0);
  }
  for (uint32_t i = 0; i < n; ++i)
    b.tensors.push_back({b.data[i].data(), b.data[i].size(), infos[i].dtype,
                         infos[i].rank, infos[i].shape});
  return b;
}

int fail(const std::string &msg) {
  std::fprintf(stderr, "kiln-concurrency-test: %s\n", msg.c_str());
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return fail("usage: kiln-concurrency-test MODEL.so [threads] [runs]");
  int threads = argc > 2 ? std::atoi(argv[2]) : 4;
  int runs = argc > 3 ? std::atoi(argv[3]) : 20;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return fail(std::string("cannot load: ") + dlerror());
  Api api;
  api.info = (decltype(api.info))dlsym(lib, "kiln_get_model_info");
  api.create = (decltype(api.create))dlsym(lib, "kiln_session_create");
  api.run = (decltype(api.run))dlsym(lib, "kiln_run");
  api.destroy = (decltype(api.destroy))dlsym(lib, "kiln_session_destroy");
  api.dtypeSize = (decltype(api.dtypeSize))dlsym(lib, "kiln_dtype_size");
  if (!api.info || !api.create || !api.run || !api.destroy || !api.dtypeSize)
    return fail("missing kiln_* symbols");
  const kiln_model_info *info = api.info();

  // Shared, read-only inputs with fixed random floats.
  Buffers inputs = allocate(api, info->inputs, info->num_inputs);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (uint32_t i = 0; i < info->num_inputs; ++i)
    if (info->inputs[i].dtype == KILN_DTYPE_FLOAT32) {
      float *p = reinterpret_cast<float *>(inputs.data[i].data());
      for (size_t k = 0; k < inputs.data[i].size() / 4; ++k)
        p[k] = dist(rng);
    }

  // The reference: one session, alone.
  Buffers reference = allocate(api, info->outputs, info->num_outputs);
  kiln_session *solo = nullptr;
  kiln_status s = api.create(nullptr, &solo);
  if (s.code)
    return fail(std::string("kiln_session_create: ") + s.message);
  s = api.run(solo, inputs.tensors.data(), inputs.tensors.size(),
              reference.tensors.data(), reference.tensors.size());
  if (s.code)
    return fail(std::string("kiln_run: ") + s.message);
  api.destroy(solo);

  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      kiln_session *session = nullptr;
      if (api.create(nullptr, &session).code) {
        ++errors;
        return;
      }
      Buffers out = allocate(api, info->outputs, info->num_outputs);
      for (int r = 0; r < runs; ++r) {
        for (auto &d : out.data)
          std::memset(d.data(), 0xff, d.size());
        if (api.run(session, inputs.tensors.data(), inputs.tensors.size(),
                    out.tensors.data(), out.tensors.size())
                .code) {
          ++errors;
          break;
        }
        for (size_t i = 0; i < out.data.size(); ++i)
          if (out.data[i] != reference.data[i])
            ++mismatches;
      }
      api.destroy(session);
    });
  for (std::thread &t : pool)
    t.join();
  if (errors || mismatches)
    return fail(std::to_string(errors) + " errors, " +
                std::to_string(mismatches) + " outputs differ from the "
                "single-session run");
  std::printf("kiln-concurrency-test: %d threads x %d runs of '%s': all "
              "outputs bit-identical to one session\n",
              threads, runs, info->name);
  return 0;
}
