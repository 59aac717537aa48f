// Unit tests of the runtime linked into every model.so (runtime/src/runtime.c),
// driven through the public ABI against the hand-written model in fake_model.c.
#include "alloc_counter.h"
#include "fake_model.h"

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "pool.h"
void __kiln_parallel_for(void (*fn)(void *, int64_t, int64_t), void *ctx,
                         int64_t count);
}
extern "C" int kiln_internal_missing_feature(const char *list, char *missing,
                                             size_t missing_bytes);
// The fibers of --target=cuda-emulated (runtime/src/emu.c); not linked
// into the ThreadSanitizer build (KILN_TEST_NO_FIBERS).
extern "C" void __kiln_emu_fibers(void (*fn)(void *, int64_t, int64_t),
                                  void *ctx, int64_t count);
extern "C" void __kiln_emu_barrier(void);

#ifdef KILN_TEST_NO_ALLOC_COUNTER
// Built with a sanitizer, which replaces malloc itself: no counting.
void alloc_counter_start(void) {}
unsigned long alloc_counter_stop(void) { return 0; }
#define SKIP_WITHOUT_ALLOC_COUNTER() GTEST_SKIP() << "built with a sanitizer"
#else
#define SKIP_WITHOUT_ALLOC_COUNTER() (void)0
#endif

namespace {

// Status messages must name the problem; this checks the words are there.
::testing::AssertionResult hasSubstr(const char *messageExpr, const char *,
                                     const char *message,
                                     const std::string &part) {
  if (message && std::strstr(message, part.c_str()))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << messageExpr << " is \"" << (message ? message : "(null)")
         << "\", which does not contain \"" << part << "\"";
}
#define EXPECT_HAS(message, part) EXPECT_PRED_FORMAT2(hasSubstr, message, part)

const int64_t kAShape[] = {2, 3};
const int64_t kBShape[] = {3};
const int64_t kYShape[] = {2, 3};

// Inputs, outputs and the kiln_tensor views of one call of the fake model.
struct Call {
  float a[6] = {1, 2, 3, 4, 5, 6};
  float b[3] = {10, 20, 30};
  float y[6] = {};
  kiln_tensor inputs[2];
  kiln_tensor outputs[1];

  Call() {
    inputs[0] = {a, sizeof(a), KILN_DTYPE_FLOAT32, 2, kAShape};
    inputs[1] = {b, sizeof(b), KILN_DTYPE_FLOAT32, 1, kBShape};
    outputs[0] = {y, sizeof(y), KILN_DTYPE_FLOAT32, 2, kYShape};
  }
  kiln_status run(kiln_session *s) {
    return kiln_run(s, inputs, 2, outputs, 1);
  }
};

// A session created with default options, destroyed at scope exit.
struct SessionHolder {
  kiln_session *session = nullptr;
  explicit SessionHolder(const kiln_session_options *options = nullptr) {
    kiln_status s = kiln_session_create(options, &session);
    EXPECT_EQ(s.code, KILN_OK) << s.message;
  }
  ~SessionHolder() { kiln_session_destroy(session); }
};

kiln_session_options optionsWith(void *arena, size_t bytes) {
  kiln_session_options o;
  std::memset(&o, 0, sizeof(o));
  o.struct_size = sizeof(o);
  o.arena = arena;
  o.arena_bytes = bytes;
  return o;
}

// 64-byte-aligned heap buffer for caller-supplied arenas.
struct AlignedBuffer {
  char *p;
  explicit AlignedBuffer(size_t bytes)
      : p(static_cast<char *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64))) {
  }
  ~AlignedBuffer() { std::free(p); }
};

