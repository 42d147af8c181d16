// The model worker thread: holds the provider SDK client and makes every model call, so the
// HTTP requests, stream decoding and retries of model calls do not run on the receiver's thread.
// Started by WorkerModelClient (worker-client.ts); the protocol is defined there.
import { parentPort, workerData } from "node:worker_threads";
import type { RuntimeConfig } from "../config.ts";
import { createModelClient, type ModelClientOptions } from "./provider.ts";
import type { ToWorker } from "./worker-client.ts";

const { config, options } = workerData as { config: RuntimeConfig; options: ModelClientOptions };
const client = createModelClient(config, options);
const port = parentPort;
const controllers = new Map<number, AbortController>();

async function call(id: number, request: Extract<ToWorker, { type: "call" }>): Promise<void> {
  const controller = new AbortController();
  controllers.set(id, controller);
  try {
    const message = await client.createMessage(request.request, {
      signal: controller.signal,
      ...(request.streamText ? { onText: (delta: string) => port?.postMessage({ id, type: "text", delta }) } : {}),
    });
    port?.postMessage({ id, type: "done", message });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const status = (err as { status?: unknown }).status;
    port?.postMessage({
      id,
      type: "error",
      name: e.name,
      message: e.message,
      ...(typeof status === "number" ? { status } : {}),
    });
  } finally {
    controllers.delete(id);
  }
}

port?.on("message", (msg: ToWorker) => {
  if (msg.type === "abort") controllers.get(msg.id)?.abort();
  else void call(msg.id, msg);
});
