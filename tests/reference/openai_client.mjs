// The official OpenAI Node client (npm `openai`, pinned in scripts/install-deps.sh, installed in
// .cache/node-llama-cpp) against an OpenAI-compatible server, unmodified: the calls a user of
// vLLM makes. Usage: node openai_client.mjs BASE_URL MODEL. Prints one JSON object with what
// each call returned, or {"failed": "...", "error": "..."} and exit status 1 when a call throws.
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({baseURL: `${baseURL}/v1`, apiKey: "none", maxRetries: 0});
const messages = [{role: "user", content: "Once upon a time"}];
const out = {};
let step = "";

async function streamedText(stream) {
  let text = "";
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    ++chunks;
    for (const choice of chunk.choices) text += choice.delta?.content ?? choice.text ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  return {text, usage, chunks};
}

try {
  step = "completions.create n=2";
  const c = await client.completions.create({model, prompt: "Once upon a time", max_tokens: 8,
                                             n: 2, seed: 3});
  out.completions = {texts: c.choices.map((x) => x.text), usage: c.usage};

  step = "chat.completions.create max_completion_tokens";
  const chat = await client.chat.completions.create({model, messages, max_completion_tokens: 5,
                                                     seed: 1});
  out.chat = {text: chat.choices[0].message.content, usage: chat.usage,
              finish_reason: chat.choices[0].finish_reason};

  step = "chat stream with usage";
  out.stream_with_usage = await streamedText(await client.chat.completions.create(
      {model, messages, max_tokens: 5, seed: 1, stream: true,
       stream_options: {include_usage: true}}));

  step = "chat stream without usage";
  out.stream_without_usage = await streamedText(await client.chat.completions.create(
      {model, messages, max_tokens: 5, seed: 1, stream: true}));

  step = "completions stream with usage";
  out.completion_stream = await streamedText(await client.completions.create(
      {model, prompt: "Once upon a time", max_tokens: 8, seed: 3, stream: true,
       stream_options: {include_usage: true}}));

  step = "chat.completions.stream().finalChatCompletion()";
  const stream = (client.chat.completions.stream ?? client.beta.chat.completions.stream).call(
      client.chat.completions.stream ? client.chat.completions : client.beta.chat.completions,
      {model, messages, max_tokens: 5, seed: 1, stream_options: {include_usage: true}});
  const final = await stream.finalChatCompletion();
  out.final_chat_completion = {text: final.choices[0].message.content, usage: final.usage};

  step = "completions.create logprobs";
  const lc = await client.completions.create({model, prompt: "Once upon a time", max_tokens: 8,
                                              seed: 3, logprobs: 2});
  out.completion_logprobs = {text: lc.choices[0].text, logprobs: lc.choices[0].logprobs,
                             usage: lc.usage};

  step = "chat.completions.create logprobs top_logprobs";
  const lchat = await client.chat.completions.create({model, messages, max_tokens: 5, seed: 1,
                                                      logprobs: true, top_logprobs: 2});
  out.chat_logprobs = {text: lchat.choices[0].message.content,
                       content: lchat.choices[0].logprobs.content, usage: lchat.usage};

  step = "chat stream with logprobs";
  const entries = [];
  for await (const chunk of await client.chat.completions.create(
      {model, messages, max_tokens: 5, seed: 1, stream: true, logprobs: true, top_logprobs: 2}))
    for (const choice of chunk.choices) entries.push(...(choice.logprobs?.content ?? []));
  out.stream_logprobs = {content: entries};

  step = "an unsupported field";
  try {
    await client.completions.create({model, prompt: "Once", echo: true});
    out.echo = {accepted: true};
  } catch (e) {
    out.echo = {status: e.status, message: String(e.message)};
  }
  console.log(JSON.stringify(out));
} catch (e) {
  console.log(JSON.stringify({failed: step, error: String(e?.stack ?? e)}));
  process.exit(1);
}
