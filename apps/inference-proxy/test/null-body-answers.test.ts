import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS } from "./upstream.ts";

const pg = await requirePostgres();

/**
 * An upstream that answers with the status named in the model id (`/model/status-204/invoke`), with
 * an entity tag and a body where HTTP allows one.
 */
async function statusUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const status = Number(/\/status-(\d{3})\//.exec(req.url ?? "")?.[1] ?? 200);
      res.writeHead(status, { etag: '"v1"', "content-type": "application/json" });
      res.end(status === 204 || status === 304 ? undefined : '{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.skipIf(!pg.available)(`upstream answers that carry no body${pg.reason}`, () => {
  let up: { url: string; server: Server };
  let h: InferencePlatform;

  beforeAll(async () => {
    up = await statusUpstream();
    h = await startInferencePlatform({ cloudA: { kind: "bearer", token: CREDS.bearer }, cloudAEndpointUrl: up.url });
  });
  afterAll(async () => {
    await h?.close();
    await new Promise((resolve) => up?.server.close(resolve));
  });

  const path = (status: number) => `/v1/llm/cloud-a/us-east-1/model/status-${status}/invoke`;

  it.each([204, 205, 304])(
    "a call answered %i reaches the client with its status and headers, and no body",
    async (status) => {
      const res = await fetch(`${h.url}${path(status)}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${h.projectToken}`,
          "content-type": "application/json",
          ...(status === 304 ? { "if-none-match": '"v1"' } : {}),
        },
        body: "{}",
      });
      expect(res.status).toBe(status);
      expect(res.headers.get("etag")).toBe('"v1"');
      expect(await res.text()).toBe("");
    },
  );

  it("the platform keeps serving after those answers", async () => {
    const res = await fetch(`${h.url}${path(200)}`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.projectToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });
});
