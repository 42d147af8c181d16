import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it, vi } from "vitest";
import { RECORD_RELAY_DELAY_MS } from "../src/services/context.ts";
import { createSandbox } from "../src/services/create.ts";
import { execInSandbox } from "../src/services/exec.ts";
import { requireBwrap } from "./helpers.ts";
import { verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const targets = await databaseTargets();

describe.each(targets)("the records a start or a command ends with, on $name", (target) => {
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
        await new Promise((r) => setTimeout(r, RECORD_RELAY_DELAY_MS * 0.6));
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

    it("has a command's record delivered with the answer, and the relay's round only shortly after", async () => {
      const { database, cleanup } = await target.open();
      const fx = await verbFixture(database, { outbox: { pollIntervalMs: 60_000, maxIdlePollMs: 60_000 } });
      try {
        await new Promise((r) => setTimeout(r, 100));
        await fx.deps.outbox.flush();
        const row = await createSandbox(fx.deps, fx.actor, { projectId: "prj_t", name: "ex", labels: {}, start: true });
        const action = (e: unknown) => (e as { action?: string }).action;
        // The start's hand-over is over: the relay is asked again only for the command.
        await vi.waitFor(() => expect(fx.events.map(action)).toContain("sandbox.started"), { timeout: 3000 });
        await new Promise((r) => setTimeout(r, RECORD_RELAY_DELAY_MS));
        const relaySoon = vi.spyOn(fx.deps.outbox, "relaySoon");
        const result = await execInSandbox(fx.deps, fx.actor, { command: ["true"], timeoutMs: 5000, sandbox: row });
        expect(result.exitCode).toBe(0);
        // Written (and, the bus being up, delivered) before the answer; its relay round comes later.
        await vi.waitFor(() => expect(fx.events.map(action)).toContain("sandbox.exec"), { timeout: 1000, interval: 2 });
        await new Promise((r) => setTimeout(r, RECORD_RELAY_DELAY_MS * 0.6));
        expect(relaySoon).not.toHaveBeenCalled();
        await vi.waitFor(() => expect(relaySoon).toHaveBeenCalled(), { timeout: 3000, interval: 5 });
        expect(await fx.deps.outbox.pending()).toBe(0);
      } finally {
        await fx.close();
        await cleanup();
      }
    });
  });
});
