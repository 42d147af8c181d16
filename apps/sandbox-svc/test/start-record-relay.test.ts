import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it, vi } from "vitest";
import { createSandbox } from "../src/services/create.ts";
import { START_RECORD_RELAY_DELAY_MS } from "../src/services/sandboxes.ts";
import { requireBwrap } from "./helpers.ts";
import { verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const targets = await databaseTargets();

describe.each(targets)("a start's records on $name", (target) => {
  describe.skipIf(!target.available || !bwrap.available)(`${target.reason}${bwrap.reason}`, () => {
    it("are published shortly after the answer, not in the turn the next request arrives", async () => {
      const { database, cleanup } = await target.open();
      // No polling rounds: only the start's own hand-over publishes.
      const fx = await verbFixture(database, { outbox: { pollIntervalMs: 60_000, maxIdlePollMs: 60_000 } });
      try {
        // The round the outbox runs as it starts is over (it would take whatever is written meanwhile).
        await new Promise((r) => setTimeout(r, 100));
        await fx.deps.outbox.flush();
        const row = await createSandbox(fx.deps, fx.actor, {
          projectId: "prj_t",
          name: "rec",
          labels: {},
          start: true,
        });
        expect(row.state).toBe("running");
        const mine = () =>
          fx.events.filter((e) => (e as { targetId?: string }).targetId === row.id).map((e) => e.action);
        // Durable from the commit on, handed to the relay once the delay has passed.
        await new Promise((r) => setTimeout(r, START_RECORD_RELAY_DELAY_MS * 0.6));
        expect(mine()).toEqual([]);
        await vi.waitFor(() => expect(mine()).toEqual(["sandbox.created", "sandbox.started"]), {
          timeout: 3000,
          interval: 10,
        });
      } finally {
        await fx.close();
        await cleanup();
      }
    });
  });
});
