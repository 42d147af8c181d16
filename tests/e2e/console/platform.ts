import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, type Spawned, spawnNode } from "../processes.ts";

/**
 * The embedded platform as `npm start` runs it, on a free port and a temporary data dir; `env`
 * adds settings (e.g. `CONNECTOR_ALLOWED_HOSTS` for local stand-ins).
 */
export async function startPlatform(env: Record<string, string> = {}): Promise<{
  url: string;
  token: string;
  process: Spawned;
  api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-console-"));
  const token = `console-e2e-${randomBytes(24).toString("hex")}`;
  const port = await freePort();
  const child = spawnNode("apps/platform/src/main.ts", [], {
    PORT: String(port),
    HOST: "127.0.0.1",
    AGENTPLANE_DATA_DIR: dataDir,
    AGENTPLANE_BOOTSTRAP_TOKEN: token,
    AGENT_RUNTIME: "off",
    SANDBOX_LOCAL_ISOLATION: "none",
    PUBLIC_URL: `http://localhost:${port}`,
    ...env,
  });
  await child.waitFor(/Health\s+http:\/\/\S+\/health/, 120_000);
  const url = `http://localhost:${port}`;
  return {
    url,
    token,
    process: child,
    async api<T>(method: string, path: string, body?: unknown) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
    },
    async stop() {
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
