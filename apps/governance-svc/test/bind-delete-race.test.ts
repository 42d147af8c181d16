import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

// Binding a policy while it is deleted: the delete's check for bindings and the binding's check
// for the policy each passed before the other's write, and the second write hit the foreign key
// (a 500). Each must end as one of its answers, and the two agree.
describe.skipIf(!target.available)(`binding a policy while it is deleted, on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectId = await h.project("race");
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  it("answers 201 or 404 to the binding and 204 or 409 to the delete, never both writes", async () => {
    const seen = new Set<string>();
    for (let round = 0; round < 40; round++) {
      const created = await h.call("POST", `/v1/projects/${projectId}/policies`, {
        as: h.owner,
        body: { name: `p${round}`, cedar: `permit(principal, action == Action::"sandbox:exec", resource);` },
      });
      expect(created.status).toBe(201);
      const { id } = await json<{ id: string }>(created);
      const [bind, del] = await Promise.all([
        h.call("POST", `/v1/projects/${projectId}/policy-bindings`, { as: h.owner, body: { policyId: id } }),
        h.call("DELETE", `/v1/projects/${projectId}/policies/${id}`, { as: h.owner }),
      ]);
      seen.add(`${bind.status}/${del.status}`);
      expect([201, 404]).toContain(bind.status);
      expect([204, 409]).toContain(del.status);
      // Bound and deleted both, or neither: never.
      expect(bind.status === 201).toBe(del.status === 409);
      if (bind.status === 201) {
        const { id: bindingId } = await json<{ id: string }>(bind);
        const removed = await h.call("DELETE", `/v1/projects/${projectId}/policy-bindings/${bindingId}`, {
          as: h.owner,
        });
        expect(removed.status).toBe(204);
      }
    }
    expect(seen.size).toBeGreaterThan(0);
  }, 120_000);
});
