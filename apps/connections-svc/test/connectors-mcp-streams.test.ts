// The standalone event stream of the platform's MCP endpoints (GET) stays open until the client
// leaves, and each one polls the database every few seconds: one caller may not hold any number.
import type { Principal } from "@agentplane/contracts";
import { signIdentity } from "@agentplane/service-kit";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();
const LIFETIME_MS = 1_500;

describe.skipIf(!pg.available)(`MCP event streams held open${pg.reason}`, () => {
  let w: World;
  const opened: AbortController[] = [];

  beforeAll(async () => {
    w = await startWorld("connectors_mcp_streams", { mcpStreamLifetimeMs: LIFETIME_MS });
  }, 120_000);
  afterAll(async () => {
    for (const c of opened) c.abort();
    await w?.close();
  });

  async function openStream(path: string, as: Principal): Promise<Response> {
    const controller = new AbortController();
    opened.push(controller);
    const identity = await signIdentity(w.tenancy.keys, as, { audience: "connections" });
    return w.service.fetch(
      new Request(`http://connections.test${path}`, {
        method: "GET",
        headers: { accept: "text/event-stream", "x-agentplane-identity": identity },
        signal: controller.signal,
      }),
    );
  }

  it("refuses a caller's streams past the cap with a 429 problem, and takes them again once one closes", async () => {
    const path = `/projects/${w.projectId}/mcp`;
    const answers: Response[] = [];
    for (let i = 0; i < 12; i++) answers.push(await openStream(path, w.developer));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBe(8);
    const refused = answers.find((r) => r.status !== 200);
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get("content-type")).toContain("application/problem+json");
    expect(refused?.headers.get("retry-after")).toBeTruthy();
    // Another caller is not affected.
    expect((await openStream(path, w.owner)).status).toBe(200);
    // A stream the client leaves frees its place.
    const first = answers.findIndex((r) => r.status === 200);
    await answers[first]?.body?.cancel();
    opened[first]?.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await openStream(path, w.developer)).status).toBe(200);
  });

  it("closes a stream once it has been open for its lifetime", async () => {
    const started = Date.now();
    const res = await openStream(`/mcp?orgId=${w.orgId}`, w.teamMember);
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    for (;;) {
      const { done } = (await reader?.read()) ?? { done: true };
      if (done) break;
    }
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(LIFETIME_MS - 100);
    expect(elapsed).toBeLessThan(LIFETIME_MS + 3_000);
  });
});
