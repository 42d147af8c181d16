// A stop (or delete) that arrives while a start is under way wins: the start answers 409 saying
// so, and the sandbox ends as the stop leaves it, never recorded running with no process.
import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it } from "vitest";
import { createSandbox } from "../src/services/create.ts";
import { getSandboxRow, startSandbox } from "../src/services/sandboxes.ts";
import { deleteSandbox, stopSandbox } from "../src/services/stop-delete.ts";
import { requireBwrap } from "./helpers.ts";
import { verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const targets = await databaseTargets();

async function whenStarting(status: () => Promise<{ phase: string }>): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((await status()).phase !== "starting") {
    if (Date.now() > deadline) throw new Error("the start never began");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe.each(targets)("a start overtaken by a stop, on $name", (target) => {
  describe.skipIf(!target.available || !bwrap.available)(`${target.reason}${bwrap.reason}`, () => {
    it("answers 409 to the start, and the sandbox ends stopped with no process", async () => {
      const { database, cleanup } = await target.open();
      const fx = await verbFixture(database);
      try {
        const box = await createSandbox(fx.deps, fx.actor, {
          projectId: "prj_t",
          name: "raced",
          labels: {},
          start: false,
        });
        const ref = { projectId: "prj_t", sandboxId: box.id };
        const started = startSandbox(fx.deps, fx.actor, ref).then(
          (row) => ({ row }),
          (err: unknown) => ({ err }),
        );
        await whenStarting(() => fx.driver.status(box.id));
        const stopped = await stopSandbox(fx.deps, fx.actor, ref);
        expect(stopped.state).toBe("stopped");
        const answer = await started;
        expect(answer).toMatchObject({
          err: { status: 409, detail: expect.stringMatching(/was stopped while it started/) },
        });
        expect((await getSandboxRow(fx.deps, "prj_t", box.id)).state).toBe("stopped");
        expect((await fx.driver.status(box.id)).phase).toBe("stopped");
        // It starts again as usual afterwards.
        expect((await startSandbox(fx.deps, fx.actor, ref)).state).toBe("running");
      } finally {
        await fx.close();
        await cleanup();
      }
    });

    it("answers 409 to a started create a delete overtakes, and leaves nothing", async () => {
      const { database, cleanup } = await target.open();
      const fx = await verbFixture(database);
      try {
        const created = createSandbox(fx.deps, fx.actor, {
          projectId: "prj_t",
          name: "gone",
          labels: {},
          start: true,
        }).then(
          (row) => ({ row }),
          (err: unknown) => ({ err }),
        );
        let id: string | undefined;
        const deadline = Date.now() + 5000;
        while (!id && Date.now() < deadline) {
          const row = await fx.deps.db.selectFrom("sandboxes").select(["id", "state"]).executeTakeFirst();
          if (row?.state === "starting") id = row.id;
          else await new Promise((resolve) => setTimeout(resolve, 1));
        }
        expect(id).toBeDefined();
        await deleteSandbox(fx.deps, fx.actor, { projectId: "prj_t", sandboxId: id as string });
        expect(await created).toMatchObject({ err: { status: 409 } });
        expect(await fx.deps.db.selectFrom("sandboxes").select("id").execute()).toEqual([]);
        expect((await fx.driver.status(id as string)).phase).toBe("stopped");
      } finally {
        await fx.close();
        await cleanup();
      }
    });
  });
});
