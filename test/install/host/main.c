/* Runs a linked Kiln model on one input read from a raw file and writes its
 * first output raw: host INPUT.bin OUTPUT.bin. Exit status 0 on success. */
#include <kiln/runtime.h>

#include <stdio.h>
#include <stdlib.h>

static size_t tensor_bytes(const kiln_tensor_info *t) {
  size_t n = kiln_dtype_size(t->dtype);
  for (int32_t i = 0; i < t->rank; ++i)
    n *= (size_t)t->shape[i];
  return n;
}

static int fail(const char *what, kiln_status s) {
  fprintf(stderr, "host: %s: %s\n", what, s.message);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: host INPUT.bin OUTPUT.bin\n");
    return 2;
  }
  const kiln_model_info *info = kiln_get_model_info();
  if (info->abi_version != KILN_ABI_VERSION || info->num_inputs != 1 ||
      info->num_outputs < 1 || info->num_outputs > 8) {
    fprintf(stderr, "host: unexpected model (abi %u, %u inputs)\n",
            info->abi_version, info->num_inputs);
    return 1;
  }
  size_t in_bytes = tensor_bytes(&info->inputs[0]);
  size_t out_bytes = tensor_bytes(&info->outputs[0]);
  void *in = malloc(in_bytes), *out = malloc(out_bytes);
  FILE *f = fopen(argv[1], "rb");
  if (!in || !out || !f || fread(in, 1, in_bytes, f) != in_bytes) {
    fprintf(stderr, "host: cannot read %zu bytes from %s\n", in_bytes, argv[1]);
    return 1;
  }
  fclose(f);

  kiln_session *session = NULL;
  kiln_status s = kiln_session_create(NULL, &session);
  if (s.code)
    return fail("kiln_session_create", s);
  kiln_tensor input = {in, in_bytes, info->inputs[0].dtype,
                       info->inputs[0].rank, info->inputs[0].shape};
  kiln_tensor output = {out, out_bytes, info->outputs[0].dtype,
                        info->outputs[0].rank, info->outputs[0].shape};
  /* A model with several outputs: only the first is compared. */
  kiln_tensor outputs[8] = {output};
  void *extra[8] = {0};
  for (uint32_t i = 1; i < info->num_outputs && i < 8; ++i) {
    size_t b = tensor_bytes(&info->outputs[i]);
    extra[i] = malloc(b);
    kiln_tensor t = {extra[i], b, info->outputs[i].dtype, info->outputs[i].rank,
                     info->outputs[i].shape};
    outputs[i] = t;
  }
  s = kiln_run(session, &input, 1, outputs, info->num_outputs);
  if (s.code)
    return fail("kiln_run", s);
  kiln_session_destroy(session);

  f = fopen(argv[2], "wb");
  if (!f || fwrite(out, 1, out_bytes, f) != out_bytes) {
    fprintf(stderr, "host: cannot write %s\n", argv[2]);
    return 1;
  }
  fclose(f);
  printf("host: ran %s (%s), %zu output bytes\n", info->name, info->cpu,
         out_bytes);
  return 0;
}
