// Chat templates rendered by a Jinja engine: @huggingface/jinja (the implementation
// node-llama-cpp uses, installed with it in .cache/node-llama-cpp). Reads a JSON file
//   {"cases": [{"template": "...", "messages": [{"role": "user", "content": "..."}, ...],
//               "bos_token": "<bos>", "eos_token": "<eos>"}, ...]}
// and prints one JSON object {"rendered": [{"text": "..."} or {"error": "..."}, ...]}, each case
// rendered with add_generation_prompt true and tools and documents null (as transformers and vLLM
// pass them when a request has none).
import {readFileSync} from "node:fs";
import {Template} from "@huggingface/jinja";

const request = JSON.parse(readFileSync(process.argv[2], "utf8"));
const rendered = request.cases.map((c) => {
  try {
    const text = new Template(c.template).render({
      messages: c.messages, bos_token: c.bos_token ?? "", eos_token: c.eos_token ?? "",
      add_generation_prompt: true, tools: null, documents: null});
    return {text};
  } catch (e) {
    return {error: String(e)};
  }
});
console.log(JSON.stringify({rendered}));
