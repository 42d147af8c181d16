// A rollback puts its revision's tar archive back into the sandbox right after the start (the
// local driver). The archive is taken whole however late its output arrives, and a restore that
// fails leaves the workspace as it was and fails the start, saying why.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSandbox } from "../src/services/create.ts";
import { execInSandbox } from "../src/services/exec.ts";
import { rollbackSandbox, updateSandbox } from "../src/services/revisions.ts";
import { getSandboxRow, startSandbox } from "../src/services/sandboxes.ts";
import { deleteSandbox, stopSandbox } from "../src/services/stop-delete.ts";
import { requireBwrap } from "./helpers.ts";
import { type VerbFixture, verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const targets = await databaseTargets();
const P = "prj_restore";

/** What revision 1's workspace holds: hidden files, nested and read-only directories. */
const REVISION_ONE = [
  "echo one > /workspace/file",
  "echo hidden > /workspace/.hidden",
  "mkdir -p /workspace/dir/sub && echo deep > /workspace/dir/sub/f",
  "mkdir /workspace/ro && echo locked > /workspace/ro/f && chmod 555 /workspace/ro",
].join(" && ");

const LIST = "cd /workspace && ls -A && cat file .hidden dir/sub/f ro/f";

describe.each(targets)("a rollback's workspace restore on $name", (target) => {
  describe.skipIf(!target.available || !bwrap.available)(`${target.reason}${bwrap.reason}`, () => {
    let fx: VerbFixture;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      const opened = await target.open();
      cleanup = opened.cleanup;
      fx = await verbFixture(opened.database);
    });
    afterAll(async () => {
      await fx.close();
      await cleanup();
    });
    const exec = async (id: string, command: string) =>
      execInSandbox(fx.deps, fx.actor, { command, timeoutMs: 5000, sandbox: await getSandboxRow(fx.deps, P, id) });

    /** A running sandbox whose revision 1 kept REVISION_ONE's workspace, now at revision 2 with `two` in `file`. */
    async function atRevisionTwo(name: string) {
      const row = await createSandbox(fx.deps, fx.actor, { projectId: P, name, labels: {}, start: true });
      expect((await exec(row.id, REVISION_ONE)).exitCode).toBe(0);
      await updateSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, env: { MODE: "two" } });
      expect(
        (
          await exec(
            row.id,
            "chmod 755 /workspace/ro && rm -r /workspace/* /workspace/.hidden && echo two > /workspace/file",
          )
        ).exitCode,
      ).toBe(0);
      return row;
    }

    it("keeps the whole archive when the exec's exit is told before its output has been read", async () => {
      // Under load the local driver's exit (from its spawner, over IPC) can be read before the exec's
      // last output (a socket): an archive taken at the exit was empty, and its restore emptied the
      // workspace. Here every archive's output reaches the service only after its exit.
      const realExec = fx.driver.exec.bind(fx.driver);
      fx.driver.exec = async (id, options) => {
        const proc = await realExec(id, options);
        if (options.argv[0] !== "tar") return proc;
        const late = new PassThrough();
        const chunks: Buffer[] = [];
        proc.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
        proc.stdout.once("end", () => {
          void proc.exited.then(() => setTimeout(() => late.end(Buffer.concat(chunks)), 100));
        });
        return { ...proc, stdout: late };
      };
      try {
        const row = await atRevisionTwo("Late output");
        const rolled = await rollbackSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, revision: 1 });
        expect(rolled).toMatchObject({ state: "running", restore_revision: null });
        expect((await exec(row.id, LIST)).stdout).toBe(".hidden\ndir\nfile\nro\none\nhidden\ndeep\nlocked\n");
        await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      } finally {
        fx.driver.exec = realExec;
      }
    });

    it("settles at the next start what a restore killed in the middle left beside the workspace", async () => {
      const row = await createSandbox(fx.deps, fx.actor, {
        projectId: P,
        name: "Killed restore",
        labels: {},
        start: true,
      });
      const W = "cd /workspace &&";
      /** The workspace before the restore: a file, a hidden one, a read-only directory. */
      const OLD = (dir: string) =>
        `mkdir -p ${dir}/ro && echo old > ${dir}/file && echo hidden > ${dir}/.hidden && echo locked > ${dir}/ro/f && chmod 555 ${dir}/ro`;
      const OLD_LISTED = ".hidden\nfile\nro\nold\nhidden\nlocked\n";
      const cases: { killed: string; layout: string; expected: string }[] = [
        {
          killed: "while unpacking the archive",
          layout: `${OLD(".")} && mkdir -p .agentplane-restore-a1/sub && echo part > .agentplane-restore-a1/sub/f`,
          expected: OLD_LISTED,
        },
        {
          killed: "while moving the old content aside",
          layout: `${OLD(".")} && mkdir .agentplane-previous-b2 && mv .hidden .agentplane-previous-b2/ && mkdir .agentplane-restore-b2 && echo new > .agentplane-restore-b2/file && echo new > .agentplane-restore-b2/added`,
          expected: OLD_LISTED,
        },
        {
          killed: "while moving the archive's content up",
          layout: `${OLD(".agentplane-previous-c3")} && : > .agentplane-previous-c3/.agentplane-previous-c3 && echo new > file && mkdir .agentplane-restore-c3 && echo new > .agentplane-restore-c3/added`,
          expected: OLD_LISTED,
        },
        {
          killed: "while removing the old content, the swap done",
          layout: `${OLD(".agentplane-previous-d4")} && : > .agentplane-previous-d4/.agentplane-previous-d4 && echo new > file && echo new > added`,
          expected: "added\nfile\nnew\nnew\n",
        },
      ];
      for (const { killed, layout, expected } of cases) {
        expect((await exec(row.id, `${W} ${layout}`)).exitCode, killed).toBe(0);
        await stopSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
        await startSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
        const listed = await exec(row.id, `${W} ls -A && cat file .hidden ro/f 2>/dev/null; cat added 2>/dev/null`);
        expect(listed.stdout, killed).toBe(expected);
        if (expected === OLD_LISTED) expect((await exec(row.id, `${W} [ ! -w ro ]`)).exitCode, killed).toBe(0);
        await exec(row.id, `${W} chmod -R u+w . && rm -rf ./* ./.[!.]*`);
      }
      await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
    });

    it("leaves the workspace as it was and fails the start when the archive does not unpack", async () => {
      const row = await atRevisionTwo("Broken archive");
      // And an earlier restore killed while the archive's content was moved up: its settling is
      // the restore's first step, so it is settled even though this restore fails.
      const killed =
        "cd /workspace && mkdir .agentplane-previous-e5 && mv file .agentplane-previous-e5/ && : > .agentplane-previous-e5/.agentplane-previous-e5 && echo partial > added && mkdir .agentplane-restore-e5";
      expect((await exec(row.id, killed)).exitCode).toBe(0);
      await stopSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      // Revision 1's archive cut short, as one taken before its output had all arrived was.
      const archive = await fx.deps.db
        .selectFrom("workspace_archives")
        .select("data")
        .where("sandbox_id", "=", row.id)
        .where("revision", "=", 1)
        .executeTakeFirstOrThrow();
      expect(archive.data.length).toBeGreaterThan(40);
      await fx.deps.db
        .updateTable("workspace_archives")
        .set({ data: archive.data.subarray(0, archive.data.length - 30) } as never)
        .where("sandbox_id", "=", row.id)
        .where("revision", "=", 1)
        .execute();
      await rollbackSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, revision: 1 });
      fx.events.length = 0;
      await expect(startSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id })).rejects.toMatchObject({
        detail: expect.stringContaining("the workspace of revision 1 was not restored"),
      });
      const failed = await getSandboxRow(fx.deps, P, row.id);
      expect(failed).toMatchObject({ state: "failed", restore_revision: null });
      expect(failed.last_error).toMatch(/the workspace of revision 1 was not restored.*left as it was/);
      await vi.waitFor(() => expect(fx.events.map((e) => e.action)).toContain("sandbox.start_failed"), {
        timeout: 5000,
      });
      expect(await fx.driver.status(row.id)).toEqual({ phase: "stopped" });
      const workspace = fx.driver.workspaceDir(row.id);
      expect(readdirSync(workspace)).toEqual(["file"]);
      expect(readFileSync(join(workspace, "file"), "utf8")).toBe("two\n");

      // Started again, it has the workspace it had, and nothing of the failed restore.
      await startSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      expect((await exec(row.id, "cd /workspace && ls -A && cat file")).stdout).toBe("file\ntwo\n");
      await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
    });
  });
});
