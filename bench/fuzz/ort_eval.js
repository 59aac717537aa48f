// Runs an ONNX model with ONNX Runtime (CPU, 1 thread) on raw inputs and
// writes its outputs as raw files, for bench/fuzz/models.py.
// usage: node ort_eval.js MODEL.onnx INPUTS.json OUTDIR
// INPUTS.json: [{name, dtype, shape, file}]; writes OUTDIR/outputs.json with
// [{name, dtype, shape, file}] in the graph's output order.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const types = {float32: Float32Array, int64: BigInt64Array, int32: Int32Array,
               bool: Uint8Array};
(async () => {
  const [model, spec, outDir] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential'});
  const feeds = {};
  for (const t of JSON.parse(fs.readFileSync(spec, 'utf8'))) {
    const bytes = fs.readFileSync(t.file);
    const Arr = types[t.dtype];
    const data = new Arr(bytes.buffer.slice(bytes.byteOffset,
                                            bytes.byteOffset + bytes.byteLength));
    feeds[t.name] = new ort.Tensor(t.dtype, data, t.shape);
  }
  const results = await session.run(feeds);
  const out = [];
  session.outputNames.forEach((name, i) => {
    const r = results[name];
    const file = path.join(outDir, `out${i}.bin`);
    fs.writeFileSync(file, Buffer.from(r.data.buffer, r.data.byteOffset,
                                       r.data.byteLength));
    out.push({name, dtype: r.type, shape: r.dims, file});
  });
  fs.writeFileSync(path.join(outDir, 'outputs.json'), JSON.stringify(out));
})().catch(e => { console.error(String(e)); process.exit(2); });
