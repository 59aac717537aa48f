// Runs an ONNX model once with ONNX Runtime (CPU, 1 thread) on inputs saved
// as raw files by bench/memory/run.py, so that peak RSS can be measured.
// usage: node ort_run.js MODEL.onnx INPUTS.json
const fs = require('fs');
const ort = require('onnxruntime-node');
const types = {float32: Float32Array, int64: BigInt64Array, int32: Int32Array};
(async () => {
  const [model, spec] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const t of JSON.parse(fs.readFileSync(spec, 'utf8'))) {
    const bytes = fs.readFileSync(t.file);
    const Arr = types[t.dtype];
    const data = new Arr(bytes.buffer, bytes.byteOffset, bytes.byteLength / Arr.BYTES_PER_ELEMENT);
    feeds[t.name] = new ort.Tensor(t.dtype, data, t.shape);
  }
  for (let i = 0; i < 3; i++) await session.run(feeds);
})();
