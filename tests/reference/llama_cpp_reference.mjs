// Reference outputs from llama.cpp (the npm package node-llama-cpp, prebuilt CPU binaries):
// token ids of strings, greedy continuations, and the next-token distribution at every position
// of a token sequence (softmax of the logits: temperature 1, no top-k/top-p/min-p).
// Prints one JSON object.
//   node llama_cpp_reference.mjs MODEL.gguf '{"tokenize": ["..."], "tokenize_special": ["..."], "greedy": {"prompt": "...", "tokens": 40},
//                                              "probs": {"tokens": [1, 2, ...], "kv": "q8_0"},
//                                              "timing": {"prompt": "...", "tokens": 32, "threads": 1}}'
import {getLlama} from "node-llama-cpp";

const [modelPath, requestText] = process.argv.slice(2);
const request = JSON.parse(requestText);
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, logLevel: "error"});
const model = await llama.loadModel({modelPath});
const out = {tokenize: [], greedy: null, probs: null, timing: null};
for (const text of request.tokenize ?? []) out.tokenize.push(Array.from(model.tokenize(text)));
// With special tokens parsed (their strings in the text stand for them), as for chat prompts.
out.tokenize_special = (request.tokenize_special ?? []).map((t) => Array.from(model.tokenize(t, true)));
if (request.greedy) {
  const context = await model.createContext({contextSize: 512, threads: 1});
  const sequence = context.getSequence();
  const prompt = [model.tokens.bos, ...model.tokenize(request.greedy.prompt)];
  const generated = [];
  for await (const token of sequence.evaluate(prompt, {temperature: 0})) {
    if (token === model.tokens.eos) break;
    generated.push(token);
    if (generated.length >= request.greedy.tokens) break;
  }
  out.greedy = {prompt, generated};
  await context.dispose();
}
if (request.probs) {
  // An F32 KV cache (llama.cpp's default is F16), so that the comparison measures the model code
  // and kernels rather than the cache's rounding; or, with "kv": "q8_0", llama.cpp's Q8_0 cache
  // (a quantized value cache needs flash attention there).
  const q8 = request.probs.kv === "q8_0";
  const context = await model.createContext({
    contextSize: 512, threads: 1, flashAttention: q8, experimentalKvCacheKeyType: q8 ? "Q8_0" : "F32",
    experimentalKvCacheValueType: q8 ? "Q8_0" : "F32"});
  const sequence = context.getSequence();
  const options = {temperature: 1, topK: 0, topP: 1, minP: 0};
  const input = request.probs.tokens.map(
      (t) => [t, {generateNext: {probabilities: true, options}}]);
  const results = await sequence.controlledEvaluate(input);
  const vocab = model.tokens.vocabularySize ?? model.fileInsights.tensorInfo?.length;
  out.probs = results.map((r) => {
    const dense = new Array(model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? 0).fill(0);
    for (const [token, p] of r?.next?.probabilities ?? []) dense[token] = p;
    return dense;
  });
  void vocab;
  await context.dispose();
}
if (request.timing) {
  // Decode speed on `threads` threads: time from the first generated token to the last.
  const context = await model.createContext({contextSize: 512, threads: request.timing.threads ?? 1});
  const sequence = context.getSequence();
  const prompt = [model.tokens.bos, ...model.tokenize(request.timing.prompt)];
  let count = 0, start = 0;
  for await (const token of sequence.evaluate(prompt, {temperature: 0})) {
    if (count === 0) start = performance.now();
    if (++count > request.timing.tokens) break;
  }
  const seconds = (performance.now() - start) / 1000;
  out.timing = {tokens: count - 1, seconds, tokens_per_second: (count - 1) / seconds};
  await context.dispose();
}
await model.dispose();
console.log(JSON.stringify(out));
