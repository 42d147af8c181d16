// Run as a Node process of its own (outside the test runner, which loads modules its own way):
// records every module this thread resolves, builds a runtime from the environment given as JSON
// in argv[2], then makes a model call and an embedding. Prints which provider SDK packages the
// main thread had resolved after each step.
import { registerHooks } from "node:module";

const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    resolved.push(result.url);
    return result;
  },
});

const SDK = /[\\/]node_modules[\\/](@anthropic-ai[\\/][^\\/]+|openai)[\\/]/;
function sdkPackages(): string[] {
  const names = resolved.map((url) => SDK.exec(url)?.[1]?.replace("\\", "/")).filter((n) => n !== undefined);
  return [...new Set(names)].sort();
}

const { loadConfig } = await import("../../src/config.ts");
const { createRuntime } = await import("../../src/runtime.ts");
const { createModelClient } = await import("../../src/models/provider.ts");

const config = loadConfig(JSON.parse(process.argv[2] ?? "{}") as Record<string, string>);
const runtime = await createRuntime(config, { scheduleTimer: false, modelOptions: { maxRetries: 0 } });
// Listening, as a runtime does: the server is what keeps the process up (the worker does not).
await runtime.listen(0, "127.0.0.1");
const afterStart = sdkPackages();
const request = { model: "m-1", max_tokens: 64, messages: [{ role: "user" as const, content: "hello" }] };
// The runtime's model calls run in its worker thread, which loads the SDK there.
const viaWorker = await runtime.deps.model.createMessage(request);
const afterWorkerCall = sdkPackages();
await runtime.deps.memory.add("the probe's note", "probe");
const afterEmbedding = sdkPackages();
const local = createModelClient(config, { maxRetries: 0 });
const afterCreate = sdkPackages();
const direct = await local.createMessage(request);
const afterDirectCall = sdkPackages();
// Held open through close(): with the server closed, the threads it stops are all unref'd.
const hold = setInterval(() => {}, 1000);
await runtime.close();
clearInterval(hold);
process.stdout.write(
  JSON.stringify({
    afterStart,
    afterWorkerCall,
    afterEmbedding,
    afterCreate,
    afterDirectCall,
    replies: [viaWorker.content, direct.content],
  }),
);
