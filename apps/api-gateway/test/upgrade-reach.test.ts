import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { call, type Harness, sandboxStandIn, startHarness } from "./harness.ts";

const EXEC_PATH = "/v1/projects/prj_x/sandboxes/sbx_x/exec";

/**
 * A WebSocket upgrade reaches what the same principal reaches with a plain request: a token
 * restricted by scopes opens a WebSocket route only when its scopes name the route's permission,
 * and is refused at the gateway (before the service is asked) with the 403 a plain request gets.
 */
describe("scoped tokens on WebSocket upgrades", () => {
  let h: Harness;
  let orgId = "";
  beforeAll(async () => {
    h = await startHarness({ extraTargets: { sandbox: sandboxStandIn() } });
    orgId = (await call(h, "POST", "/v1/orgs", { body: { name: "Reach" } })).body.id as string;
  });
  afterAll(() => h.close());

  const scoped = async (scopes: string[]) => {
    const created = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, { body: { name: "ws", scopes } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.token as string;
  };

  const upgrade = (bearer: string) =>
    new Promise<{ status: number; type?: string; body?: { detail: string } }>((resolve, reject) => {
      const ws = new WebSocket(`${h.url.replace("http", "ws")}${EXEC_PATH}`, ["v5.channel.k8s.io"], {
        headers: { authorization: `Bearer ${bearer}` },
      });
      ws.once("open", () => {
        ws.close();
        resolve({ status: 101 });
      });
      ws.once("unexpected-response", (_req, res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.once("end", () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"], body: JSON.parse(text) }),
        );
      });
      ws.once("error", reject);
    });

  it("refuses a token scoped to model calls an exec WebSocket, as it refuses the plain request", async () => {
    const models = await scoped(["llm:invoke"]);
    const refused = await upgrade(models);
    expect(refused.status).toBe(403);
    expect(refused.type).toBe("application/problem+json");
    expect(refused.body?.detail).toBe("This token is restricted to llm:invoke; this route needs sandboxes:exec");
    const plain = await call(h, "POST", "/v1/projects/prj_x/shell-sessions", { token: models, body: {} });
    expect(plain.status).toBe(403);
    expect(plain.body.detail).toBe(refused.body?.detail);
  });

  it("opens it for a token whose scopes name sandboxes:exec", async () => {
    expect((await upgrade(await scoped(["sandboxes:exec"]))).status).toBe(101);
  });
});