TEST(RuntimeMetadata, DescribesTheFakeModel) {
  const kiln_model_info *info = kiln_get_model_info();
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->abi_version, static_cast<uint32_t>(KILN_ABI_VERSION));
  EXPECT_STREQ(info->name, "fake_add");
  EXPECT_STREQ(info->required_isa, FAKE_MODEL_DEFAULT_ISA);
  EXPECT_EQ(info->arena_bytes, 256u);
  EXPECT_EQ(info->arena_alignment, 64u);
  ASSERT_EQ(info->num_inputs, 2u);
  ASSERT_EQ(info->num_outputs, 1u);
  EXPECT_STREQ(info->inputs[0].name, "a");
  EXPECT_EQ(info->inputs[0].dtype, KILN_DTYPE_FLOAT32);
  ASSERT_EQ(info->inputs[0].rank, 2);
  EXPECT_EQ(info->inputs[0].shape[0], 2);
  EXPECT_EQ(info->inputs[0].shape[1], 3);
  EXPECT_STREQ(info->inputs[1].name, "b");
  ASSERT_EQ(info->inputs[1].rank, 1);
  EXPECT_EQ(info->inputs[1].shape[0], 3);
  EXPECT_STREQ(info->outputs[0].name, "y");
  EXPECT_EQ(info->outputs[0].rank, 2);
  ASSERT_EQ(info->num_batch_sizes, 1u);
  EXPECT_EQ(info->batch_sizes[0], 1);
  // Same object on every call: the metadata is owned by the model.
  EXPECT_EQ(kiln_get_model_info(), info);
}

TEST(RuntimeSession, CreateRunDestroy) {
  SessionHolder holder;
  ASSERT_NE(holder.session, nullptr);
  Call call;
  kiln_status s = call.run(holder.session);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  ASSERT_NE(s.message, nullptr);
  EXPECT_STREQ(s.message, "");
  const float want[6] = {11, 22, 33, 14, 25, 36};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(call.y[i], want[i]) << "element " << i;
  // The runtime allocated the arena itself, aligned as the model asked.
  void *arena = fake_model_last_arena();
  ASSERT_NE(arena, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena) % 64, 0u);

  // A second run reuses the same arena.
  call.a[0] = -1;
  ASSERT_EQ(call.run(holder.session).code, KILN_OK);
  EXPECT_EQ(call.y[0], 9);
  EXPECT_EQ(fake_model_last_arena(), arena);
}

TEST(RuntimeSession, ExplicitDefaultOptions) {
  kiln_session_options o = optionsWith(nullptr, 0);
  o.num_threads = 4;
  SessionHolder holder(&o);
  Call call;
  EXPECT_EQ(call.run(holder.session).code, KILN_OK);
  EXPECT_EQ(call.y[5], 36);
}

TEST(RuntimeSession, DestroyNullIsANoOp) { kiln_session_destroy(nullptr); }

TEST(RuntimeSession, NullOutSession) {
  kiln_status s = kiln_session_create(nullptr, nullptr);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "out_session is NULL");
}

TEST(RuntimeSession, InvalidStructSize) {
  for (uint32_t size : {0u, 2u}) {
    kiln_session_options o = optionsWith(nullptr, 0);
    o.struct_size = size;
    kiln_session *session = reinterpret_cast<kiln_session *>(0x1);
    kiln_status s = kiln_session_create(&o, &session);
    EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT) << "struct_size " << size;
    EXPECT_HAS(s.message, "struct_size is " + std::to_string(size));
    EXPECT_EQ(session, nullptr) << "a failed create must clear out_session";
  }
}

// A caller built against a newer header passes a larger struct: accepted
// while the fields this runtime does not know are zero.
TEST(RuntimeSession, LargerStructFromANewerHeader) {
  struct {
    kiln_session_options known;
    uint64_t future[2];
  } newer = {};
  newer.known.struct_size = sizeof(newer);
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(&newer.known, &session);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  kiln_session_destroy(session);

  newer.future[1] = 7;
  session = reinterpret_cast<kiln_session *>(0x1);
  s = kiln_session_create(&newer.known, &session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "does not know");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeSession, UnknownBatchSize) {
  kiln_session_options o = optionsWith(nullptr, 0);
  o.batch_size = 3;
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(&o, &session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "no batch size 3");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeSession, NegativeThreads) {
  kiln_session_options o = optionsWith(nullptr, 0);
  o.num_threads = -1;
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(&o, &session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "num_threads is -1");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeArena, CallerArenaIsUsed) {
  AlignedBuffer arena(FAKE_MODEL_ARENA_BYTES);
  kiln_session_options o = optionsWith(arena.p, FAKE_MODEL_ARENA_BYTES);
  SessionHolder holder(&o);
  Call call;
  ASSERT_EQ(call.run(holder.session).code, KILN_OK);
  EXPECT_EQ(fake_model_last_arena(), arena.p);
  EXPECT_EQ(call.y[4], 25);
  // The fake model computes in the arena: the caller's buffer holds y.
  EXPECT_EQ(std::memcmp(arena.p, call.y, sizeof(call.y)), 0);
}

