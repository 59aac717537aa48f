// RUN: kiln-opt %s --split-input-file --kiln-convert-onnx-to-kiln -verify-diagnostics

module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @dft_runtime_length(%x: tensor<1x8x1xf32>, %n: tensor<i64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'dft' (DFT, opset 17): dft_length must be a compile-time constant scalar; run-time DFT lengths are not supported}}
    %y = "onnx.DFT"(%x, %n) : (tensor<1x8x1xf32>, tensor<i64>) -> tensor<*xf32> loc("dft")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @dft_irfft_of_real(%x: tensor<1x8x1xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'dft' (DFT, opset 17): onesided=1 with inverse=1 (IRFFT) takes a complex spectrum ([..., 2]); got a real one}}
    %y = "onnx.DFT"(%x) {inverse = 1 : si64, onesided = 1 : si64} : (tensor<1x8x1xf32>) -> tensor<*xf32> loc("dft")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @stft_no_frame_length(%x: tensor<1x64x1xf32>, %step: tensor<i64>) -> tensor<*xf32> {
    %none = onnx.NoValue loc("none")
    // expected-error@unknown {{node 'stft' (STFT, opset 17): needs a window or frame_length to know the frame length; give one of them}}
    %y = "onnx.STFT"(%x, %step, %none, %none) : (tensor<1x64x1xf32>, tensor<i64>, none, none) -> tensor<*xf32> loc("stft")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @stft_runtime_step_undeclared(%x: tensor<1x64x1xf32>, %step: tensor<i64>, %w: tensor<16xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 'stft' (STFT, opset 17): frame_step must be a compile-time constant, or the output shape must be declared static}}
    %y = "onnx.STFT"(%x, %step, %w) : (tensor<1x64x1xf32>, tensor<i64>, tensor<16xf32>) -> tensor<*xf32> loc("stft")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 9 : i64}} {
  func.func @tfidf_float(%x: tensor<2x6xf32>) -> tensor<*xf32> {
    // expected-error@unknown {{node 't' (TfIdfVectorizer, opset 9): element type 'f32' is not supported for TfIdfVectorizer}}
    %y = "onnx.TfIdfVectorizer"(%x) {mode = "TF", min_gram_length = 1 : si64, max_gram_length = 1 : si64, max_skip_count = 0 : si64, ngram_counts = [0 : si64], ngram_indexes = [0 : si64], pool_int64s = [1 : si64]} : (tensor<2x6xf32>) -> tensor<*xf32> loc("t")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 9 : i64}} {
  func.func @tfidf_bad_counts(%x: tensor<2x6xi64>) -> tensor<*xf32> {
    // expected-error@unknown {{node 't' (TfIdfVectorizer, opset 9): ngram_counts entry 1 does not delimit whole 2-grams of pool_int64s}}
    %y = "onnx.TfIdfVectorizer"(%x) {mode = "TF", min_gram_length = 1 : si64, max_gram_length = 2 : si64, max_skip_count = 0 : si64, ngram_counts = [0 : si64, 1 : si64], ngram_indexes = [0 : si64, 1 : si64], pool_int64s = [1 : si64, 2 : si64, 3 : si64, 4 : si64]} : (tensor<2x6xi64>) -> tensor<*xf32> loc("t")
    return %y : tensor<*xf32>
  }
}

// -----

module attributes {onnx.opset_import = {ai.onnx = 20 : i64}} {
  func.func @dft20_bad_axis(%x: tensor<1x8x2xf32>) -> tensor<*xf32> {
    %none = "onnx.NoValue"() : () -> none
    %axis = "onnx.Constant"() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
    // expected-error@unknown {{node 'dft' (DFT, opset 20): axis -1 must name a signal dimension of the rank-3 input ([-3, -2] or [0, 1]; the last dimension holds the real and imaginary parts)}}
    %y = "onnx.DFT"(%x, %none, %axis) : (tensor<1x8x2xf32>, none, tensor<i64>) -> tensor<*xf32> loc("dft")
    return %y : tensor<*xf32>
  }
}
