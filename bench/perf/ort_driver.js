// Benchmark driver for one model in ONNX Runtime (npm onnxruntime-node, CPU
// execution provider), run by bench/perf/run.py.
//
// usage: node ort_driver.js MODEL.onnx THREADS INPUTS.json
//
// INPUTS.json lists {name, dtype, shape, file} with raw little-endian data, the
// same files the Kiln driver reads. One session: intraOpNumThreads = THREADS,
// one inter-op thread, sequential execution, all graph optimizations. Commands
// on stdin, one per line (the protocol of kiln_driver.c):
//   run K        runs K times; prints "ok t1 ... tK" (milliseconds each)
//   dump PATH    writes output 0 of the last run to PATH; prints "ok"
//   quit
const fs = require('fs');
const readline = require('readline');
const ort = require('onnxruntime-node');
const types = {float32: Float32Array, int64: BigInt64Array, int32: Int32Array,
               float64: Float64Array, uint8: Uint8Array, int8: Int8Array};
(async () => {
  const [model, threads, spec] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: Number(threads),
    interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const t of JSON.parse(fs.readFileSync(spec, 'utf8'))) {
    const bytes = fs.readFileSync(t.file);
    const Arr = types[t.dtype];
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    feeds[t.name] = new ort.Tensor(t.dtype, new Arr(copy.buffer), t.shape);
  }
  let last = null;
  const rl = readline.createInterface({input: process.stdin});
  for await (const line of rl) {
    if (line.startsWith('run ')) {
      const k = Number(line.slice(4));
      const ms = [];
      for (let i = 0; i < k; i++) {
        const t0 = process.hrtime.bigint();
        last = await session.run(feeds);
        ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      process.stdout.write('ok ' + ms.map((x) => x.toFixed(6)).join(' ') + '\n');
    } else if (line.startsWith('dump ')) {
      const out = last[session.outputNames[0]].data;
      fs.writeFileSync(line.slice(5), Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      process.stdout.write('ok\n');
    } else if (line.startsWith('quit')) {
      break;
    } else {
      process.stderr.write('ort_driver: unknown command ' + line + '\n');
      process.exit(1);
    }
  }
  process.exit(0);
})().catch((e) => { process.stderr.write('ort_driver: ' + e + '\n'); process.exit(1); });