TEST(RuntimeArena, LargerCallerArenaIsFine) {
  AlignedBuffer arena(4096);
  kiln_session_options o = optionsWith(arena.p, 4096);
  SessionHolder holder(&o);
  Call call;
  ASSERT_EQ(call.run(holder.session).code, KILN_OK);
  EXPECT_EQ(fake_model_last_arena(), arena.p);
}

TEST(RuntimeArena, TooSmall) {
  AlignedBuffer arena(FAKE_MODEL_ARENA_BYTES);
  kiln_session_options o = optionsWith(arena.p, FAKE_MODEL_ARENA_BYTES - 1);
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(&o, &session);
  EXPECT_EQ(s.code, KILN_ARENA_TOO_SMALL);
  EXPECT_HAS(s.message, "has 255 bytes");
  EXPECT_HAS(s.message, "needs 256");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeArena, Misaligned) {
  AlignedBuffer arena(FAKE_MODEL_ARENA_BYTES + 64);
  kiln_session_options o = optionsWith(arena.p + 8, FAKE_MODEL_ARENA_BYTES);
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(&o, &session);
  EXPECT_EQ(s.code, KILN_ARENA_TOO_SMALL);
  EXPECT_HAS(s.message, "not aligned to 64 bytes");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeRun, NullSession) {
  Call call;
  kiln_status s = call.run(nullptr);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "session is NULL");
}

TEST(RuntimeRun, WrongCounts) {
  SessionHolder holder;
  Call call;
  kiln_status s = kiln_run(holder.session, call.inputs, 1, call.outputs, 1);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "takes 2 inputs and 1 outputs; got 1 and 1");
  s = kiln_run(holder.session, call.inputs, 2, call.outputs, 0);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "got 2 and 0");
  s = kiln_run(holder.session, call.inputs, 3, call.outputs, 1);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "got 3 and 1");
}

TEST(RuntimeRun, NullArrays) {
  SessionHolder holder;
  Call call;
  kiln_status s = kiln_run(holder.session, nullptr, 2, call.outputs, 1);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "inputs or outputs is NULL");
  s = kiln_run(holder.session, call.inputs, 2, nullptr, 1);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "inputs or outputs is NULL");
}

TEST(RuntimeRun, NullData) {
  SessionHolder holder;
  Call call;
  call.inputs[1].data = nullptr;
  kiln_status s = call.run(holder.session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "input 1 ('b'): data is NULL");

  Call call2;
  call2.outputs[0].data = nullptr;
  s = call2.run(holder.session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "output 0 ('y'): data is NULL");
}

TEST(RuntimeRun, WrongDtype) {
  SessionHolder holder;
  Call call;
  call.inputs[0].dtype = KILN_DTYPE_INT32;
  kiln_status s = call.run(holder.session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "input 0 ('a')");
  EXPECT_HAS(s.message, "dtype is 6; the model expects 1");
}

TEST(RuntimeRun, WrongRank) {
  SessionHolder holder;
  Call call;
  const int64_t flat[] = {6};
  call.inputs[0].rank = 1;
  call.inputs[0].shape = flat;
  kiln_status s = call.run(holder.session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "input 0 ('a'): the shape does not match");
  EXPECT_HAS(s.message, "expects 2x3 (rank 2), got rank 1");
}

TEST(RuntimeRun, WrongDims) {
  SessionHolder holder;
  Call call;
  const int64_t transposed[] = {3, 2};
  call.outputs[0].shape = transposed;
  kiln_status s = call.run(holder.session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "output 0 ('y'): the shape does not match");
  EXPECT_HAS(s.message, "2x3");
}

TEST(RuntimeRun, NullShapeChecksOnlyBytes) {
  SessionHolder holder;
  Call call;
  call.inputs[0].shape = nullptr;
  call.inputs[0].rank = 0;
  kiln_status s = call.run(holder.session);
  EXPECT_EQ(s.code, KILN_OK) << s.message;
  EXPECT_EQ(call.y[0], 11);
}

TEST(RuntimeRun, WrongByteCount) {
  SessionHolder holder;
  Call call;
  call.inputs[1].bytes = 8;
  kiln_status s = call.run(holder.session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message,
             "input 1 ('b'): buffer has 8 bytes; the model expects 12");
}

