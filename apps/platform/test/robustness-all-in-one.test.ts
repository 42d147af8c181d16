import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { freePort } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { attacksOn, runAttacks, slowServer } from "./reset-attacks.ts";
import { createSandbox, type SandboxPlatform, startSandboxPlatform } from "./sandbox-harness.ts";

const INGRESS = "sbx.localhost";

describe("all-in-one: clients that reset their connections never take the platform down", () => {
  let h: SandboxPlatform;
  let sandboxId = "";
  let ingressHost = "";

  beforeAll(async () => {
    h = await startSandboxPlatform({ ingressHost: INGRESS, env: { SANDBOX_LOCAL_ISOLATION: "none" } });
    const port = await freePort();
    const slug = `web-${randomBytes(3).toString("hex")}`;
    const sbx = await createSandbox(h, {
      name: "web",
      slug,
      command: ["node", "-e", slowServer(port)],
      ports: [{ port, visibility: "public" }],
    });
    sandboxId = sbx.id;
    ingressHost = `${port}-${slug}.${INGRESS}`;
    // fetch() does not send a Host header of its own choosing; node:http does, as a browser resolving
    // the ingress name would. The attacks need the server in the sandbox up.
    const viaIngress = () =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(h.url);
        const req = request(
          { host: url.hostname, port: url.port, path: "/", headers: { host: ingressHost } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end();
      });
    await vi.waitFor(async () => expect(await viaIngress(), "the server in the sandbox").toBe(200), {
      timeout: 20_000,
      interval: 100,
    });
    // Migrations of three services on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await h?.close();
  });

  it("survives opened, half-sent and reset connections on every kind of route", async () => {
    const attacks = attacksOn({
      url: h.url,
      token: h.adminToken,
      projectId: h.projectId,
      sandboxId,
      ingressHost,
    });
    expect(await runAttacks(h.url, attacks)).toEqual([]);
    // Asserts that nothing happens: resets that land while the server works on them surface (as a
    // counted fault) a moment later, so the health is read after a short wait.
    await new Promise((r) => setTimeout(r, 300));
    const health = await fetch(`${h.url}/health`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as { status: string; process: { uncaughtExceptions: number } };
    expect(body.status).toBe("ok");
    expect(body.process.uncaughtExceptions).toBe(0);
    // The platform still does real work after the storm.
    const exec = await h.call<{ exitCode: number }>("POST", "/v1/shell/exec", {
      body: { projectId: h.projectId, sandboxId, command: "true" },
    });
    expect(exec.status).toBe(200);
  });
});
