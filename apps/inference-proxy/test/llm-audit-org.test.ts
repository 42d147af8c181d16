import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

const pg = await requirePostgres();

interface Trail {
  items: { action: string; orgId?: string | null; requestId?: string | null }[];
}

// A model call's audit record lands in the trail of the organization that pays for it, whoever
// calls: also a caller bound to no organization (the installation owner, a user's session) on the
// short form /v1/llm/..., whose path names no project; and never where a provider's answer says.
describe.skipIf(!pg.available)(`the audit record of a model call${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform({ cloudBKey: CREDS.cloudBKey, cloudBBaseUrl: `${up.url}/anthropic/v1` });
    // The installation owner then has one project, which the short form bills.
    expect((await h.call("DELETE", `/v1/orgs/${h.otherOrgId}`)).status).toBe(204);
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  const call = async (token: string) => {
    const res = await fetch(`${h.url}/v1/llm/cloud-b/family-1/anthropic/v1/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
    });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(res.headers.get("x-agentplane-resource-org")).toBeNull();
    return res.headers.get("x-request-id") as string;
  };
  const recordOf = async (path: string, requestId: string) => {
    await h.drainUsage();
    const trail = (await h.call<Trail>("GET", `${path}?limit=200`)).body;
    return trail.items.find((r) => r.requestId === requestId && r.action.startsWith("postLlm"));
  };

  it("a caller bound to no organization: the record is in the paying organization's trail", async () => {
    const requestId = await call(h.ownerToken);
    await eventually(
      async () => (await recordOf(`/v1/orgs/${h.orgId}/audit-trail`, requestId)) !== undefined,
      "the record",
    );
    expect(await recordOf(`/v1/orgs/${h.orgId}/audit-trail`, requestId)).toMatchObject({ orgId: h.orgId });
  });

  it("a provider's answer naming another organization changes nothing", async () => {
    up.answerHeaders = { "x-agentplane-resource-org": h.otherOrgId, "x-agentplane-oauth-error": "invalid_grant" };
    try {
      const requestId = await call(h.adminToken);
      await eventually(
        async () => (await recordOf(`/v1/orgs/${h.orgId}/audit-trail`, requestId)) !== undefined,
        "the record",
      );
      expect(await recordOf(`/v1/orgs/${h.orgId}/audit-trail`, requestId)).toMatchObject({ orgId: h.orgId });
    } finally {
      up.answerHeaders = {};
    }
  });
});
