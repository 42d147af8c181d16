import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bearerProtocol,
  createSandbox,
  type ExecResult,
  exec,
  execQuery,
  type K8sSession,
  openExec,
  requireBwrap,
  type SandboxBody,
  type SandboxPlatform,
  startSandboxPlatform,
} from "./sandbox-harness.ts";

const bwrap = requireBwrap();

interface Session {
  id: string;
  sandboxId: string;
  expiresAt: string;
}

const runTrue = (h: SandboxPlatform, sandboxId: string) =>
  h.call("POST", "/v1/shell/exec", { body: { projectId: h.projectId, sandboxId, command: ["true"] } });

const send = (s: K8sSession, channel: number, data: string | Buffer) =>
  s.ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(data)]));

function opened(s: K8sSession | { refused: number }): K8sSession {
  if ("refused" in s) throw new Error(`WebSocket refused with ${s.refused}`);
  return s;
}

describe.skipIf(!bwrap.available)(`exec, shell sessions and WebSocket exec through the gateway${bwrap.reason}`, () => {
  let h: SandboxPlatform;
  let sbx: SandboxBody;
  beforeAll(async () => {
    h = await startSandboxPlatform();
    sbx = await createSandbox(h, { name: "exec" });
  });
  afterAll(async () => {
    await h?.close();
  });

  describe("POST /v1/shell/exec", () => {
    it("runs a string with sh -c and an argv array, with stdin, cwd and env", async () => {
      const shell = await exec(h, sbx.id, 'read x; echo "got $x in $(pwd) as $NAME"; echo warn >&2; exit 4', {
        stdin: "line\n",
        cwd: "/tmp",
        env: { NAME: "tester" },
      });
      expect(shell.status).toBe(200);
      expect(shell.body).toMatchObject({
        exitCode: 4,
        stdout: "got line in /tmp as tester\n",
        stderr: "warn\n",
        timedOut: false,
        stdoutTruncated: false,
      });
      const argv = await exec(h, sbx.id, ["printf", "%s|", "a b", "$HOME"]);
      expect(argv.body).toMatchObject({ exitCode: 0, stdout: "a b|$HOME|" });
    });

    it("kills at the timeout and caps the output", async () => {
      const slow = await exec(h, sbx.id, "sleep 5", { timeoutMs: 300 });
      expect(slow.body.timedOut).toBe(true);
      expect(slow.body.durationMs).toBeLessThan(3000);
      const big = await exec(h, sbx.id, "head -c 1100000 /dev/zero | tr '\\0' a");
      expect(big.body.stdoutTruncated).toBe(true);
      expect(big.body.stdout.length).toBe(1024 * 1024);
    });

    it("audits each exec with its command, exit code and duration, never its output", async () => {
      const marker = `secret-output-${Date.now()}`;
      expect((await exec(h, sbx.id, `echo ${marker.toUpperCase()} | tr A-Z a-z; exit 2`)).body).toMatchObject({
        stdout: `${marker}\n`,
        exitCode: 2,
      });
      type Trail = {
        items: { action: string; targetId?: string; outcome: string; details?: Record<string, unknown> }[];
      };
      let record: Trail["items"][number] | undefined;
      await expect
        .poll(
          async () => {
            const trail = await h.call<Trail>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=sandbox.exec`, {
              token: h.ownerToken,
            });
            record = trail.body.items?.find((r) => JSON.stringify(r.details).includes(marker.toUpperCase()));
            return record !== undefined;
          },
          { timeout: 10_000, interval: 200 },
        )
        .toBe(true);
      expect(record).toMatchObject({ targetId: sbx.id, outcome: "error", details: { exitCode: 2, timedOut: false } });
      expect(typeof record?.details?.durationMs).toBe("number");
      expect(JSON.stringify(record)).not.toContain(marker);
    });

    it("refuses an empty command and a timeout above 15 minutes with 400", async () => {
      for (const command of ["", [], [""]]) {
        const res = await exec(h, sbx.id, command as string | string[]);
        expect(res.status, JSON.stringify(command)).toBe(400);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
      }
      const tooLong = await exec(h, sbx.id, "true", { timeoutMs: 15 * 60 * 1000 + 1 });
      expect(tooLong.status).toBe(400);
      expect(JSON.stringify(tooLong.body)).toContain("timeoutMs");
      expect((await exec(h, "sbx_01j0000000000000000000000", "true")).status).toBe(404);
    });

    it("refuses a command too large for a policy decision with 400, not a 503 blaming governance", async () => {
      // Inside the 1 MiB body limit, but twice that in the decision request (argv and command).
      const res = await exec(
        h,
        sbx.id,
        Array.from({ length: 15 }, () => "x".repeat(65_000)),
      );
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.body).toMatchObject({ errors: [{ pointer: "/body/command" }] });
      const fits = await exec(h, sbx.id, ["printf", "%s", ...Array.from({ length: 3 }, () => "x".repeat(60_000))]);
      expect(fits.body, JSON.stringify({ ...fits.body, stdout: undefined })).toMatchObject({ exitCode: 0 });
    });
  });

  describe("shell sessions", () => {
    it("keeps the working directory and exported variables between commands", async () => {
      const base = `/v1/projects/${h.projectId}/shell-sessions`;
      const created = await h.call<Session>("POST", base, { body: { sandboxId: sbx.id } });
      expect(created.status).toBe(201);
      const id = created.body.id;
      expect(created.body.sandboxId).toBe(sbx.id);
      expect(Date.parse(created.body.expiresAt)).toBeGreaterThan(Date.now());

      const run = (command: string) =>
        h.call<{ exitCode: number; stdout: string }>("POST", `${base}/${id}/commands`, { body: { command } });
      expect((await run("mkdir -p /tmp/work && cd /tmp/work && export COLOR=teal")).body.exitCode).toBe(0);
      const after = await run('echo "$(pwd) $COLOR"; false');
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ stdout: "/tmp/work teal\n", exitCode: 1 });

      const listed = await h.call<{ items: Session[] }>("GET", base);
      expect(listed.body.items.map((s) => s.id)).toContain(id);
      expect((await h.call("GET", `${base}/${id}`)).status).toBe(200);
      expect((await h.call("DELETE", `${base}/${id}`)).status).toBe(204);
      expect((await h.call("GET", `${base}/${id}`)).status).toBe(404);
      expect((await run("true")).status).toBe(404);
    });

    it("opens at most 32 sessions per sandbox at once (409 limit-exceeded), and one again after a close", async () => {
      const crowded = await createSandbox(h, { name: "sessions" });
      const base = `/v1/projects/${h.projectId}/shell-sessions`;
      const open = () => h.call<Session>("POST", base, { body: { sandboxId: crowded.id } });
      // Opened all at once: those still starting count, so a burst cannot overshoot.
      const answers = await Promise.all(Array.from({ length: 40 }, open));
      const ids = answers.filter((a) => a.status === 201).map((a) => a.body.id);
      expect(ids).toHaveLength(32);
      const refused = answers.find((a) => a.status !== 201);
      expect(refused?.status).toBe(409);
      expect(refused?.headers.get("content-type")).toContain("application/problem+json");
      expect(refused?.body).toMatchObject({ kind: "shell-sessions", limit: 32 });
      // Another sandbox of the project has its own.
      const other = await h.call<Session>("POST", base, { body: { sandboxId: sbx.id } });
      expect(other.status).toBe(201);
      await h.call("DELETE", `${base}/${other.body.id}`);
      expect((await h.call("DELETE", `${base}/${ids[0]}`)).status).toBe(204);
      expect((await open()).status).toBe(201);
      await h.call("DELETE", `/v1/projects/${h.projectId}/sandboxes/${crowded.id}`);
    });

    it("answers a command that waits out its timeout behind others with 409, without running it", async () => {
      const base = `/v1/projects/${h.projectId}/shell-sessions`;
      const created = await h.call<Session>("POST", base, { body: { sandboxId: sbx.id } });
      const run = (command: string, timeoutMs: number) =>
        h.call<{ exitCode: number; stdout: string }>("POST", `${base}/${created.body.id}/commands`, {
          body: { command, timeoutMs },
        });
      const marker = `/tmp/waited-${Date.now()}`;
      const first = run(`touch ${marker}-first; sleep 5`, 10_000);
      await expect
        .poll(async () => (await exec(h, sbx.id, `test -e ${marker}-first && echo yes`)).body.stdout, {
          timeout: 5000,
          interval: 100,
        })
        .toBe("yes\n");
      const started = Date.now();
      const behind = await run(`touch ${marker}`, 1000);
      expect(behind.status).toBe(409);
      expect(Date.now() - started).toBeLessThan(2500);
      expect(behind.body).toMatchObject({ detail: expect.stringContaining("did not run") });
      // At most 16 wait at once; the next is refused at once.
      const queued = Array.from({ length: 16 }, () => run("true", 10_000));
      await new Promise((r) => setTimeout(r, 1000));
      expect((await run("true", 10_000)).status).toBe(409);
      expect((await first).body).toMatchObject({ exitCode: 0 });
      expect((await Promise.all(queued)).map((r) => r.status)).toEqual(Array(16).fill(200));
      expect((await run(`test -e ${marker}; echo $?`, 5000)).body).toMatchObject({ stdout: "1\n" });
      await h.call("DELETE", `${base}/${created.body.id}`);
    });

    it("takes a command's endless output at the cost of an exec's, keeping its first MiB", async () => {
      const base = `/v1/projects/${h.projectId}/shell-sessions`;
      const created = await h.call<Session>("POST", base, { body: { sandboxId: sbx.id } });
      // 200 MB of output: each chunk must cost its own size, not that of all the output kept so far.
      const command = "head -c 200000000 /dev/zero | tr '\\0' x; echo; echo tail >&2";
      let started = Date.now();
      const once = await exec(h, sbx.id, command, { timeoutMs: 120_000 });
      const execMs = Date.now() - started;
      started = Date.now();
      const run = await h.call<ExecResult>("POST", `${base}/${created.body.id}/commands`, {
        body: { command, timeoutMs: 120_000 },
      });
      const sessionMs = Date.now() - started;
      expect(once.body).toMatchObject({ exitCode: 0, stdoutTruncated: true });
      expect(run.body).toMatchObject({ exitCode: 0, stdoutTruncated: true, stderr: "tail\n", stderrTruncated: false });
      expect(run.body.stdout).toBe("x".repeat(1024 * 1024));
      expect(sessionMs, `session ${sessionMs} ms, exec ${execMs} ms`).toBeLessThan(3 * execMs + 2000);
      await h.call("DELETE", `${base}/${created.body.id}`);
    });

    it("refuses an empty session command and an unknown sandbox", async () => {
      const base = `/v1/projects/${h.projectId}/shell-sessions`;
      const created = await h.call<Session>("POST", base, { body: { sandboxId: sbx.id } });
      const empty = await h.call("POST", `${base}/${created.body.id}/commands`, { body: { command: "" } });
      expect(empty.status).toBe(400);
      const unknown = await h.call("POST", base, { body: { sandboxId: "sbx_01j0000000000000000000000" } });
      expect(unknown.status).toBe(404);
      await h.call("DELETE", `${base}/${created.body.id}`);
    });
  });

  describe("WebSocket exec (Kubernetes protocol)", () => {
    const wsUrl = (argv: string[], extra = "") =>
      `${h.url.replace(/^http/, "ws")}/v1/projects/${h.projectId}/sandboxes/${sbx.id}/exec${execQuery(argv, extra)}`;

    it("v5 with the token in the Authorization header: stdin to EOF, stderr, exit status", async () => {
      const s = opened(
        await openExec(wsUrl(["sh", "-c", "cat; echo oops >&2; exit 3"]), ["v5.channel.k8s.io"], {
          authorization: `Bearer ${h.adminToken}`,
        }),
      );
      expect(s.ws.protocol).toBe("v5.channel.k8s.io");
      send(s, 0, "hello through the gateway\n");
      s.ws.send(Buffer.from([255, 0]));
      expect(await s.status).toMatchObject({ status: "Failure", details: { causes: [{ message: "3" }] } });
      expect(Buffer.concat(s.out).toString()).toBe("hello through the gateway\n");
      expect(Buffer.concat(s.err).toString()).toBe("oops\n");
    });

    it("audits a stream its client closed as ended by the client, and a failing one as an error", async () => {
      const marker = `stream-${Date.now()}`;
      const failing = opened(
        await openExec(wsUrl(["sh", "-c", `exit 4 # ${marker}-fails`]), ["v5.channel.k8s.io"], {
          authorization: `Bearer ${h.adminToken}`,
        }),
      );
      expect(await failing.status).toMatchObject({ status: "Failure" });
      const left = opened(
        await openExec(wsUrl(["sh", "-c", `sleep 30 # ${marker}-left`]), ["v5.channel.k8s.io"], {
          authorization: `Bearer ${h.adminToken}`,
        }),
      );
      left.ws.close();
      type Trail = { items: { outcome: string; details?: Record<string, unknown> }[] };
      const recordOf = async (suffix: string) => {
        const trail = await h.call<Trail>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=sandbox.exec_stream`, {
          token: h.ownerToken,
        });
        return trail.body.items?.find((r) => JSON.stringify(r.details).includes(`${marker}-${suffix}`));
      };
      await expect.poll(() => recordOf("left"), { timeout: 10_000, interval: 200 }).toBeDefined();
      expect(await recordOf("left")).toMatchObject({ outcome: "success", details: { endedBy: "client" } });
      expect(await recordOf("fails")).toMatchObject({ outcome: "error", details: { exitCode: 4 } });
      expect((await recordOf("fails"))?.details).not.toHaveProperty("endedBy");
    });

    it("v4 with the token as a base64url bearer subprotocol, which the service never sees", async () => {
      const s = opened(
        await openExec(wsUrl(["sh", "-c", "echo ok"]), ["v4.channel.k8s.io", bearerProtocol(h.adminToken)]),
      );
      expect(s.ws.protocol).toBe("v4.channel.k8s.io");
      expect(await s.status).toEqual({ metadata: {}, status: "Success" });
      expect(Buffer.concat(s.out).toString()).toBe("ok\n");
    });

    it("TTY: rows and cols from the query, resize frames seen by stty size", async () => {
      const s = opened(
        // The second `stty size` runs once the resize is seen (or after 5 s, and then fails).
        await openExec(
          wsUrl(
            [
              "sh",
              "-c",
              `stty size; i=0; while [ $i -lt 100 ] && [ "$(stty size)" != "43 132" ]; do sleep 0.05; i=$((i+1)); done; stty size`,
            ],
            "&tty=true&cols=100&rows=30",
          ),
          ["v5.channel.k8s.io", bearerProtocol(h.adminToken)],
        ),
      );
      await expect.poll(() => Buffer.concat(s.out).toString(), { timeout: 5000 }).toContain("30 100");
      send(s, 4, JSON.stringify({ Width: 132, Height: 43 }));
      await expect.poll(() => Buffer.concat(s.out).toString(), { timeout: 5000 }).toContain("43 132");
      expect(await s.status).toMatchObject({ status: "Success" });
    });

    it("refuses no token (401), a bad token (401) and a viewer token (403)", async () => {
      expect(await openExec(wsUrl(["true"]), ["v5.channel.k8s.io"])).toEqual({ refused: 401 });
      expect(await openExec(wsUrl(["true"]), ["v5.channel.k8s.io", bearerProtocol("apl_nope_nope")])).toEqual({
        refused: 401,
      });
      expect(
        await openExec(wsUrl(["true"]), ["v5.channel.k8s.io"], { authorization: `Bearer ${h.viewerToken}` }),
      ).toEqual({ refused: 403 });
      expect(await openExec(wsUrl(["true"]), ["v5.channel.k8s.io", bearerProtocol(h.viewerToken)])).toEqual({
        refused: 403,
      });
      // Refused upgrades are audited as any refused request is: the viewer's by the service, the
      // bad token's by the gateway.
      type Trail = { items: { outcome: string; status?: number; principal?: { displayName?: string } }[] };
      const denied = async () =>
        (
          await h.call<Trail>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=execSandboxStream`, {
            token: h.ownerToken,
          })
        ).body.items ?? [];
      await expect
        .poll(async () => (await denied()).filter((r) => r.outcome === "denied" && r.status === 403).length, {
          timeout: 10_000,
          interval: 200,
        })
        .toBe(2);
      expect((await denied()).find((r) => r.status === 403)?.principal?.displayName).toBe("viewer");
    });

    it("runs at most 64 commands per sandbox at once, streams and execs together (409 limit-exceeded)", async () => {
      const busy = await createSandbox(h, { name: "busy" });
      const url = `${h.url.replace(/^http/, "ws")}/v1/projects/${h.projectId}/sandboxes/${busy.id}/exec${execQuery(["sleep", "60"])}`;
      const auth = { authorization: `Bearer ${h.adminToken}` };
      const streams: K8sSession[] = [];
      for (let i = 0; i < 64; i++) streams.push(opened(await openExec(url, ["v5.channel.k8s.io"], auth)));
      // Each holds a process and what it buffers for a client that may never read.
      expect(await openExec(url, ["v5.channel.k8s.io"], auth)).toEqual({ refused: 409 });
      const exec = await h.call("POST", "/v1/shell/exec", {
        body: { projectId: h.projectId, sandboxId: busy.id, command: ["true"] },
      });
      expect(exec.status).toBe(409);
      expect(exec.body).toMatchObject({ kind: "running-commands", limit: 64 });
      // Another sandbox has its own, and an ended stream gives its slot back.
      expect((await runTrue(h, sbx.id)).status).toBe(200);
      streams.pop()?.ws.close();
      await expect.poll(async () => (await runTrue(h, busy.id)).status, { timeout: 10_000, interval: 200 }).toBe(200);
      for (const s of streams) s.ws.close();
      await h.call("DELETE", `/v1/projects/${h.projectId}/sandboxes/${busy.id}`);
    });

    it("refuses an empty command (400) and another organization's sandbox (404)", async () => {
      const auth = { authorization: `Bearer ${h.adminToken}` };
      expect(await openExec(wsUrl([""]), ["v5.channel.k8s.io"], auth)).toEqual({ refused: 400 });
      // No process can be given a NUL: the query's is refused as the body's is, not left to governance.
      expect(await openExec(wsUrl(["echo", "a\u0000b"]), ["v5.channel.k8s.io"], auth)).toEqual({ refused: 400 });
      // The admin token is bound to organization A; the installation owner creates in B.
      const rival = await h.call<SandboxBody>("POST", `/v1/projects/${h.otherProjectId}/sandboxes`, {
        token: h.ownerToken,
        body: { name: "other-ws" },
      });
      expect(rival.status).toBe(201);
      const url = `${h.url.replace(/^http/, "ws")}/v1/projects/${h.otherProjectId}/sandboxes/${rival.body.id}/exec?command=true`;
      expect(await openExec(url, ["v5.channel.k8s.io"], auth)).toEqual({ refused: 404 });
      // A name that is not valid percent-encoding is refused as a plain request with it is: 400
      // naming the field, never a 500 and never passed on to the sandbox service.
      const ws = h.url.replace(/^http/, "ws");
      for (const path of [
        `/v1/projects/${h.projectId}/sandboxes/%E0%A4%A/exec`,
        `/k8s/api/v1/namespaces/${h.projectId}/pods/%zz/exec`,
      ]) {
        expect(await openExec(`${ws}${path}?command=true`, ["v5.channel.k8s.io"], auth), path).toEqual({
          refused: 400,
        });
      }
    });
  });
});
