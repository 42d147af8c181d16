import { existsSync } from "node:fs";
import { openDatabase } from "@agentplane/db";
import { generateInternalKeys, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxService, type SandboxService } from "../src/app.ts";
import type { ExecProcess } from "../src/driver/types.ts";
import { createSandbox } from "../src/services/create.ts";
import { getSandboxRow } from "../src/services/sandboxes.ts";
import { requireBwrap } from "./helpers.ts";
import { type VerbFixture, verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const node = existsSync("/usr/bin/node");
const P = "prj_idle_ingress";

/** A server on port 8000 that answers with an event stream it never ends (as a live page's feed). */
const EVENT_SERVER = `
require("http").createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write("data: hello\\n\\n");
}).listen(8000, "127.0.0.1", () => console.log("listening"));
`;

describe.skipIf(!bwrap.available || !node)(`idle auto-stop and the ingress${bwrap.reason}`, () => {
  let fx: VerbFixture;
  let service: SandboxService;
  let server: ExecProcess | undefined;
  beforeAll(async () => {
    const database = await openDatabase("pglite://memory");
    fx = await verbFixture(database);
    service = await createSandboxService({
      database,
      bus: fx.bus,
      keys: await generateInternalKeys(),
      logger: silentLogger(),
      authorizer: fx.deps.authorizer,
      config: { dataDir: "/nonexistent", idleCheckIntervalMs: 100 },
      driver: fx.driver,
    });
  });
  afterAll(async () => {
    server?.kill("SIGKILL");
    await service?.close();
    await fx?.close();
  });

  const state = async (id: string) => (await getSandboxRow(fx.deps, P, id)).state;

  it("keeps a sandbox running while a connection through the ingress is open, and stops it once it closes", async () => {
    const box = await createSandbox(fx.deps, fx.actor, {
      projectId: P,
      name: "live",
      labels: {},
      start: true,
      idleTimeoutSeconds: 1,
      ports: [{ port: 8000, visibility: "public" }],
    });
    server = await fx.driver.exec(box.id, { argv: ["/usr/bin/node", "-e", EVENT_SERVER] });
    await new Promise<void>((resolve) => server?.stdout.once("data", () => resolve()));
    const res = await service.ingress(new Request("http://live.sbx.localhost/events"), { slug: box.slug });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("hello");
    // Three times its idle timeout, with the idle check every 100 ms: the open stream is activity.
    for (let i = 0; i < 30; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await state(box.id)).toBe("running");
    }
    // The client goes away: nothing is open any more, and the sandbox is stopped as idle.
    await reader.cancel();
    await expect.poll(() => state(box.id), { timeout: 10_000, interval: 100 }).toBe("stopped");
  }, 60_000);
});