TEST(RuntimeSession, TooManyThreads) {
  kiln_session_options o = optionsWith(nullptr, 0);
  o.num_threads = KILN_MAX_THREADS + 1;
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(&o, &session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "use 0 to 1024");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeArena, SizeWithoutArena) {
  kiln_session_options o = optionsWith(nullptr, 4096);
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(&o, &session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "arena is NULL");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeArena, SizeThatWrapsTheAddressSpace) {
  AlignedBuffer arena(FAKE_MODEL_ARENA_BYTES);
  kiln_session_options o = optionsWith(arena.p, SIZE_MAX);
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(&o, &session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "wrap around the address space");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeRun, MisalignedData) {
  SessionHolder holder;
  Call call;
  alignas(8) char raw[sizeof(call.b) + 1];
  std::memcpy(raw + 1, call.b, sizeof(call.b));
  call.inputs[1].data = raw + 1;
  kiln_status s = call.run(holder.session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "input 1 ('b'): data at");
  EXPECT_HAS(s.message, "not aligned to its element size (4 bytes)");
}

TEST(RuntimeRun, OutputOverlappingAnInput) {
  SessionHolder holder;
  Call call;
  call.outputs[0].data = call.a; // same size as y
  kiln_status s = call.run(holder.session);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(s.message, "output 0 overlaps input 0");
}

// A second thread running a session that is running is refused, and the
// first run's result is untouched.
TEST(RuntimeRun, ConcurrentUseOfOneSession) {
  SessionHolder holder;
  struct Probe {
    kiln_session *session;
    kiln_status status{KILN_OK, ""};
    std::string message;
  } probe{holder.session};
  fake_model_during_run_context = &probe;
  fake_model_during_run = [](void *context) {
    auto *p = static_cast<Probe *>(context);
    std::thread other([p] {
      Call second;
      p->status = second.run(p->session);
      p->message = p->status.message;
    });
    other.join();
  };
  Call call;
  kiln_status s = call.run(holder.session);
  fake_model_during_run = nullptr;
  EXPECT_EQ(s.code, KILN_OK) << s.message;
  EXPECT_EQ(call.y[4], 25);
  EXPECT_EQ(probe.status.code, KILN_INVALID_ARGUMENT);
  EXPECT_HAS(probe.message.c_str(), "already running on another thread");
  // Free again afterwards.
  Call after;
  EXPECT_EQ(after.run(holder.session).code, KILN_OK);
}

TEST(RuntimeRun, FailureDoesNotCallTheModel) {
  SessionHolder holder;
  Call call;
  call.outputs[0].bytes = 0;
  unsigned long before = fake_model_calls();
  EXPECT_EQ(call.run(holder.session).code, KILN_INVALID_ARGUMENT);
  EXPECT_EQ(fake_model_calls(), before);
}

TEST(RuntimeRun, MessagesBelongToTheirSession) {
  SessionHolder first, second;
  Call bad1, bad2;
  kiln_status s1 = kiln_run(first.session, bad1.inputs, 1, bad1.outputs, 1);
  bad2.inputs[0].data = nullptr;
  kiln_status s2 = bad2.run(second.session);
  ASSERT_EQ(s1.code, KILN_INVALID_ARGUMENT);
  ASSERT_EQ(s2.code, KILN_INVALID_ARGUMENT);
  // A failure on another session leaves this session's message intact.
  EXPECT_HAS(s1.message, "takes 2 inputs");
  EXPECT_HAS(s2.message, "data is NULL");
}

TEST(RuntimeDtype, Sizes) {
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_FLOAT32), 4u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_UINT8), 1u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_INT8), 1u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_UINT16), 2u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_INT16), 2u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_INT32), 4u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_INT64), 8u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_BOOL), 1u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_FLOAT16), 2u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_FLOAT64), 8u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_UINT32), 4u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_UINT64), 8u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_BFLOAT16), 2u);
  // ONNX's narrow types: a byte per element, 4-bit and 2-bit ones too.
  for (int32_t narrow = KILN_DTYPE_FLOAT8E4M3FN; narrow <= KILN_DTYPE_INT2;
       ++narrow)
    EXPECT_EQ(kiln_dtype_size(narrow), 1u) << "dtype " << narrow;
  for (int32_t unknown : {0, 8 /* string */, 14, 15, 27, -1, 1000})
    EXPECT_EQ(kiln_dtype_size(unknown), 0u) << "dtype " << unknown;
}

