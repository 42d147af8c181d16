import { INTERNAL_IDENTITY_HEADER } from "@agentplane/contracts";
import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./harness.ts";
import { startWithUpstream } from "./with-upstream.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`a client gone before the call is forwarded${pg.reason}`, () => {
  let env: Awaited<ReturnType<typeof startWithUpstream>>;

  beforeAll(async () => {
    env = await startWithUpstream();
  });
  afterAll(async () => {
    await env?.close();
  });

  it("is not forwarded, and its reservation is released", async () => {
    const { h, up } = env;
    const limit = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: 1000, period: "daily" },
    });
    expect(limit.status).toBe(201);
    try {
      // The caller's connection closed while the proxy authorized and reserved: its signal has fired
      // before the proxy listens to it. A sandbox of the project calls, as an agent would.
      const principal = { type: "sandbox" as const, id: "sbx_gone", orgId: h.orgId, projectId: h.projectId };
      const identity = await signIdentity(h.platform.keys, principal, { audience: "inference" });
      const seen = up.seen.length;
      const request = new Request(`http://inference.test/v1/llm/cloud-b/family-1/anthropic/v1/messages`, {
        method: "POST",
        headers: { [INTERNAL_IDENTITY_HEADER]: identity, "content-type": "application/json" },
        body: JSON.stringify({
          model: "claude-haiku-4-5",
          max_tokens: 16,
          messages: [{ role: "user", content: "hi" }],
        }),
        signal: AbortSignal.abort(),
      });
      const inference = h.platform.services.inference;
      if (!inference) throw new Error("no inference service");
      const res = await inference.fetch(request);
      await res.arrayBuffer().catch(() => undefined);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(up.seen.length).toBe(seen);
      await eventually(
        async () =>
          (
            await h.call<{ items: { reservedUsd: number }[] }>("GET", `/v1/orgs/${h.orgId}/spending-limits/status`, {
              token: h.adminToken,
            })
          ).body.items[0]?.reservedUsd === 0,
        "the reservation released",
      );
    } finally {
      await h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${limit.body.id}`, { token: h.adminToken });
    }
  });
});
