import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type InferencePlatform, startInferencePlatform } from "./harness.ts";

const pg = await requirePostgres();

interface Costs {
  total: { requests: number; inputTokens: number; outputTokens: number; costMicroUsd: number };
}
interface Status {
  items: { limitId: string; reservedUsd: number }[];
}

/**
 * A provider that behaves by the model named: `hang` reads the call and never answers (it notes
 * that the call arrived and when its connection closes), `silent` answers 200 with no usage,
 * `boast` with counts no call can reach.
 */
function startProvider() {
  let arrived: () => void = () => {};
  let closed: () => void = () => {};
  const state = {
    arrived: new Promise<void>((r) => {
      arrived = r;
    }),
    closed: new Promise<void>((r) => {
      closed = r;
    }),
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model?: string };
      if (body.model === "claude-hang") {
        res.on("close", () => closed());
        arrived();
        return;
      }
      const answer = JSON.stringify({
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text: "x".repeat(4000) }],
        stop_reason: "end_turn",
        ...(body.model === "claude-boast" ? { usage: { input_tokens: 1e300, output_tokens: 2 ** 60 } } : {}),
      });
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(answer)) });
      res.end(answer);
    });
  });
  return { server, state };
}

describe.skipIf(!pg.available)(`calls the client abandons or the provider does not meter${pg.reason}`, () => {
  const provider = startProvider();
  let h: InferencePlatform;

  beforeAll(async () => {
    provider.server.listen(0, "127.0.0.1");
    await once(provider.server, "listening");
    const url = `http://127.0.0.1:${(provider.server.address() as AddressInfo).port}`;
    h = await startInferencePlatform({ cloudBKey: "cloud-b-key", cloudBBaseUrl: url });
  });
  afterAll(async () => {
    await h?.close();
    provider.server.closeAllConnections();
    await new Promise((done) => provider.server.close(done));
  });

  const post = (body: unknown, init: RequestInit = {}) =>
    fetch(`${h.url}/v1/llm/cloud-b/family-1/anthropic/v1/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.projectToken}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
      ...init,
    });
  const costs = async () =>
    (await h.call<Costs>("GET", `/v1/orgs/${h.orgId}/usage-costs`, { token: h.adminToken })).body.total;
  const recorded = async (requests: number) =>
    eventually(async () => {
      await h.drainUsage();
      return (await costs()).requests >= requests;
    }, "the call's usage");

  it("a client that leaves before the answer's headers pays for the input the provider was sent", async () => {
    const limit = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: 1000, period: "daily" },
    });
    expect(limit.status).toBe(201);
    try {
      await h.drainUsage();
      const before = await costs();
      const prompt = "y".repeat(40_000);
      const controller = new AbortController();
      const pending = post(
        { model: "claude-hang", max_tokens: 1000, messages: [{ role: "user", content: prompt }] },
        { signal: controller.signal },
      ).catch((err: Error) => err);
      await provider.state.arrived;
      controller.abort();
      expect(await pending).toBeInstanceOf(Error);
      await provider.state.closed;
      await recorded(before.requests + 1);
      const after = await costs();
      expect(after.inputTokens - before.inputTokens).toBeGreaterThanOrEqual(10_000);
      expect(after.costMicroUsd).toBeGreaterThan(before.costMicroUsd);
      await eventually(
        async () =>
          (await h.call<Status>("GET", `/v1/orgs/${h.orgId}/spending-limits/status`, { token: h.adminToken })).body
            .items[0]?.reservedUsd === 0,
        "the reservation settled",
      );
    } finally {
      await h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${limit.body.id}`, { token: h.adminToken });
    }
  });

  it("an answer that reports no usage is metered from the bytes sent and received, not as free", async () => {
    await h.drainUsage();
    const before = await costs();
    const prompt = "z".repeat(8_000);
    const res = await post({ model: "claude-silent", max_tokens: 2000, messages: [{ role: "user", content: prompt }] });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    await recorded(before.requests + 1);
    const after = await costs();
    expect(after.inputTokens - before.inputTokens).toBeGreaterThanOrEqual(2_000);
    expect(after.outputTokens - before.outputTokens).toBeGreaterThanOrEqual(1_000);
  });

  it("an answer reporting counts no call can reach is recorded at a bound, and its reservation settles", async () => {
    const limit = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: 1_000_000_000, period: "daily" },
    });
    expect(limit.status).toBe(201);
    try {
      await h.drainUsage();
      const before = await costs();
      const res = await post({ model: "claude-boast", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await recorded(before.requests + 1);
      const after = await costs();
      expect(after.inputTokens - before.inputTokens).toBe(1_000_000_000);
      expect(after.outputTokens - before.outputTokens).toBe(1_000_000_000);
      await eventually(
        async () =>
          (await h.call<Status>("GET", `/v1/orgs/${h.orgId}/spending-limits/status`, { token: h.adminToken })).body
            .items[0]?.reservedUsd === 0,
        "the reservation settled",
      );
    } finally {
      await h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${limit.body.id}`, { token: h.adminToken });
    }
  });
});
