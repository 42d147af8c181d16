import {
  AUDIT_RECORDED,
  type AuditRecorded,
  PROJECT_LABELS_TOPIC,
  type ProjectLabelsChanged,
} from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const targets = await databaseTargets();

interface Resource {
  id: string;
  name: string;
  description?: string;
  labels?: Record<string, string>;
  updatedAt: string;
}

/**
 * A PATCH of an organization, team or project that changes nothing (an empty body, or the values
 * the resource has) answers the resource as it is: updatedAt stays, and no event is recorded.
 */
describe.each(targets)("patches that change nothing on $name", (target) => {
  describe.skipIf(!target.available)(`patches that change nothing${target.reason}`, () => {
    let cleanup: () => Promise<void>;
    let h: Awaited<ReturnType<typeof startActivated>>;
    const events: AuditRecorded[] = [];
    const labelChanges: ProjectLabelsChanged[] = [];

    async function updates(action: string, targetId: string): Promise<AuditRecorded[]> {
      await h.settle();
      return events.filter((e) => e.action === action && e.targetId === targetId);
    }

    /** PATCHes `path` with `body`, expecting 200, and answers the resource. */
    async function patch(path: string, body: Record<string, unknown>): Promise<Resource> {
      const res = await h.call("PATCH", path, { as: h.owner, body });
      expect(res.status, `PATCH ${path} ${JSON.stringify(body)}`).toBe(200);
      return json<Resource>(res);
    }

    /** Each body changes nothing: the answer is the resource as GET shows it, and nothing is recorded. */
    async function expectNoOps(path: string, action: string, bodies: Record<string, unknown>[]) {
      const before = await json<Resource>(await h.call("GET", path, { as: h.owner }));
      const recordedBefore = (await updates(action, before.id)).length;
      // Past the clock's resolution, so a write would show in updatedAt.
      await new Promise((r) => setTimeout(r, 5));
      for (const body of bodies) {
        const answered = await patch(path, body);
        expect(answered).toMatchObject({ name: before.name, updatedAt: before.updatedAt });
      }
      const after = await json<Resource>(await h.call("GET", path, { as: h.owner }));
      expect(after.updatedAt).toBe(before.updatedAt);
      expect(await updates(action, before.id)).toHaveLength(recordedBefore);
    }

    beforeAll(async () => {
      const opened = await target.open();
      cleanup = opened.cleanup;
      h = await startActivated(opened.database);
      await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
        events.push(e.data);
      });
      await h.bus.subscribe<ProjectLabelsChanged>(PROJECT_LABELS_TOPIC, async (e) => {
        labelChanges.push(e.data);
      });
    });
    afterAll(async () => {
      await stopTenancies();
      await cleanup?.();
    });

    it("leaves an organization unchanged by an empty patch or its own name", async () => {
      const path = `/v1/orgs/${h.orgId}`;
      const { name } = await json<Resource>(await h.call("GET", path, { as: h.owner }));
      await expectNoOps(path, "organization.updated", [{}, { name }]);

      const renamed = await patch(path, { name: `${name} renamed` });
      expect(renamed.name).toBe(`${name} renamed`);
      expect(await updates("organization.updated", h.orgId)).toHaveLength(1);
    });

    it("leaves a team unchanged by an empty patch or its own values, and names only what changed", async () => {
      const created = await h.call("POST", `/v1/orgs/${h.orgId}/teams`, {
        as: h.owner,
        body: { name: "ops", description: "on call" },
      });
      const team = await json<Resource>(created);
      const path = `/v1/teams/${team.id}`;
      await expectNoOps(path, "team.updated", [{}, { name: "ops" }, { name: "ops", description: "on call" }]);

      const changed = await patch(path, { name: "ops", description: "paged" });
      expect(changed).toMatchObject({ name: "ops", description: "paged" });
      expect(changed.updatedAt > team.updatedAt).toBe(true);
      const recorded = await updates("team.updated", team.id);
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({ details: { fields: ["description"] } });
    });

    it("leaves a project unchanged by an empty patch or its own values, labels in any order", async () => {
      const created = await h.call("POST", `/v1/orgs/${h.orgId}/projects`, {
        as: h.owner,
        body: { name: "p", description: "d", labels: { env: "prod", tier: "gold" } },
      });
      const project = await json<Resource>(created);
      const path = `/v1/projects/${project.id}`;
      await h.settle();
      const labelsBefore = labelChanges.filter((c) => c.projectId === project.id).length;
      await expectNoOps(path, "project.updated", [
        {},
        { name: "p", description: "d" },
        { labels: { tier: "gold", env: "prod" } },
      ]);
      expect(labelChanges.filter((c) => c.projectId === project.id)).toHaveLength(labelsBefore);

      const changed = await patch(path, { name: "p", labels: { env: "dev" } });
      expect(changed).toMatchObject({ name: "p", labels: { env: "dev" } });
      const recorded = await updates("project.updated", project.id);
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({ details: { fields: ["labels"] } });
      expect(labelChanges.filter((c) => c.projectId === project.id)).toHaveLength(labelsBefore + 1);
    });
  });
});
