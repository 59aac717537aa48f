// Unit tests of the model client (lib/Client), the one loader of model.so
// files in Kiln, against the hand-written models of test/runtime/cli_model.c
// and test/serve/batched_model.c (see CMakeLists.txt).
#include "kiln/Client/DType.h"
#include "kiln/Client/Model.h"

#include <gtest/gtest.h>

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace kiln::client;

namespace {

// The message of the Error that opening `path` throws ("" if none).
std::string openError(const char *path) {
  try {
    Model::open(path);
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), KILN_OK) << e.what();
    return e.what();
  }
  return "";
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// A kiln_tensor over `data` shaped as `t`.
kiln_tensor view(void *data, const TensorInfo &t) {
  return {data, t.bytes(), t.dtype(), (int32_t)t.shape.size(), t.shape.data()};
}

} // namespace

TEST(ClientModel, CopiesTheMetadata) {
  std::shared_ptr<const Model> model = Model::open(GOOD_MODEL);
  const ModelInfo &info = model->info();
  EXPECT_EQ(model->path(), GOOD_MODEL);
  EXPECT_EQ(info.name, "cli_model");
  EXPECT_EQ(info.compilerVersion, "kiln-test 0");
  EXPECT_EQ(info.requiredIsa, "sse4.2,avx2");
  EXPECT_EQ(info.abiVersion, (uint32_t)KILN_ABI_VERSION);
  EXPECT_EQ(info.arenaBytes, 128u);
  EXPECT_EQ(info.batchSizes, std::vector<int64_t>{1});
  EXPECT_TRUE(info.batchArenaBytes.empty()); // cli_model.c does not say
  ASSERT_EQ(info.inputs.size(), 5u);
  ASSERT_EQ(info.outputs.size(), 5u);
  const TensorInfo &x = info.inputs[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype(), KILN_DTYPE_FLOAT32);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(x.bytes(), 24u);
  const TensorInfo &scalar = info.inputs[4];
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.bytes(), 4u);
  EXPECT_STREQ(info.inputs[3].type->kserve, "FP16");
}

TEST(ClientModel, RunsASession) {
  std::shared_ptr<const Model> model = Model::open(GOOD_MODEL);
  std::unique_ptr<Session> session = model->createSession({});
  EXPECT_EQ(session->batchSize(), 1);
  model.reset(); // the session holds the library open

  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {};
  int64_t idx[3] = {10, 20, 30}, idx1[3] = {};
  unsigned char mask[2] = {1, 0}, nmask[2] = {};
  uint16_t h[4] = {0x3c00, 0, 0, 0}, hneg[4] = {};
  int32_t s = 21, s2 = 0;
  void *in[] = {x, idx, mask, h, &s}, *out[] = {y, idx1, nmask, hneg, &s2};
  std::vector<kiln_tensor> inputs, outputs;
  for (size_t i = 0; i < 5; ++i) {
    inputs.push_back(view(in[i], session->inputs()[i]));
    outputs.push_back(view(out[i], session->outputs()[i]));
  }
  session->run(inputs, outputs);
  EXPECT_EQ(y[5], 36.0f);
  EXPECT_EQ(idx1[2], 31);
  EXPECT_EQ(nmask[1], 1);
  EXPECT_EQ(hneg[0], 0xbc00);
  EXPECT_EQ(s2, 42);

  // A failing run carries the status code and the model's message.
  inputs.pop_back();
  try {
    session->run(inputs, outputs);
    FAIL() << "kiln_run accepted 4 of 5 inputs";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), KILN_INVALID_ARGUMENT);
    EXPECT_FALSE(e.statusMessage().empty());
    EXPECT_TRUE(contains(e.what(), "kiln_run failed: " + e.statusMessage()))
        << e.what();
  }
}

TEST(ClientModel, RefusesWhatIsNotAKilnModel) {
  EXPECT_TRUE(contains(openError("/nonexistent/model.so"),
                       "cannot load /nonexistent/model.so"));
  EXPECT_TRUE(contains(openError(NO_RUNTIME_MODEL),
                       "is not a Kiln model: it does not export "
                       "kiln_get_model_info"));
  EXPECT_TRUE(contains(openError(BAD_ABI_MODEL), "ABI version 99"));
  // Checked in the file, before dlopen runs any of its constructors.
  EXPECT_TRUE(contains(openError(EXTRA_LIBRARY_MODEL),
                       "it needs libstdc++.so.6, but a Kiln model needs only "
                       "the C library"));
}

