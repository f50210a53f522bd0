// Reference outputs from llama.cpp (the npm package node-llama-cpp, prebuilt CPU binaries):
// token ids of strings, and greedy continuations. Prints one JSON object.
//   node llama_cpp_reference.mjs MODEL.gguf '{"tokenize": ["..."], "greedy": {"prompt": "...", "tokens": 40}}'
import {getLlama} from "node-llama-cpp";

const [modelPath, requestText] = process.argv.slice(2);
const request = JSON.parse(requestText);
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, logLevel: "error"});
const model = await llama.loadModel({modelPath});
const out = {tokenize: [], greedy: null};
for (const text of request.tokenize ?? []) out.tokenize.push(Array.from(model.tokenize(text)));
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
await model.dispose();
console.log(JSON.stringify(out));
