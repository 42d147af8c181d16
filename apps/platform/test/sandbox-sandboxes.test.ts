import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  exec,
  requireBwrap,
  type SandboxBody,
  type SandboxPlatform,
  startSandboxPlatform,
} from "./sandbox-harness.ts";

const bwrap = requireBwrap();

interface Problem {
  type: string;
  status: number;
  detail?: string;
  errors?: { pointer: string; message: string }[];
}

interface Revision {
  revision: number;
  reason: string | null;
  author: { type: string; id: string };
  spec: { env: Record<string, string>; image: string };
}

describe.skipIf(!bwrap.available)(`sandboxes through the gateway${bwrap.reason}`, () => {
  let h: SandboxPlatform;
  beforeAll(async () => {
    h = await startSandboxPlatform();
  });
  afterAll(async () => {
    await h?.close();
  });
  const base = () => `/v1/projects/${h.projectId}/sandboxes`;

  describe("happy path", () => {
    it("creates without starting, starts, stops, restarts and deletes", async () => {
      const created = await h.call<SandboxBody>("POST", base(), {
        body: { name: "Build Box", labels: { team: "ml" }, env: { GREETING: "hi" } },
      });
      expect(created.status).toBe(201);
      const sbx = created.body;
      expect(sbx.id).toMatch(/^sbx_/);
      expect(sbx).toMatchObject({ projectId: h.projectId, state: "pending", currentRevision: 1, image: "default" });
      expect(sbx.slug).toMatch(/^build-box-[0-9a-f]{6}$/);

      const got = await h.call<SandboxBody>("GET", `${base()}/${sbx.id}`);
      expect(got.status).toBe(200);
      expect(got.body.id).toBe(sbx.id);

      const started = await h.call<SandboxBody>("POST", `${base()}/${sbx.id}/start`);
      expect(started.status).toBe(200);
      expect(started.body.state).toBe("running");
      const hello = await exec(h, sbx.id, 'echo "$GREETING from $(hostname)"; test -n "$AGENTPLANE_TOKEN"');
      expect(hello.status).toBe(200);
      expect(hello.body).toMatchObject({ exitCode: 0, stdout: `hi from ${sbx.slug}\n` });

      const stopped = await h.call<SandboxBody>("POST", `${base()}/${sbx.id}/stop`);
      expect(stopped.status).toBe(200);
      expect(stopped.body.state).toBe("stopped");
      expect((await h.call<SandboxBody>("POST", `${base()}/${sbx.id}/start`)).body.state).toBe("running");

      expect((await h.call("DELETE", `${base()}/${sbx.id}`)).status).toBe(204);
      expect((await h.call("GET", `${base()}/${sbx.id}`)).status).toBe(404);
    });

    it("lists with state and label filters and a cursor", async () => {
      const a = await createSandbox(h, { name: "list-a", labels: { tier: "gold" }, start: false });
      const b = await createSandbox(h, { name: "list-b", labels: { tier: "silver" }, start: false });
      const gold = await h.call<{ items: SandboxBody[] }>("GET", `${base()}?labelSelector=tier%3Dgold`);
      expect(gold.status).toBe(200);
      expect(gold.body.items.map((s) => s.id)).toEqual([a.id]);
      const tiered = await h.call<{ items: SandboxBody[] }>("GET", `${base()}?labelSelector=tier&state=pending`);
      expect(tiered.body.items.map((s) => s.id).sort()).toEqual([a.id, b.id].sort());

      const first = await h.call<{ items: SandboxBody[]; nextCursor?: string }>(
        "GET",
        `${base()}?labelSelector=tier&limit=1`,
      );
      expect(first.body.items).toHaveLength(1);
      expect(first.body.nextCursor).toBeTruthy();
      const second = await h.call<{ items: SandboxBody[]; nextCursor?: string }>(
        "GET",
        `${base()}?labelSelector=tier&limit=1&cursor=${first.body.nextCursor}`,
      );
      expect(second.body.items).toHaveLength(1);
      expect(second.body.items[0]?.id).not.toBe(first.body.items[0]?.id);
      expect(second.body.nextCursor).toBeUndefined();
      await h.call("DELETE", `${base()}/${a.id}`);
      await h.call("DELETE", `${base()}/${b.id}`);
    });

    it("records revisions, rolls back onto a new revision and keeps the workspace across restarts", async () => {
      const sbx = await createSandbox(h, { name: "rev", env: { STAGE: "one" } });
      const wrote = await exec(h, sbx.id, "echo kept > /workspace/notes.txt");
      expect(wrote.body.exitCode).toBe(0);

      const patched = await h.call<SandboxBody>("PATCH", `${base()}/${sbx.id}`, {
        body: { env: { STAGE: "two" }, reason: "second stage" },
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ currentRevision: 2, state: "running" });
      expect((await exec(h, sbx.id, 'echo "$STAGE"; cat /workspace/notes.txt')).body.stdout).toBe("two\nkept\n");

      // Name and labels are metadata: no revision.
      const renamed = await h.call<SandboxBody>("PATCH", `${base()}/${sbx.id}`, { body: { name: "renamed" } });
      expect(renamed.body).toMatchObject({ name: "renamed", currentRevision: 2 });

      const rolled = await h.call<SandboxBody>("POST", `${base()}/${sbx.id}/rollback`, { body: { revision: 1 } });
      expect(rolled.status).toBe(200);
      expect(rolled.body).toMatchObject({ currentRevision: 3, state: "running" });
      expect((await exec(h, sbx.id, 'echo "$STAGE"; cat /workspace/notes.txt')).body.stdout).toBe("one\nkept\n");

      const revisions = await h.call<{ items: Revision[] }>("GET", `${base()}/${sbx.id}/revisions`);
      expect(revisions.status).toBe(200);
      expect(revisions.body.items.map((r) => r.revision)).toEqual([3, 2, 1]);
      const [third, second, first] = revisions.body.items as [Revision, Revision, Revision];
      expect(third.spec.env).toEqual({ STAGE: "one" });
      expect(third.reason).toBe("rollback to revision 1");
      expect(second).toMatchObject({ reason: "second stage", spec: { env: { STAGE: "two" } } });
      expect(first.spec.env).toEqual({ STAGE: "one" });
      expect(third.author.type).toBe("api_token");
      await h.call("DELETE", `${base()}/${sbx.id}`);
    });
  });

  describe("errors", () => {
    it("answers 400 with errors[] for a bad slug and an unknown image", async () => {
      const slug = await h.call<Problem>("POST", base(), { body: { name: "x", slug: "Not_A_Label" } });
      expect(slug.status).toBe(400);
      expect(slug.headers.get("content-type")).toBe("application/problem+json");
      expect(slug.body.errors?.some((e) => e.pointer.endsWith("/slug"))).toBe(true);
      const digit = await h.call<Problem>("POST", base(), { body: { name: "x", slug: "9lives" } });
      expect(digit.status).toBe(400);

      const image = await h.call<Problem>("POST", base(), { body: { name: "x", image: "ubuntu-from-nowhere" } });
      expect(image.status).toBe(400);
      expect(image.body.errors?.[0]?.pointer).toBe("/body/image");
      expect(image.body.detail).toContain("known: default");
    });

    it("answers 409 for a duplicate slug, installation-wide", async () => {
      const first = await createSandbox(h, { name: "dup", slug: "taken-slug", start: false });
      const again = await h.call<Problem>("POST", base(), { body: { name: "dup", slug: "taken-slug" } });
      expect(again.status).toBe(409);
      // Slugs name ingress hosts, so another organization cannot take it either.
      const elsewhere = await h.call<Problem>("POST", `/v1/projects/${h.otherProjectId}/sandboxes`, {
        token: h.ownerToken,
        body: { name: "dup", slug: "taken-slug" },
      });
      expect(elsewhere.status).toBe(409);
      await h.call("DELETE", `${base()}/${first.id}`);
    });

    it("answers 409 for transitions that make no sense", async () => {
      const sbx = await createSandbox(h, { name: "trans", start: false });
      const stopPending = await h.call<Problem>("POST", `${base()}/${sbx.id}/stop`);
      expect(stopPending.status).toBe(409);
      expect(stopPending.body.type).toMatch(/invalid-transition$/);
      const execPending = await exec(h, sbx.id, "true");
      expect(execPending.status).toBe(409);
      const session = await h.call("POST", `/v1/projects/${h.projectId}/shell-sessions`, {
        body: { sandboxId: sbx.id },
      });
      expect(session.status).toBe(409);
      await h.call("DELETE", `${base()}/${sbx.id}`);
    });

    it("answers 404 for a missing revision and a missing sandbox", async () => {
      const sbx = await createSandbox(h, { name: "norev", start: false });
      const rollback = await h.call("POST", `${base()}/${sbx.id}/rollback`, { body: { revision: 7 } });
      expect(rollback.status).toBe(404);
      const badBody = await h.call<Problem>("POST", `${base()}/${sbx.id}/rollback`, { body: { revision: 0 } });
      expect(badBody.status).toBe(400);
      expect((await h.call("GET", `${base()}/sbx_01j0000000000000000000000`)).status).toBe(404);
      await h.call("DELETE", `${base()}/${sbx.id}`);
    });
  });
});
