import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const targets = await databaseTargets();

/** Each plain write of organizations, teams, projects and invitations records its domain event. */
describe.each(targets)("domain events of tenancy's writes on $name", (target) => {
  describe.skipIf(!target.available)(`domain events of tenancy's writes${target.reason}`, () => {
    let cleanup: () => Promise<void>;
    let h: Awaited<ReturnType<typeof startActivated>>;
    const events: AuditRecorded[] = [];

    /** The domain records of one action on one target, once the outbox has been relayed. */
    async function recorded(action: string, targetId: string): Promise<AuditRecorded[]> {
      await h.settle();
      return events.filter((e) => e.action === action && e.targetId === targetId);
    }

    async function one(action: string, targetId: string): Promise<AuditRecorded> {
      const found = await recorded(action, targetId);
      expect(found, `${action} on ${targetId}`).toHaveLength(1);
      return found[0]!;
    }

    beforeAll(async () => {
      const opened = await target.open();
      cleanup = opened.cleanup;
      h = await startActivated(opened.database);
      await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
        events.push(e.data);
      });
    });
    afterAll(async () => {
      await stopTenancies();
      await cleanup?.();
    });

    it("records an organization's creation, update and deletion under that organization", async () => {
      const user = await h.oidcUser("olga@x.test");
      const created = await h.call("POST", "/v1/orgs", { as: user, body: { name: "Olga's" } });
      expect(created.status).toBe(201);
      const org = await json<{ id: string }>(created);
      expect(await one("organization.created", org.id)).toMatchObject({
        source: "domain",
        outcome: "success",
        orgId: org.id,
        principal: { type: "user", id: user.id },
        targetType: "organization",
        details: { name: "Olga's" },
      });

      const patch = await h.call("PATCH", `/v1/orgs/${org.id}`, {
        as: user,
        body: { name: "Olga & co" },
        headers: { "x-request-id": "req-org-update" },
      });
      expect(patch.status).toBe(200);
      expect(await one("organization.updated", org.id)).toMatchObject({
        orgId: org.id,
        targetType: "organization",
        details: { fields: ["name"] },
        requestId: "req-org-update",
      });

      expect((await h.call("DELETE", `/v1/orgs/${org.id}`, { as: user })).status).toBe(204);
      expect(await one("organization.deleted", org.id)).toMatchObject({
        orgId: org.id,
        targetType: "organization",
        details: { name: "Olga & co" },
      });
    });

    it("records a team's lifecycle, its members and its project grants", async () => {
      const team = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/teams`, { as: h.owner, body: { name: "ops", description: "x" } }),
      );
      expect(await one("team.created", team.id)).toMatchObject({
        orgId: h.orgId,
        principal: { type: "api_token", id: h.owner.id },
        targetType: "team",
        details: { name: "ops" },
      });
      expect(
        (await h.call("PATCH", `/v1/teams/${team.id}`, { as: h.owner, body: { description: "on call" } })).status,
      ).toBe(200);
      expect(await one("team.updated", team.id)).toMatchObject({
        orgId: h.orgId,
        targetType: "team",
        details: { fields: ["description"] },
      });

      const member = h.owner.userId!;
      expect((await h.call("PUT", `/v1/teams/${team.id}/members/${member}`, { as: h.owner })).status).toBe(200);
      // Adding someone who is already in the team changes nothing and records nothing more.
      expect((await h.call("PUT", `/v1/teams/${team.id}/members/${member}`, { as: h.owner })).status).toBe(200);
      expect(await one("team.member_added", team.id)).toMatchObject({
        orgId: h.orgId,
        targetType: "team",
        details: { userId: member },
      });
      expect((await h.call("DELETE", `/v1/teams/${team.id}/members/${member}`, { as: h.owner })).status).toBe(204);
      expect((await h.call("DELETE", `/v1/teams/${team.id}/members/${member}`, { as: h.owner })).status).toBe(404);
      expect(await one("team.member_removed", team.id)).toMatchObject({
        orgId: h.orgId,
        targetType: "team",
        details: { userId: member },
      });

      const project = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "granted" } }),
      );
      const grantPath = `/v1/teams/${team.id}/projects/${project.id}`;
      expect((await h.call("PUT", grantPath, { as: h.owner, body: { role: "developer" } })).status).toBe(200);
      // Granting the role the team already has changes nothing and records nothing more.
      expect((await h.call("PUT", grantPath, { as: h.owner, body: { role: "developer" } })).status).toBe(200);
      expect(await one("team.project_granted", team.id)).toMatchObject({
        orgId: h.orgId,
        projectId: project.id,
        targetType: "team",
        details: { role: "developer" },
      });
      // Another role is a change, recorded with the role it replaced.
      expect((await h.call("PUT", grantPath, { as: h.owner, body: { role: "viewer" } })).status).toBe(200);
      expect((await recorded("team.project_granted", team.id)).map((e) => e.details)).toEqual([
        { role: "developer" },
        { role: "viewer", previousRole: "developer" },
      ]);
      expect((await h.call("PUT", grantPath, { as: h.owner, body: { role: "developer" } })).status).toBe(200);
      expect((await h.call("DELETE", grantPath, { as: h.owner })).status).toBe(204);
      expect((await h.call("DELETE", grantPath, { as: h.owner })).status).toBe(404);
      expect(await one("team.project_revoked", team.id)).toMatchObject({
        orgId: h.orgId,
        projectId: project.id,
        targetType: "team",
        details: { role: "developer" },
      });

      expect((await h.call("DELETE", `/v1/teams/${team.id}`, { as: h.owner })).status).toBe(204);
      expect(await one("team.deleted", team.id)).toMatchObject({
        orgId: h.orgId,
        targetType: "team",
        details: { name: "ops" },
      });
    });

    it("records a project's creation, update and deletion in its organization and project", async () => {
      const created = await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "p1" } });
      expect(created.status).toBe(201);
      const project = await json<{ id: string }>(created);
      expect(await one("project.created", project.id)).toMatchObject({
        orgId: h.orgId,
        projectId: project.id,
        principal: { type: "api_token", id: h.owner.id },
        targetType: "project",
        details: { name: "p1" },
      });
      const patch = await h.call("PATCH", `/v1/projects/${project.id}`, {
        as: h.owner,
        body: { name: "p2", labels: { env: "prod" } },
      });
      expect(patch.status).toBe(200);
      expect(await one("project.updated", project.id)).toMatchObject({
        orgId: h.orgId,
        projectId: project.id,
        targetType: "project",
        details: { fields: ["name", "labels"] },
      });
      expect((await h.call("DELETE", `/v1/projects/${project.id}`, { as: h.owner })).status).toBe(204);
      expect(await one("project.deleted", project.id)).toMatchObject({
        orgId: h.orgId,
        projectId: project.id,
        targetType: "project",
        details: { name: "p2" },
      });
    });

    it("records invitations created, revoked and declined, without the invitee's email", async () => {
      const invite = async (email: string) => {
        const res = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, {
          as: h.owner,
          body: { email, role: "member" },
        });
        expect(res.status).toBe(201);
        return json<{ id: string }>(res);
      };
      const revoked = await invite("rita@x.test");
      expect(await one("invitation.created", revoked.id)).toMatchObject({
        orgId: h.orgId,
        principal: { type: "api_token", id: h.owner.id },
        targetType: "invitation",
        details: { role: "member" },
      });
      const revokePath = `/v1/orgs/${h.orgId}/invitations/${revoked.id}`;
      expect((await h.call("DELETE", revokePath, { as: h.owner })).status).toBe(204);
      expect((await h.call("DELETE", revokePath, { as: h.owner })).status).toBe(409);
      expect(await one("invitation.revoked", revoked.id)).toMatchObject({
        orgId: h.orgId,
        targetType: "invitation",
        details: { role: "member" },
      });

      const dan = await h.oidcUser("dan@x.test");
      const declined = await invite("dan@x.test");
      expect((await h.call("POST", `/v1/invitations/${declined.id}/decline`, { as: dan })).status).toBe(204);
      expect(await one("invitation.declined", declined.id)).toMatchObject({
        orgId: h.orgId,
        principal: { type: "user", id: dan.id },
        targetType: "invitation",
        details: { userId: dan.id, role: "member" },
      });

      // The invitee is named by the invitation's id (and a user id once they answer), never by email.
      const invitationDetails = events.filter((e) => e.action.startsWith("invitation.")).map((e) => e.details);
      expect(JSON.stringify(invitationDetails)).not.toMatch(/rita@|dan@/);
    });
  });
});
