// A canary for the one internal of @hono/node-server the gateway relies on (response-headers.ts,
// docs/decisions/0016-node-server-response-internals.md): its lightweight Response keeps
// `[status, body, headers]` under an own symbol described "cache", and the server writes that
// record as it is. The version is pinned exactly; when an upgrade changes any of this, this file
// fails before the gateway's answers quietly lose their headers.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adjustResponseHeaders, responseHeader } from "../src/response-headers.ts";

const require = createRequire(import.meta.url);
const manifest = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

describe("@hono/node-server internals the gateway relies on", () => {
  let server: ReturnType<typeof serve>;
  let base: string;
  beforeAll(async () => {
    // The server answers with a Response adjusted the way the gateway adjusts one in process.
    server = serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) => {
        const response = new Response('{"ok":true}', { status: 202, headers: { "Content-Type": "application/json" } });
        const adjusted = adjustResponseHeaders(response, (headers) => {
          headers["x-request-id"] = request.headers.get("x-request-id") ?? "none";
          delete headers["content-type"];
          headers["content-type"] = "application/json; charset=utf-8";
        });
        if (!adjusted) return new Response("not the lightweight Response", { status: 500 });
        return response;
      },
    });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("is the exact version every package pins", () => {
    // The package exports no ./package.json: its manifest is read beside its entry (dist/..).
    const entry = require.resolve("@hono/node-server");
    const installed = manifest(join(dirname(entry), "..", "package.json")).version as string;
    expect(manifest(join(dirname(entry), "..", "package.json")).name).toBe("@hono/node-server");
    const root = join(import.meta.dirname, "../../..");
    for (const pkg of ["apps/api-gateway", "apps/platform", "apps/agent-runtime", "packages/service-kit"]) {
      const deps = manifest(join(root, pkg, "package.json")).dependencies as Record<string, string>;
      expect(deps["@hono/node-server"], pkg).toBe(installed);
    }
  });

  it("keeps [status, body, headers record] under an own symbol described 'cache'", () => {
    const headers = { "content-type": "application/json" };
    const response = new Response("{}", { status: 201, headers });
    const key = Object.getOwnPropertySymbols(response).find((s) => s.description === "cache");
    expect(key).toBeDefined();
    const cache = (response as unknown as Record<symbol, unknown>)[key as symbol];
    expect(cache).toEqual([201, "{}", headers]);
    expect((cache as unknown[])[2]).toBe(headers);
    expect(responseHeader(response, "Content-Type")).toBe("application/json");
    expect(responseHeader(new Response("text"), "content-type")).toBe("text/plain; charset=UTF-8");
  });

  it("writes the adjusted record as the answer's headers", async () => {
    const res = await fetch(`${base}/`, { headers: { "x-request-id": "req_canary" } });
    expect(res.status).toBe(202);
    expect(res.headers.get("x-request-id")).toBe("req_canary");
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual({ ok: true });
  });

  it("reads a Response whose headers were touched through `headers`, not the record", () => {
    const response = new Response("{}", { headers: { "content-type": "application/json" } });
    response.headers.set("x-set", "1");
    // Once Headers exist the record is gone: the helper must say so rather than change a dead copy.
    expect(adjustResponseHeaders(response, () => {})).toBe(false);
    expect(responseHeader(response, "x-set")).toBe("1");
  });
});