TEST(RuntimeCpu, FeatureLists) {
  char missing[64] = "";
  EXPECT_EQ(kiln_internal_missing_feature("avx2,fma", missing, sizeof(missing)),
            0);
  EXPECT_EQ(kiln_internal_missing_feature(FAKE_MODEL_DEFAULT_ISA, missing,
                                          sizeof(missing)),
            0);
  EXPECT_EQ(kiln_internal_missing_feature("", missing, sizeof(missing)), 0);
  EXPECT_EQ(kiln_internal_missing_feature(",,", missing, sizeof(missing)), 0);
  EXPECT_EQ(kiln_internal_missing_feature("avx2,notafeature", missing,
                                          sizeof(missing)),
            1);
  EXPECT_STREQ(missing, "'notafeature'");
  // Every missing feature is named, not only the first.
  EXPECT_EQ(kiln_internal_missing_feature("nota,avx2,notb", missing,
                                          sizeof(missing)),
            2);
  EXPECT_STREQ(missing, "'nota', 'notb'");
  // Names match whole entries only: a prefix of a real feature is unknown.
  EXPECT_EQ(kiln_internal_missing_feature("avx", missing, sizeof(missing)), 0);
  EXPECT_EQ(kiln_internal_missing_feature("av", missing, sizeof(missing)), 1);
  EXPECT_STREQ(missing, "'av'");
  // The names are truncated, never overflowed, in a short buffer; the count
  // stays right.
  char tiny[4];
  EXPECT_EQ(kiln_internal_missing_feature("notafeature,notb", tiny,
                                          sizeof(tiny)),
            2);
  EXPECT_STREQ(tiny, "'no");
}

TEST(RuntimeCpu, CheckPassesOnThisMachine) {
  kiln_status s = kiln_check_cpu();
  EXPECT_EQ(s.code, KILN_OK) << s.message;
}

// Points the model's required_isa at an unknown feature for one test.
struct BrokenIsa {
  BrokenIsa() { std::strcpy(fake_model_required_isa, "avx2,notafeature"); }
  ~BrokenIsa() { std::strcpy(fake_model_required_isa, FAKE_MODEL_DEFAULT_ISA); }
};

TEST(RuntimeCpu, MissingFeatureIsReported) {
  BrokenIsa broken;
  kiln_status s = kiln_check_cpu();
  EXPECT_EQ(s.code, KILN_UNSUPPORTED_ISA);
  EXPECT_HAS(s.message, "lacks 'notafeature'");
  EXPECT_HAS(s.message, "model 'fake_add'");
  EXPECT_HAS(s.message, "--mcpu");

  kiln_session *session = reinterpret_cast<kiln_session *>(0x1);
  s = kiln_session_create(nullptr, &session);
  EXPECT_EQ(s.code, KILN_UNSUPPORTED_ISA);
  EXPECT_HAS(s.message, "notafeature");
  EXPECT_EQ(session, nullptr);
}

TEST(RuntimeThreads, ManySessionsAgree) {
  constexpr int kThreads = 6, kSessionsPerThread = 3, kRuns = 200;
  // Each thread records y of every run; all must equal the serial answer.
  std::vector<std::vector<float>> results(kThreads);
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < kSessionsPerThread; ++k) {
        kiln_session *session = nullptr;
        if (kiln_session_create(nullptr, &session).code) {
          ++failures[t];
          continue;
        }
        for (int r = 0; r < kRuns; ++r) {
          Call call;
          call.b[2] = static_cast<float>(r);
          if (call.run(session).code)
            ++failures[t];
          results[t].insert(results[t].end(), call.y, call.y + 6);
        }
        kiln_session_destroy(session);
      }
    });
  for (std::thread &t : threads)
    t.join();

  std::vector<float> want;
  for (int k = 0; k < kSessionsPerThread; ++k)
    for (int r = 0; r < kRuns; ++r) {
      const float y[6] = {11, 22, 3.0f + r, 14, 25, 6.0f + r};
      want.insert(want.end(), y, y + 6);
    }
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_EQ(results[t], want) << "thread " << t;
  }
}

