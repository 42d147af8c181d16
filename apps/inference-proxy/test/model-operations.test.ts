import { gzipSync } from "node:zlib";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

const pg = await requirePostgres();
const HAIKU = "anthropic.claude-haiku-4-5";
const invokeBody = {
  anthropic_version: "bedrock-2023-05-31",
  max_tokens: 10,
  messages: [{ role: "user", content: "hi" }],
};

/**
 * The provider keys are the installation's (or a project's), shared by every caller of them: only
 * the model calls the proxy meters go through, never the provider's other APIs (stored files,
 * batches, asynchronous jobs, stored responses), which would reach other tenants' data or run
 * model calls whose usage never comes back in the answer.
 */
describe.skipIf(!pg.available)(`only model calls reach the provider${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform({
      cloudA: { kind: "bearer", token: CREDS.bearer },
      cloudAEndpointUrl: up.url,
      cloudAAltBaseUrl: up.url,
      cloudBKey: CREDS.cloudBKey,
      cloudBBaseUrl: up.url,
    });
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  const send = (
    method: string,
    path: string,
    init: { body?: string | Uint8Array; headers?: Record<string, string> } = {},
  ) =>
    fetch(`${h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${h.projectToken}`, "content-type": "application/json", ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });

  it("reads of the provider's stored data are refused with 405 and never forwarded", async () => {
    const seen = up.seen.length;
    for (const path of [
      "/v1/llm/cloud-b/family-2/openai/v1/files",
      "/v1/llm/cloud-b/family-2/openai/v1/responses/resp_of_another_tenant",
      "/v1/llm/cloud-a-alt/family-2/us-east-1/v1/batches",
      "/v1/llm/cloud-a/us-east-1/async-invoke",
      `/v1/llm/cloud-a/us-east-1/model/${HAIKU}/invoke`,
    ]) {
      for (const method of ["GET", "DELETE", "PUT"]) {
        const res = await send(method, path, method === "GET" ? {} : { body: "{}" });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
        expect(res.headers.get("allow")).toBe("POST");
      }
    }
    expect(up.seen.slice(seen).map((s) => `${s.method} ${s.path}`)).toEqual([]);
  });

  it("POSTs to the provider's other APIs are 404 naming the model operations, and never forwarded", async () => {
    const seen = up.seen.length;
    for (const path of [
      "/v1/llm/cloud-a/us-east-1/async-invoke",
      "/v1/llm/cloud-a/us-east-1/guardrail/g1/version/1/apply",
      `/v1/llm/cloud-a/us-east-1/model/${HAIKU}/no-such-operation`,
      "/v1/llm/cloud-a/us-east-1/model/%2e%2e/x",
      "/v1/llm/cloud-b/family-2/openai/v1/files",
      "/v1/llm/cloud-b/family-2/openai/v1/batches",
      "/v1/llm/cloud-b/family-2/openai/v1/responses",
      "/v1/llm/cloud-b/family-2/openai/v1/fine_tuning/jobs",
      "/v1/llm/cloud-b/family-1/anthropic/v1/files",
      "/v1/llm/cloud-b/family-1/anthropic/v1/messages/batches",
      "/v1/llm/cloud-a-alt/family-1/us-east-1/anthropic/v1/messages/batches",
      "/v1/llm/cloud-a-alt/family-2/us-east-1/v1/responses",
    ]) {
      const res = await send("POST", path, { body: JSON.stringify({ model: HAIKU, max_tokens: 5 }) });
      expect(res.status, path).toBe(404);
      const problem = (await res.json()) as { detail: string };
      expect(problem.detail, path).toMatch(/not a model operation/);
    }
    expect(up.seen.slice(seen).map((s) => s.path)).toEqual([]);
  });

  it("every model operation of every route still goes through", async () => {
    const calls: [string, unknown][] = [
      [`/v1/llm/cloud-a/us-east-1/model/${HAIKU}/invoke`, invokeBody],
      [`/v1/llm/cloud-a/us-east-1/model/${HAIKU}/converse`, { messages: [] }],
      ["/v1/llm/cloud-a-alt/family-1/us-east-1/anthropic/v1/messages?beta=true", { model: HAIKU, max_tokens: 5 }],
      ["/v1/llm/cloud-a-alt/family-2/us-east-1/v1/chat/completions", { model: "gpt-x", max_tokens: 5 }],
      ["/v1/llm/cloud-a-alt/family-2/us-east-1/v1/embeddings", { model: "embed-x", input: "hi" }],
      ["/v1/llm/cloud-b/family-1/anthropic/v1/messages", { model: HAIKU, max_tokens: 5 }],
      ["/v1/llm/cloud-b/family-1/openai/deployments/embed-x/embeddings?api-version=2024-10-21", { input: "hi" }],
      ["/v1/llm/cloud-b/family-2/openai/v1/chat/completions", { model: "gpt-x", max_tokens: 5 }],
      ["/v1/llm/cloud-b/family-2/openai/deployments/gpt-x/chat/completions?api-version=2024-10-21", { max_tokens: 5 }],
      ["/v1/llm/cloud-b/family-2/openai/deployments/embed-x/embeddings?api-version=2024-10-21", { input: "hi" }],
    ];
    for (const [path, body] of calls) {
      const res = await send("POST", path, { body: JSON.stringify(body) });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
      await res.arrayBuffer();
    }
  });

  it("a compressed body, which the proxy cannot read to estimate, is refused with 415 and never forwarded", async () => {
    const seen = up.seen.length;
    const res = await send("POST", `/v1/llm/cloud-a/us-east-1/model/${HAIKU}/invoke`, {
      body: gzipSync(JSON.stringify(invokeBody)),
      headers: { "content-encoding": "gzip" },
    });
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(up.seen.length).toBe(seen);
    const identity = await send("POST", `/v1/llm/cloud-a/us-east-1/model/${HAIKU}/invoke`, {
      body: JSON.stringify(invokeBody),
      headers: { "content-encoding": "identity" },
    });
    expect(identity.status).toBe(200);
  });

  it("a body naming its output cap twice is a 400 problem before anything is reserved or forwarded", async () => {
    const seen = up.seen.length;
    const res = await send("POST", "/v1/llm/cloud-b/family-1/anthropic/v1/messages", {
      body: `{"model":"${HAIKU}","max_tokens":100000,"max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`,
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(((await res.json()) as { detail: string }).detail).toContain('"max_tokens" twice');
    expect(up.seen.length).toBe(seen);
  });

  it("a Bedrock tier billed above the price table is a 400 and never forwarded; the standard one goes", async () => {
    const seen = up.seen.length;
    const path = `/v1/llm/cloud-a/us-east-1/model/${HAIKU}/invoke`;
    const body = JSON.stringify(invokeBody);
    const priority = await send("POST", path, { body, headers: { "x-amzn-bedrock-service-tier": "priority" } });
    expect(priority.status).toBe(400);
    expect(((await priority.json()) as { detail: string }).detail).toContain("x-amzn-bedrock-service-tier");
    expect(up.seen.length).toBe(seen);
    const standard = await send("POST", path, { body, headers: { "x-amzn-bedrock-service-tier": "default" } });
    expect(standard.status).toBe(200);
    expect(up.seen.at(-1)?.headers["x-amzn-bedrock-service-tier"]).toBe("default");
  });

  it("a project id that is not valid percent-encoding is a 400 problem, not a 500", async () => {
    const res = await send("POST", `/v1/projects/%E0%A4%A/llm/cloud-a/us-east-1/model/${HAIKU}/invoke`, {
      body: JSON.stringify(invokeBody),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  });
});
