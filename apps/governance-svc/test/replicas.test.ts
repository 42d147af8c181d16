import { type DecisionResponse, internalDecideRoute } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { BullMqBus } from "@agentplane/events/bullmq";
import { requireRedis, TEST_REDIS_URL, testRedisPrefix } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;
const redis = await requireRedis();

describe.skipIf(!target.available || !redis.available)(
  `two governance replicas on Postgres and Redis${target.reason}${redis.reason}`,
  () => {
    let a: Harness;
    let b: Harness;
    let cleanup: () => Promise<void>;
    const prefix = testRedisPrefix("gov");
    const busA = new BullMqBus({ url: TEST_REDIS_URL, prefix });
    const busB = new BullMqBus({ url: TEST_REDIS_URL, prefix });

    beforeAll(async () => {
      const opened = await target.open();
      cleanup = opened.cleanup;
      a = await startHarness(opened.database, { bus: busA });
      b = await startHarness(opened.database, { bus: busB, tenancy: a.tenancy });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await busB.close();
      await busA.close();
      await cleanup?.();
    });

    it("a binding made on one replica reaches the other's cached decisions within 2 s, and its removal too", async () => {
      const projectId = await a.project("replicated");
      const ask = async (h: Harness) =>
        json<DecisionResponse>(
          await h.internal(internalDecideRoute.path, {
            principal: { type: "user", id: "usr_x" },
            action: "sandbox:exec",
            resource: { type: "Sandbox", id: "sbx_r", orgId: a.orgId, projectId, kind: "sandbox" },
            context: { argv: ["curl"] },
          }),
        );
      // Replica B caches the organization with nothing bound.
      expect((await ask(b)).decision).toBe("allow");

      const policy = await json<{ id: string }>(
        await a.call("POST", `/v1/projects/${projectId}/policies`, {
          as: a.owner,
          body: {
            name: "no-curl",
            cedar: `@id("no-curl") forbid(principal, action, resource) when { context has program && context.program == "curl" };`,
          },
        }),
      );
      const created = await a.call("POST", `/v1/projects/${projectId}/policy-bindings`, {
        as: a.owner,
        body: { policyId: policy.id },
      });
      expect(created.status).toBe(201);
      const binding = await json<{ id: string }>(created);
      const waitFor = async (decision: "allow" | "deny") => {
        const started = Date.now();
        await vi.waitFor(async () => expect((await ask(b)).decision).toBe(decision), { timeout: 2000, interval: 25 });
        return Date.now() - started;
      };
      expect(await waitFor("deny")).toBeLessThan(2000);
      // The same holds for the removal: B allows again without a restart.
      expect(
        (await a.call("DELETE", `/v1/projects/${projectId}/policy-bindings/${binding.id}`, { as: a.owner })).status,
      ).toBe(204);
      expect(await waitFor("allow")).toBeLessThan(2000);
    });
  },
);
