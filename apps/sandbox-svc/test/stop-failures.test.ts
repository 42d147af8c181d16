// A driver that cannot stop a sandbox (a process that will not die, a workspace that cannot be
// removed) leaves the sandbox failed with the reason, never stuck stopping or deleting: stop and
// delete can both be tried again.
import { databaseTargets } from "@agentplane/db/testing";
import { ProblemError } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import { createSandbox } from "../src/services/create.ts";
import { getSandboxRow } from "../src/services/sandboxes.ts";
import { deleteSandbox, stopSandbox } from "../src/services/stop-delete.ts";
import { requireBwrap } from "./helpers.ts";
import { verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const targets = await databaseTargets();

describe.each(targets)("a driver that fails to stop, on $name", (target) => {
  describe.skipIf(!target.available || !bwrap.available)(`${target.reason}${bwrap.reason}`, () => {
    it("marks the sandbox failed with the reason, and a second stop or delete goes through", async () => {
      const { database, cleanup } = await target.open();
      const fx = await verbFixture(database);
      const realStop = fx.driver.stop.bind(fx.driver);
      const realRemove = fx.driver.removeWorkspace.bind(fx.driver);
      let failStops = 0;
      let failRemoves = 0;
      fx.driver.stop = async (id: string) => {
        if (failStops-- > 0) throw new Error("process 4242 did not exit");
        return realStop(id);
      };
      fx.driver.removeWorkspace = async (id: string) => {
        if (failRemoves-- > 0) throw new Error("EBUSY: workspace is busy");
        return realRemove(id);
      };
      try {
        const box = await createSandbox(fx.deps, fx.actor, {
          projectId: "prj_t",
          name: "stuck",
          labels: {},
          start: true,
        });
        expect(box.state).toBe("running");
        const ref = { projectId: "prj_t", sandboxId: box.id };

        failStops = 1;
        const refused = await stopSandbox(fx.deps, fx.actor, ref).catch((err: unknown) => err);
        expect(refused).toBeInstanceOf(ProblemError);
        expect(refused).toMatchObject({
          status: 500,
          detail: expect.stringMatching(/could not be stopped: process 4242 did not exit\. It is marked failed/),
        });
        expect(await getSandboxRow(fx.deps, "prj_t", box.id)).toMatchObject({
          state: "failed",
          last_error: "stop failed: process 4242 did not exit",
        });
        expect((await stopSandbox(fx.deps, fx.actor, ref)).state).toBe("stopped");
        expect((await fx.driver.status(box.id)).phase).toBe("stopped");

        failRemoves = 1;
        await expect(deleteSandbox(fx.deps, fx.actor, ref)).rejects.toMatchObject({
          status: 500,
          detail: expect.stringContaining("could not be deleted: EBUSY: workspace is busy"),
        });
        expect(await getSandboxRow(fx.deps, "prj_t", box.id)).toMatchObject({
          state: "failed",
          last_error: "delete failed: EBUSY: workspace is busy",
        });
        await deleteSandbox(fx.deps, fx.actor, ref);
        await expect(getSandboxRow(fx.deps, "prj_t", box.id)).rejects.toMatchObject({ status: 404 });
      } finally {
        await fx.close();
        await cleanup();
      }
    });
  });
});