// A truncated or foreign file is refused before dlopen maps it (a truncated
// .so mapped and touched past its end is a SIGBUS in the host).
TEST(ClientModel, RefusesTruncatedAndForeignFiles) {
  std::string good;
  {
    std::ifstream in(GOOD_MODEL, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(good.size(), 4096u);
  std::string dir = ::testing::TempDir();
  auto write = [&](const std::string &name, const std::string &bytes) {
    std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  };
  // Cut inside the loadable segments: half of where the last one ends (a
  // build with debug information has more than half the file after them).
  size_t loaded = 0;
  {
    Elf64_Ehdr eh;
    std::memcpy(&eh, good.data(), sizeof eh);
    for (int i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      std::memcpy(&ph, good.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
      if (ph.p_type == PT_LOAD)
        loaded = std::max<size_t>(loaded, ph.p_offset + ph.p_filesz);
    }
  }
  ASSERT_GT(loaded, 4096u);
  std::string half = write("half.so", good.substr(0, loaded / 2));
  EXPECT_TRUE(contains(openError(half.c_str()), "it is truncated: segment"))
      << openError(half.c_str());
  std::string header = write("header.so", good.substr(0, 70));
  EXPECT_TRUE(contains(openError(header.c_str()), "program headers"))
      << openError(header.c_str());
  std::string text = write("text.so", std::string(100, 'x'));
  EXPECT_TRUE(contains(openError(text.c_str()),
                       "not an x86-64 ELF shared object"));
  EXPECT_TRUE(contains(openError("/dev/null"), "not a regular file"));
}

TEST(ClientModel, ReportsAnUnsupportedCpu) {
  std::shared_ptr<const Model> model = Model::open(BAD_ISA_MODEL);
  try {
    model->checkCpu();
    FAIL() << "kiln_check_cpu accepted 'notafeature'";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), KILN_UNSUPPORTED_ISA);
    EXPECT_TRUE(contains(e.statusMessage(), "notafeature")) << e.what();
  }
  try {
    model->createSession({});
    FAIL() << "kiln_session_create accepted 'notafeature'";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), KILN_UNSUPPORTED_ISA);
    EXPECT_TRUE(contains(e.what(), "kiln_session_create failed: "));
    EXPECT_STREQ(statusCodeName(e.code()), "UNSUPPORTED_ISA");
  }
}

TEST(ClientModel, ChecksTheMetadata) {
  EXPECT_TRUE(contains(openError(NEGATIVE_DIM_MODEL),
                       "input 0 'x' has a negative dimension in shape [-2,3]"));
  EXPECT_TRUE(contains(openError(STRING_DTYPE_MODEL),
                       "input 0 'x' has element type string"));
  EXPECT_TRUE(contains(openError(UNORDERED_BATCHES_MODEL),
                       "batch sizes are not ascending"));
  EXPECT_TRUE(contains(openError(UNBATCHED_VARIANTS_MODEL),
                       "several batch variants but a tensor whose leading "
                       "dimension is not the batch size"));
}

