import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSandbox } from "../src/services/create.ts";
import { execInSandbox } from "../src/services/exec.ts";
import { listRevisions, rollbackSandbox, updateSandbox } from "../src/services/revisions.ts";
import { getSandboxRow, listSandboxes, startSandbox } from "../src/services/sandboxes.ts";
import { deleteSandbox, stopSandbox } from "../src/services/stop-delete.ts";
import { createSandboxToken, resolveSandboxToken, revokeSandboxToken } from "../src/services/tokens.ts";
import { requireBwrap } from "./helpers.ts";
import { type VerbFixture, verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const targets = await databaseTargets();
const P = "prj_test";
const base = { labels: {}, start: false };

/** Pids of bwrap processes started with `--hostname <name>`. */
function bwrapWithHostname(name: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return args[0]?.endsWith("bwrap") && args.some((a, i) => a === "--hostname" && args[i + 1] === name);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.each(targets)("sandbox verbs on $name", (target) => {
  describe.skipIf(!target.available || !bwrap.available)(`lifecycle${target.reason}${bwrap.reason}`, () => {
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

    it("moves through the states and refuses transitions that make no sense", async () => {
      const row = await createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "Life", slug: "life" });
      expect(row.state).toBe("pending");
      await expect(exec(row.id, "true")).rejects.toMatchObject({ status: 409 });
      expect((await startSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id })).state).toBe("running");
      expect((await startSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id })).state).toBe("running");
      expect((await exec(row.id, "echo hi")).stdout).toBe("hi\n");
      expect((await stopSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id })).state).toBe("stopped");
      // What to do, in words; the request that does it, apart.
      await expect(exec(row.id, "true")).rejects.toMatchObject({
        status: 409,
        detail: `Sandbox ${row.id} is stopped, not running: start it first`,
        extensions: { start: { method: "POST", path: `/v1/projects/${P}/sandboxes/${row.id}/start` } },
      });
      await fx.deps.db.updateTable("sandboxes").set({ state: "deleting" }).where("id", "=", row.id).execute();
      await expect(startSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id })).rejects.toMatchObject({
        status: 409,
      });
      await fx.deps.db.updateTable("sandboxes").set({ state: "stopped" }).where("id", "=", row.id).execute();
      await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      await expect(getSandboxRow(fx.deps, P, row.id)).rejects.toMatchObject({ status: 404 });
      await vi.waitFor(() =>
        expect(fx.events.map((e) => e.action)).toEqual(
          expect.arrayContaining([
            "sandbox.created",
            "sandbox.started",
            "sandbox.exec",
            "sandbox.stopped",
            "sandbox.deleted",
          ]),
        ),
      );
      const execRecord = fx.events.find((e) => e.action === "sandbox.exec");
      expect(execRecord?.details).toMatchObject({ command: "echo hi", exitCode: 0 });
      expect(JSON.stringify(execRecord)).not.toContain("hi\\n");
    });

    it("rejects a duplicate slug, an unknown image and another project's sandbox", async () => {
      const row = await createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "Dup", slug: "dup" });
      await expect(
        createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "Dup", slug: "dup" }),
      ).rejects.toMatchObject({
        status: 409,
      });
      await expect(
        createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "X", image: "nope" }),
      ).rejects.toMatchObject({
        status: 400,
      });
      await expect(getSandboxRow(fx.deps, "prj_other", row.id)).rejects.toMatchObject({ status: 404 });
      // A start asked with the create starts the driver while the row is written: when the write
      // fails, neither the sandbox's process nor its workspace stays behind.
      const workspaces = dirname(fx.driver.workspaceDir(row.id));
      const listWorkspaces = () => (existsSync(workspaces) ? readdirSync(workspaces).sort() : []);
      const before = listWorkspaces();
      await expect(
        createSandbox(fx.deps, fx.actor, { projectId: P, ...base, start: true, name: "Dup", slug: "dup" }),
      ).rejects.toMatchObject({ status: 409 });
      expect(listWorkspaces()).toEqual(before);
      expect(bwrapWithHostname("dup")).toEqual([]);
    });

    it("lists with state and label filters and a cursor", async () => {
      for (const [i, team] of ["ml", "ml", "web"].entries()) {
        await createSandbox(fx.deps, fx.actor, {
          projectId: "prj_list",
          ...base,
          name: `L${i}`,
          labels: { team, n: String(i) },
        });
      }
      const ml = await listSandboxes(fx.deps, "prj_list", { limit: 50, labelSelector: "team=ml" });
      expect(ml.items.map((r) => r.name)).toEqual(["L1", "L0"]);
      expect((await listSandboxes(fx.deps, "prj_list", { limit: 50, labelSelector: "n" })).items).toHaveLength(3);
      expect((await listSandboxes(fx.deps, "prj_list", { limit: 50, state: "running" })).items).toHaveLength(0);
      const first = await listSandboxes(fx.deps, "prj_list", { limit: 2 });
      expect(first.items).toHaveLength(2);
      const second = await listSandboxes(fx.deps, "prj_list", { limit: 2, cursor: first.nextCursor });
      expect(second.items.map((r) => r.name)).toEqual(["L0"]);
      expect(second.nextCursor).toBeUndefined();
    });

    it("records revisions and rolls back spec while files persist across restarts", async () => {
      const row = await createSandbox(fx.deps, fx.actor, {
        projectId: P,
        ...base,
        name: "Rev",
        env: { MODE: "one" },
        start: true,
      });
      expect(row.state).toBe("running");
      await exec(row.id, "echo data > /workspace/keep");
      const updated = await updateSandbox(fx.deps, fx.actor, {
        projectId: P,
        sandboxId: row.id,
        env: { MODE: "two" },
        reason: "try two",
      });
      // The answer says the running sandbox was restarted onto the change; a rename restarts nothing.
      expect(updated).toMatchObject({ restarted: true, row: { current_revision: 2, state: "running" } });
      const renamed = await updateSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, name: "Rev two" });
      expect(renamed).toMatchObject({ restarted: false, row: { current_revision: 2, name: "Rev two" } });
      expect((await exec(row.id, 'echo "$MODE"; cat /workspace/keep')).stdout).toBe("two\ndata\n");
      const rolled = await rollbackSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, revision: 1 });
      expect(rolled).toMatchObject({ current_revision: 3, state: "running", env: { MODE: "one" } });
      expect((await exec(row.id, 'echo "$MODE"; cat /workspace/keep')).stdout).toBe("one\ndata\n");
      const revisions = await listRevisions(fx.deps, row.id);
      expect(revisions.map((r) => [r.revision, (r.spec as { env: { MODE: string } }).env.MODE, r.reason])).toEqual([
        [3, "one", "rollback to revision 1"],
        [2, "two", "try two"],
        [1, "one", "created"],
      ]);
      await expect(
        rollbackSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, revision: 9 }),
      ).rejects.toMatchObject({ status: 404 });
      expect(readFileSync(join(fx.driver.workspaceDir(row.id), "keep"), "utf8")).toBe("data\n");
      await vi.waitFor(() => expect(fx.events.map((e) => e.action)).toContain("sandbox.rolled_back"));
    });

    it("restores a stopped sandbox's workspace at its next start when rolled back", async () => {
      const row = await createSandbox(fx.deps, fx.actor, {
        projectId: P,
        ...base,
        name: "Stopped rollback",
        start: true,
      });
      await exec(row.id, "echo one > /workspace/file");
      await updateSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, env: { MODE: "two" } });
      await exec(row.id, "echo two > /workspace/file");
      await stopSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      await rollbackSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, revision: 1 });
      expect(await getSandboxRow(fx.deps, P, row.id)).toMatchObject({ state: "stopped", restore_revision: 1 });
      // This driver puts the archive back right after the start.
      await startSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      expect((await exec(row.id, "cat /workspace/file")).stdout).toBe("one\n");
      expect((await getSandboxRow(fx.deps, P, row.id)).restore_revision).toBeNull();
      await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
    });

    it("keeps cwd and exported variables in a shell session", async () => {
      const row = await createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "Sess", start: true });
      const session = await fx.deps.sessions.open(P, row.id);
      await fx.deps.sessions.run(session, "mkdir -p /tmp/s && cd /tmp/s && export COLOR=blue", 5000);
      const r = await fx.deps.sessions.run(session, 'pwd; echo "$COLOR"; echo err >&2; false', 5000);
      expect(r).toMatchObject({ stdout: "/tmp/s\nblue\n", stderr: "err\n", exitCode: 1 });
      const printf = await fx.deps.sessions.run(session, "printf 'no newline'", 5000);
      expect(printf.stdout).toBe("no newline");
      const slow = await fx.deps.sessions.run(session, "sleep 5", 200);
      expect(slow.timedOut).toBe(true);
      await expect(fx.deps.sessions.run(session, "true", 1000)).rejects.toMatchObject({ status: 410 });
      // Looked up again (as every request does), the session answers 410 with why it ended, not 404.
      let gone: unknown;
      try {
        fx.deps.sessions.get(P, session.id);
      } catch (err) {
        gone = err;
      }
      expect(gone).toMatchObject({ status: 410, detail: expect.stringContaining("200 ms timeout") });
    });

    it("reports the status a command ends its session's shell with", async () => {
      const row = await createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "Exit", start: true });
      const session = await fx.deps.sessions.open(P, row.id);
      const r = await fx.deps.sessions.run(session, "echo bye; exit 5", 5000);
      expect(r).toMatchObject({ exitCode: 5, timedOut: false });
      await expect(fx.deps.sessions.run(session, "true", 1000)).rejects.toMatchObject({
        status: 410,
        detail: expect.stringContaining("its shell exited"),
      });
      await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
    });

    it("does not end a session for idleness while a command runs or waits in it", async () => {
      const row = await createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "Busy", start: true });
      const session = await fx.deps.sessions.open(P, row.id);
      // A command may run longer than the idle timeout (15 min against 10): it is no idleness.
      const running = fx.deps.sessions.run(session, "sleep 1; echo done", 5000);
      const waiting = fx.deps.sessions.run(session, "echo next", 5000);
      await new Promise((r) => setTimeout(r, 300));
      fx.deps.sessions.closeIdle(Date.now() + fx.deps.sessions.idleMs + 1000);
      expect(await running).toMatchObject({ exitCode: 0, stdout: "done\n" });
      expect(await waiting).toMatchObject({ exitCode: 0, stdout: "next\n" });
      fx.deps.sessions.closeIdle(Date.now() + fx.deps.sessions.idleMs + 1000);
      expect(() => fx.deps.sessions.get(P, session.id)).toThrow(/idle/);
      await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
    });

    it("mints sandbox tokens that resolve to a sandbox principal until revoked", async () => {
      const row = await createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "Tok", start: true });
      const envToken = (await exec(row.id, 'echo "$AGENTPLANE_TOKEN $AGENTPLANE_API_URL"')).stdout.trim().split(" ");
      expect(envToken[1]).toBe("http://platform.test");
      expect(await resolveSandboxToken(fx.deps, envToken[0] as string)).toMatchObject({
        type: "sandbox",
        sandboxId: row.id,
      });
      const { row: tokenRow, token } = await createSandboxToken(fx.deps, fx.actor, { name: "ci", sandbox: row });
      expect(token).toMatch(/^apsb_[0-9a-z]{26}_[0-9a-f]{64}$/);
      expect(await resolveSandboxToken(fx.deps, token)).toMatchObject({
        type: "sandbox",
        projectId: P,
        sandboxId: row.id,
      });
      await expect(
        resolveSandboxToken(fx.deps, `${token.slice(0, -1)}${token.endsWith("0") ? "1" : "0"}`),
      ).rejects.toMatchObject({ status: 401 });
      await revokeSandboxToken(fx.deps, fx.actor, { token: tokenRow });
      await expect(resolveSandboxToken(fx.deps, token)).rejects.toMatchObject({ status: 401 });
      await stopSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      await expect(resolveSandboxToken(fx.deps, envToken[0] as string)).rejects.toMatchObject({ status: 401 });
      const stored = await fx.deps.db.selectFrom("sandbox_tokens").select("secret_hash").execute();
      expect(stored.every((s) => !token.includes(s.secret_hash))).toBe(true);
    });

    it("a token minted as its sandbox is deleted does not outlive the sandbox", async () => {
      const row = await createSandbox(fx.deps, fx.actor, { projectId: P, ...base, name: "Gone" });
      // The mint read the sandbox's row before the delete (which revokes its tokens) and writes
      // its token after it.
      const early = await createSandboxToken(fx.deps, fx.actor, { name: "early", sandbox: row });
      await fx.deps.db.updateTable("sandboxes").set({ state: "deleting" }).where("id", "=", row.id).execute();
      await expect(resolveSandboxToken(fx.deps, early.token)).rejects.toMatchObject({ status: 401 });
      await fx.deps.db.updateTable("sandboxes").set({ state: "stopped" }).where("id", "=", row.id).execute();
      await deleteSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      const late = await createSandboxToken(fx.deps, fx.actor, { name: "late", sandbox: row });
      await expect(resolveSandboxToken(fx.deps, late.token)).rejects.toMatchObject({ status: 401 });
    });
  });
});