TEST(RuntimeAllocation, RunNeverAllocates) {
  SKIP_WITHOUT_ALLOC_COUNTER();
  SessionHolder holder;
  Call good, bad;
  bad.inputs[0].dtype = KILN_DTYPE_INT64;
  // Warm up first so that lazy library setup is not counted.
  ASSERT_EQ(good.run(holder.session).code, KILN_OK);

  alloc_counter_start();
  kiln_status ok = good.run(holder.session);
  kiln_status failed = bad.run(holder.session);
  kiln_status noSession = good.run(nullptr);
  unsigned long allocations = alloc_counter_stop();

  EXPECT_EQ(ok.code, KILN_OK);
  EXPECT_EQ(failed.code, KILN_INVALID_ARGUMENT);
  EXPECT_EQ(noSession.code, KILN_INVALID_ARGUMENT);
  EXPECT_EQ(allocations, 0u);
}

TEST(RuntimeAllocation, CounterSeesAllocations) {
  SKIP_WITHOUT_ALLOC_COUNTER();
  // Guards the test above against a counter that silently counts nothing.
  alloc_counter_start();
  kiln_session *session = nullptr;
  kiln_status s = kiln_session_create(nullptr, &session);
  unsigned long allocations = alloc_counter_stop();
  kiln_session_destroy(session);
  EXPECT_EQ(s.code, KILN_OK);
  EXPECT_GE(allocations, 2u); // the session, its argument slots, the arena
}

} // namespace

// The thread pool (runtime/src/pool.c) directly: many loops of every size
// back to back, each iteration run exactly once and every write of a loop
// visible when __kiln_parallel_for returns; with workers that are late
// (the caller's thread yields, other threads keep the cores busy) a loop
// must still complete without waiting for a worker that never joined it.
struct PoolLoop {
  std::atomic<int> *hits;
  int64_t *values;
  int64_t base;
};

void poolBody(void *ctx, int64_t begin, int64_t end) {
  auto *loop = static_cast<PoolLoop *>(ctx);
  for (int64_t i = begin; i < end; ++i) {
    loop->hits[i].fetch_add(1, std::memory_order_relaxed);
    loop->values[i] = loop->base + i;
  }
}

void runPoolLoops(kiln_pool *pool, int loops) {
  constexpr int64_t kMax = 300;
  std::vector<std::atomic<int>> hits(kMax);
  std::vector<int64_t> values(kMax);
  kiln_pool *previous = kiln_pool_enter(pool);
  for (int l = 0; l < loops; ++l) {
    int64_t count = 1 + (l * 37) % kMax;
    for (int64_t i = 0; i < count; ++i)
      hits[i].store(0, std::memory_order_relaxed);
    PoolLoop loop{hits.data(), values.data(), 1000 * l};
    __kiln_parallel_for(poolBody, &loop, count);
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(hits[i].load(std::memory_order_relaxed), 1)
          << "loop " << l << " of " << count << ", iteration " << i;
      ASSERT_EQ(values[i], 1000 * l + i) << "loop " << l << ", iteration " << i;
    }
    if (l % 97 == 0)
      std::this_thread::yield();
  }
  kiln_pool_leave(previous);
}

TEST(RuntimePool, EveryIterationOnceAcrossManyLoops) {
  for (int threads : {2, 3, 4}) {
    kiln_pool *pool = kiln_pool_create(threads);
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(kiln_pool_threads(pool), threads);
    runPoolLoops(pool, 3000);
    kiln_pool_destroy(pool);
  }
}

TEST(RuntimePool, LateWorkersOnABusyMachine) {
  // More runnable threads than cores: the pool's workers are often not
  // running when a loop starts.
  std::atomic<bool> stop{false};
  std::vector<std::thread> hogs;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency());
       ++i)
    hogs.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed))
        ;
    });
  kiln_pool *pool = kiln_pool_create(3);
  ASSERT_NE(pool, nullptr);
  runPoolLoops(pool, 2000);
  kiln_pool_destroy(pool);
  stop = true;
  for (std::thread &t : hogs)
    t.join();
}

// Each thread takes its own chunk of a loop first (the caller the first
// half on two threads, the worker the second), so consecutive loops give a
// thread the same rows. Either thread may still take the other's chunk when
// that one is late, but only after its own: a thread that runs the other's
// chunk has run its own too.
struct OwnerLoop {
  std::thread::id *ranOn;
};

void ownerBody(void *ctx, int64_t begin, int64_t end) {
  auto *loop = static_cast<OwnerLoop *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    loop->ranOn[i] = std::this_thread::get_id();
  // A chunk takes about as long as a small layer's, long enough for the
  // worker to join.
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
  while (std::chrono::steady_clock::now() < until)
    ;
}