TEST(ClientModel, GivesEachBatchVariantItsShapes) {
  std::shared_ptr<const Model> model = Model::open(BATCHED_MODEL);
  EXPECT_EQ(model->info().batchSizes, (std::vector<int64_t>{1, 4, 8}));
  EXPECT_EQ(model->info().batchArenaBytes,
            (std::vector<uint64_t>{64, 256, 512}));
  Signature first = model->signature({});
  EXPECT_EQ(first.batchSize, 1);
  EXPECT_EQ(first.inputs[0].shape, (std::vector<int64_t>{1, 4}));
  std::unique_ptr<Session> session = model->createSession({0, 4});
  EXPECT_EQ(session->batchSize(), 4);
  EXPECT_EQ(session->inputs()[0].shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(session->outputs()[0].bytes(), 64u);

  std::vector<float> x(16, 1.0f), y(16, 0.0f);
  std::vector<kiln_tensor> in = {view(x.data(), session->inputs()[0])};
  std::vector<kiln_tensor> out = {view(y.data(), session->outputs()[0])};
  session->run(in, out);
  EXPECT_EQ(y[15], 3.0f);

  try {
    model->signature({0, 3});
    FAIL() << "batch size 3 was accepted";
  } catch (const Error &e) {
    EXPECT_TRUE(contains(e.what(), "has no batch size 3; it was compiled "
                                   "for 1,4,8"))
        << e.what();
  }
}

TEST(ClientDType, AgreesWithTheRuntime) {
  // The model's own kiln_dtype_size (runtime/src/runtime.c) is the ABI's
  // word on element sizes; the table must match it for every entry.
  void *handle = dlopen(GOOD_MODEL, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr);
  auto dtypeSizeOf =
      reinterpret_cast<size_t (*)(int32_t)>(dlsym(handle, "kiln_dtype_size"));
  ASSERT_NE(dtypeSizeOf, nullptr);
  for (const DType &t : kDTypes) {
    EXPECT_EQ(dtypeSizeOf(t.onnx), t.size) << t.name;
    EXPECT_EQ(findDType(t.onnx), &t);
    EXPECT_EQ(dtypeName(t.onnx), t.name);
  }
  EXPECT_EQ(dtypeSizeOf(8), 0u);
  dlclose(handle);
  EXPECT_EQ(findDType(8), nullptr);
  EXPECT_EQ(dtypeName(8), "string");
  EXPECT_EQ(dtypeName(99), "dtype 99");
  EXPECT_EQ(findDType(KILN_DTYPE_BFLOAT16)->numpy, nullptr);
}

TEST(ClientDType, ReadsNarrowTypes) {
  // float8 e4m3fn: 0x38 = 1.0, 0x7e = 448 (largest), 0x7f NaN, 0x80 -0.
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT8E4M3FN, 0x38), 1.0);
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT8E4M3FN, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(narrowValue(KILN_DTYPE_FLOAT8E4M3FN, 0xff)));
  EXPECT_TRUE(std::signbit(narrowValue(KILN_DTYPE_FLOAT8E4M3FN, 0x80)));
  // Subnormal: 0x01 = 2^-9.
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT8E4M3FN, 0x01), std::ldexp(1.0, -9));
  // FNUZ: bias 8, 0x80 is the NaN.
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT8E4M3FNUZ, 0x40), 1.0);
  EXPECT_TRUE(std::isnan(narrowValue(KILN_DTYPE_FLOAT8E4M3FNUZ, 0x80)));
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT8E5M2, 0x7b), 57344.0);
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT8E5M2, 0xfc), -INFINITY);
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT8E5M2FNUZ, 0x7f), 57344.0);
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT4E2M1, 0x7), 6.0);
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT4E2M1, 0x9), -0.5);
  EXPECT_EQ(narrowValue(KILN_DTYPE_FLOAT8E8M0, 127), 1.0);
  EXPECT_TRUE(std::isnan(narrowValue(KILN_DTYPE_FLOAT8E8M0, 0xff)));
  EXPECT_EQ(narrowValue(KILN_DTYPE_INT4, 0xf), -1.0);
  EXPECT_EQ(narrowValue(KILN_DTYPE_UINT4, 0xf), 15.0);
  EXPECT_EQ(narrowValue(KILN_DTYPE_INT2, 0x2), -2.0);
  EXPECT_EQ(packedBits(KILN_DTYPE_INT4), 4u);
  EXPECT_EQ(packedBits(KILN_DTYPE_UINT2), 2u);
  EXPECT_EQ(packedBits(KILN_DTYPE_FLOAT8E4M3FN), 0u);
}

TEST(ClientDType, ConvertsHalfAndBfloat16) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // rounds up to infinity
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000); // ties to even
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0xfc00), -INFINITY);
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(1.00390625f), 0x3f80); // halfway: to even
  EXPECT_EQ(floatToBfloat16(1.01171875f), 0x3f82); // halfway: to even
  EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(NAN))));
}
