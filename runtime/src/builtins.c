/* Compiler support routines a model's code may call and that the C library
 * does not provide. A model.so must load with libc and libm alone, so the
 * runtime (linked into every model, hidden) defines them itself. */
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
/* float32 -> bfloat16, rounded to nearest even; a NaN stays a (quiet) NaN.
 * LLVM calls it for an fptrunc to bf16 on CPUs without AVX512-BF16 (Cast,
 * Range and elementwise ops on bfloat16 tensors); Debian 12's libgcc lacks it.
 * The result travels in the low 16 bits of %xmm0, as _Float16 does. */
_Float16 __truncsfbf2(float f);
_Float16 __truncsfbf2(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  uint16_t h;
  if ((u & 0x7fffffffu) > 0x7f800000u)
    h = (uint16_t)((u >> 16) | 0x40);
  else
    h = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  _Float16 r;
  memcpy(&r, &h, sizeof r);
  return r;
}
#endif
