import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { INTERNAL_IDENTITY_HEADER, type Sandbox } from "@agentplane/contracts";
import { signIdentity } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type ApiFixture, apiFixture } from "./api-fixture.ts";
import { requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();
const ADA = { type: "user" as const, id: "usr_ada", displayName: "Ada" };

describe.skipIf(!bwrap.available)(`the query of a WebSocket exec${bwrap.reason}`, () => {
  let fx: ApiFixture;
  let server: Server;
  let box: Sandbox;

  beforeAll(async () => {
    fx = await apiFixture();
    box = await fx.as(ADA)<Sandbox>("POST", "/v1/projects/prj_api/sandboxes", { name: "tty", start: true });
    // What the gateway does with an exec upgrade: passes it on with the caller's identity signed.
    server = createServer();
    server.on("upgrade", (req, socket, head) => fx.service.handleUpgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  }, 60_000);
  afterAll(async () => {
    server?.close();
    await fx.close();
  });

  /** Opens an exec of `stty size` on a terminal with `query`: its output, or the refusal's status and problem. */
  async function exec(
    query: string,
  ): Promise<{ output: string } | { status: number; problem: Record<string, unknown> }> {
    const { port } = server.address() as AddressInfo;
    const ws = new WebSocket(
      `ws://127.0.0.1:${port}/v1/projects/prj_api/sandboxes/${box.id}/exec?command=stty&command=size&tty=true${query}`,
      ["v5.channel.k8s.io"],
      { headers: { [INTERNAL_IDENTITY_HEADER]: await signIdentity(fx.keys, ADA, { audience: "sandbox" }) } },
    );
    return new Promise((resolve, reject) => {
      let output = "";
      ws.on("message", (data: Buffer) => {
        if (data[0] === 1) output += data.subarray(1).toString("utf8");
      });
      ws.once("close", () => resolve({ output }));
      ws.once("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, problem: JSON.parse(body) }));
      });
      ws.once("error", reject);
    });
  }

  it("gives the terminal the size asked for", async () => {
    expect(await exec("&cols=100&rows=30")).toMatchObject({ output: expect.stringContaining("30 100") });
  });

  it("refuses a terminal size the endpoint does not take (1 to 1000, whole) with a 400 naming it", async () => {
    for (const [query, pointer] of [
      ["&cols=-5", "/query/cols"],
      ["&cols=0", "/query/cols"],
      ["&cols=1000000000", "/query/cols"],
      ["&cols=1.5", "/query/cols"],
      ["&cols=wide", "/query/cols"],
      ["&rows=-1", "/query/rows"],
      ["&rows=70000", "/query/rows"],
    ] as const) {
      const answer = await exec(query);
      expect(answer, query).toMatchObject({ status: 400, problem: { errors: [{ pointer }] } });
    }
  }, 60_000);
});
