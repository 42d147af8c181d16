import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { call, type Harness, sandboxStandIn, startHarness } from "./harness.ts";

/**
 * Text no service can store (NUL, malformed escapes, lone surrogates) in the path or the query of
 * a WebSocket upgrade is refused at the gateway with the 400 a plain request gets, naming the
 * field, and the upgrade never reaches the service.
 */
describe("the text of a WebSocket upgrade's path and query", () => {
  let h: Harness;
  const handed: string[] = [];
  beforeAll(async () => {
    const sandbox = sandboxStandIn();
    const upgrade = sandbox.upgrade as {
      kind: "in-process";
      handle: (...args: [IncomingMessage, Duplex, Buffer]) => void;
    };
    const handle = upgrade.handle;
    upgrade.handle = (req, socket, head) => {
      handed.push(req.url ?? "");
      handle(req, socket, head);
    };
    h = await startHarness({ extraTargets: { sandbox } });
  });
  afterAll(() => h.close());

  const open = (path: string) =>
    new Promise<{ status: number; type?: string; body?: { status: number; errors?: { pointer: string }[] } }>(
      (resolve, reject) => {
        const ws = new WebSocket(`${h.url.replace("http", "ws")}${path}`, ["v5.channel.k8s.io"], {
          headers: { authorization: `Bearer ${h.ownerToken}` },
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
      },
    );

  it.each([
    ["a NUL in a path parameter", "/v1/projects/prj%00x/sandboxes/sbx_x/exec", "/path/projectId"],
    ["a malformed escape in a path parameter", "/v1/projects/prj_x/sandboxes/sbx%E0%A4%A/exec", "/path/sandboxId"],
    ["a NUL in the query", "/v1/projects/prj_x/sandboxes/sbx_x/exec?command=%00", "/query/command"],
  ])("refuses %s with a 400 problem naming it, as on a plain request", async (_, path, pointer) => {
    const refused = await open(path);
    expect(refused.status).toBe(400);
    expect(refused.type).toBe("application/problem+json");
    expect(refused.body?.errors?.map((e) => e.pointer)).toEqual([pointer]);
    const plain = await call(h, "GET", path.replace("/exec", ""));
    expect(plain.status).toBe(400);
    expect(handed).toEqual([]);
  });

  it("opens an upgrade whose text is sane", async () => {
    expect((await open("/v1/projects/prj_x/sandboxes/sbx_x/exec?command=ls")).status).toBe(101);
    expect(handed).toEqual(["/v1/projects/prj_x/sandboxes/sbx_x/exec?command=ls"]);
  });
});
