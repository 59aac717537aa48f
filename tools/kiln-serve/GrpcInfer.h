// The KServe v2 gRPC ModelInfer call: tensors in ModelInferRequest (raw
// little-endian bytes in raw_input_contents, or typed values in each input's
// `contents`) checked and run through the same code the HTTP infer uses.
#ifndef KILN_TOOLS_KILN_SERVE_GRPCINFER_H
#define KILN_TOOLS_KILN_SERVE_GRPCINFER_H

#include "ModelVersion.h"

#include "inference.pb.h"

namespace kiln::serve {

/// Checks every input of `request` against `model`, runs it on the model's
/// batcher and fills `response`. Outputs come back in raw_output_contents
/// when the request sent raw_input_contents or an output's datatype has no
/// typed field (FP16, BF16, ...), else in each output's `contents`. Throws
/// Error: 400 for a bad request (naming the input), 503 when the queue is
/// full, 500 when the model fails.
void grpcInfer(ModelVersion &model, const inference::ModelInferRequest &request,
               inference::ModelInferResponse &response);

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_GRPCINFER_H
