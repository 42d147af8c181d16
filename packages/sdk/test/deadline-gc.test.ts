// The deadline holds in a process that collects garbage while it waits: nothing it needs to fire
// may be held only weakly (AbortSignal.timeout, AbortSignal.any and copies of a Request are).
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostileServer, startHostileServer } from "./hostile-server.ts";

const SDK = pathToFileURL(fileURLToPath(new URL("../src/index.ts", import.meta.url))).href;

let server: HostileServer;
beforeAll(async () => {
  server = await startHostileServer((req, res) => {
    if (req.url === "/hang-body") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"items":[');
    }
    // Anything else: never answered.
  });
});
afterAll(async () => {
  await server.close();
});

/** Calls `path` with a 1 s deadline in a child that collects garbage every 50 ms; its outcome and time. */
function callCollecting(path: string, retry: boolean): Promise<{ outcome: string; ms: number }> {
  const script = `
    setInterval(() => globalThis.gc(), 50).unref();
    const { createAgentplaneClient, RequestTimeoutError } = await import(${JSON.stringify(SDK)});
    const client = createAgentplaneClient({ baseUrl: ${JSON.stringify(server.url)}, timeoutMs: 1000, retry: ${retry ? "{ baseDelayMs: 10 }" : "false"} });
    const started = Date.now();
    const outcome = await client.raw("GET", ${JSON.stringify(path)}).then(() => "answered", (e) => (e instanceof RequestTimeoutError ? "RequestTimeoutError" : e.name));
    console.log(JSON.stringify({ outcome, ms: Date.now() - started }));
    process.exit(0);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
      timeout: 12_000,
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c;
    });
    child.on("error", reject);
    child.on("close", () => resolve(out ? JSON.parse(out) : { outcome: "still waiting at 12 s", ms: 12_000 }));
  });
}

describe("the client's deadline under garbage collection", () => {
  for (const [path, retry] of [
    ["/hang", false],
    ["/hang", true],
    ["/hang-body", false],
  ] as const) {
    it(`ends ${path}${retry ? " (retrying)" : ""} at the deadline`, async () => {
      const { outcome, ms } = await callCollecting(path, retry);
      expect(outcome).toBe("RequestTimeoutError");
      expect(ms).toBeLessThan(5_000);
    }, 20_000);
  }
});