TEST(RuntimePool, EachThreadTakesItsOwnChunkFirst) {
  kiln_pool *pool = kiln_pool_create(2);
  ASSERT_NE(pool, nullptr);
  kiln_pool *previous = kiln_pool_enter(pool);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> ranOn(301);
  int callerFirst = 0, split = 0, loops = 4000;
  for (int l = 0; l < loops; ++l) {
    const int64_t counts[] = {2, 9, 64, 301};
    int64_t count = counts[l % 4];
    int64_t half = (count + 1) / 2;
    std::fill(ranOn.begin(), ranOn.end(), std::thread::id());
    OwnerLoop loop{ranOn.data()};
    __kiln_parallel_for(ownerBody, &loop, count);
    // A chunk is one call: all of its iterations ran on one thread.
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(ranOn[i], ranOn[i < half ? 0 : half])
          << "loop " << l << " of " << count << ", iteration " << i;
    std::thread::id first = ranOn[0], second = ranOn[half];
    if (first != second) {
      ASSERT_EQ(first, caller) << "loop " << l << " of " << count
                               << ": the worker ran the caller's chunk alone";
      ++split;
    }
    callerFirst += first == caller;
  }
  kiln_pool_leave(previous);
  kiln_pool_destroy(pool);
  // The worker takes the caller's chunk only when it finished its own before
  // the caller claimed anything: rare.
  EXPECT_GT(callerFirst, loops * 9 / 10);
  // ...and the worker did join loops (3300-4000 of 4000 here).
  EXPECT_GT(split, 0);
}

TEST(RuntimePool, NoPoolRunsInline) {
  EXPECT_EQ(kiln_pool_create(1), nullptr);
  runPoolLoops(nullptr, 50);
}

#ifndef KILN_TEST_NO_FIBERS // ThreadSanitizer does not follow swapcontext
// The emulated GPU block: what one thread writes before a barrier, every
// other thread sees after it, over several rounds that reuse the "shared"
// buffer; without the barrier a thread reads its neighbour's slot before the
// neighbour has written it, so the emulation catches a missing barrier.
struct EmuBlock {
  static constexpr int kThreads = 64, kRounds = 3;
  int shared[kThreads];
  int seen[kRounds][kThreads];
  bool barriers;
};

void emuThread(void *ctx, int64_t begin, int64_t end) {
  auto *block = static_cast<EmuBlock *>(ctx);
  for (int64_t t = begin; t < end; ++t)
    for (int r = 0; r < EmuBlock::kRounds; ++r) {
      block->shared[t] = 100 * r + static_cast<int>(t);
      if (block->barriers)
        __kiln_emu_barrier();
      block->seen[r][t] = block->shared[(t + 1) % EmuBlock::kThreads];
      if (block->barriers)
        __kiln_emu_barrier();
    }
}

TEST(RuntimeEmulation, BarriersOrderTheThreadsOfABlock) {
  EmuBlock block{};
  block.barriers = true;
  __kiln_emu_fibers(emuThread, &block, EmuBlock::kThreads);
  for (int r = 0; r < EmuBlock::kRounds; ++r)
    for (int t = 0; t < EmuBlock::kThreads; ++t)
      ASSERT_EQ(block.seen[r][t], 100 * r + (t + 1) % EmuBlock::kThreads)
          << "round " << r << ", thread " << t;
  // Again: the stacks are reused.
  EmuBlock again{};
  again.barriers = true;
  __kiln_emu_fibers(emuThread, &again, EmuBlock::kThreads);
  EXPECT_EQ(std::memcmp(block.seen, again.seen, sizeof block.seen), 0);
}

TEST(RuntimeEmulation, AMissingBarrierShows) {
  EmuBlock block{};
  block.barriers = false;
  for (int t = 0; t < EmuBlock::kThreads; ++t)
    block.shared[t] = -1;
  __kiln_emu_fibers(emuThread, &block, EmuBlock::kThreads);
  // Thread 0 ran alone to its end before thread 1 wrote anything.
  EXPECT_EQ(block.seen[0][0], -1);
  EXPECT_NE(block.seen[2][0], 200 + 1);
}

TEST(RuntimeEmulation, ABarrierOutsideFibersIsANoOp) {
  __kiln_emu_barrier();
  SUCCEED();
}
#endif // KILN_TEST_NO_FIBERS
