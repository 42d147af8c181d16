// An organization cannot pull another one's audit records into its own trail by naming the other
// organization's ids in its own requests: a refused request proves nothing about the ids of its
// path, so the gateway learns an id's organization only from an answer that acted on it.
import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

describe("ids of another organization named in a request", () => {
  let h: Harness;
  const audits: AuditRecorded[] = [];
  beforeAll(async () => {
    h = await startHarness();
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(() => h.close());

  const recordOf = async (requestId: string | null) => {
    await expect.poll(() => audits.some((a) => a.requestId === requestId)).toBe(true);
    return audits.find((a) => a.requestId === requestId)!;
  };

  it("do not move that organization's later records into the trail of the one that named them", async () => {
    const me = await call(h, "GET", "/v1/auth/me");
    const orgA = (me.body.organizations as { id: string }[])[0]!.id;
    const project = await call(h, "POST", `/v1/orgs/${orgA}/projects`, { body: { name: "victim" } });
    expect(project.status).toBe(201);
    const projectA = project.body.id as string;
    const invitation = await call(h, "POST", `/v1/orgs/${orgA}/invitations`, {
      body: { email: "someone@a.test", role: "member" },
    });
    expect(invitation.status).toBe(201);
    const invitationA = invitation.body.id as string;

    // Organization B, and a token that acts in it alone.
    const orgB = (await call(h, "POST", "/v1/orgs", { body: { name: "other" } })).body.id as string;
    const tokenB = (await call(h, "POST", `/v1/orgs/${orgB}/api-tokens`, { body: { name: "b" } })).body.token as string;
    const teamB = await call(h, "POST", `/v1/orgs/${orgB}/teams`, { token: tokenB, body: { name: "t" } });
    expect(teamB.status).toBe(201);

    // B names A's project and invitation in requests of its own: refused, as they are not B's.
    const grant = await call(h, "PUT", `/v1/teams/${teamB.body.id}/projects/${projectA}`, {
      token: tokenB,
      body: { role: "viewer" },
    });
    expect(grant.status).toBe(404);
    const revoke = await call(h, "DELETE", `/v1/orgs/${orgB}/invitations/${invitationA}`, { token: tokenB });
    expect(revoke.status).toBe(404);
    expect((await recordOf(revoke.headers.get("x-request-id"))).orgId).toBe(orgB);

    // A's own requests that no service named an organization for: a bad body on A's project, and
    // the holder of A's invitation link opening it with a wrong token.
    const badBody = await call(h, "PATCH", `/v1/projects/${projectA}`, { body: { name: 5 } });
    expect(badBody.status).toBe(400);
    const preview = await call(h, "POST", `/v1/invitations/${invitationA}/preview`, {
      token: null,
      body: { token: "x".repeat(43) },
    });
    expect(preview.status).toBe(404);

    const badBodyRecord = await recordOf(badBody.headers.get("x-request-id"));
    const previewRecord = await recordOf(preview.headers.get("x-request-id"));
    expect(badBodyRecord.path).toBe(`/v1/projects/${projectA}`);
    expect(badBodyRecord.orgId).toBe(orgA);
    expect(previewRecord.path).toBe(`/v1/invitations/${invitationA}/preview`);
    expect(previewRecord.orgId).toBe(orgA);
  });
});
