import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InferencePlatform, startInferencePlatform } from "./harness.ts";

const pg = await requirePostgres();

/** A port nothing listens on: one a server held, then gave back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

describe.skipIf(!pg.available)(`a provider that does not answer${pg.reason}`, () => {
  // Reads each call and never answers it.
  const hanging: Server = createServer((req) => req.resume());
  let h: InferencePlatform;

  beforeAll(async () => {
    hanging.listen(0, "127.0.0.1");
    await once(hanging, "listening");
    const port = (hanging.address() as AddressInfo).port;
    h = await startInferencePlatform(
      {
        cloudBKey: "cloud-b-key",
        cloudBBaseUrl: `http://127.0.0.1:${port}`,
        cloudBOpenAiBaseUrl: `http://127.0.0.1:${await closedPort()}`,
      },
      { headersTimeoutMs: 300 },
    );
  });
  afterAll(async () => {
    await h?.close();
    hanging.closeAllConnections();
    await new Promise((done) => hanging.close(done));
  });

  const post = (path: string, body: unknown) =>
    fetch(`${h.url}/v1/llm/cloud-b/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.projectToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });

  it("one that holds the call past the bound: 504 gateway-timeout naming the wait, in time", async () => {
    const started = Date.now();
    const res = await post("family-1/anthropic/v1/messages", {
      model: "claude-haiku-4-5",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(res.status).toBe(504);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await res.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/gateway-timeout$/);
    expect(problem.detail).toContain("did not answer within 0.3 s");
    expect(problem.detail).not.toContain("cloud-b-key");
  });

  it("one that cannot be reached: 502 bad-gateway naming why", async () => {
    const res = await post("family-2/openai/v1/chat/completions", {
      model: "gpt-4o-mini",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(res.status).toBe(502);
    const problem = (await res.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/bad-gateway$/);
    expect(problem.detail).toMatch(/could not be reached \(ECONNREFUSED\)/);
  });
});
