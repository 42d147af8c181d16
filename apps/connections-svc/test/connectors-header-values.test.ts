import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { requirePostgres } from "@agentplane/testkit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealFields } from "../../governance-svc/src/crypto/envelope.ts";
import { startWorld, type World } from "./connectors-fixtures/world.ts";

const pg = await requirePostgres();

const SPEC = {
  openapi: "3.0.3",
  info: { title: "hdr", version: "1" },
  paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "ok" } } } } },
};
const SECRET = "sk-live-0f1e2d3c";

describe.skipIf(!pg.available)(`header values no HTTP request can carry${pg.reason}`, () => {
  let w: World;
  let upstream: Server;
  let baseUrl = "";
  let received = 0;

  beforeAll(async () => {
    w = await startWorld("connectors_header_values");
    upstream = createServer((_req, res) => {
      received++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    upstream?.close();
    await w?.close();
  });

  it("refuses a connector header with a line break or a reserved name (400 on the header, value not repeated)", async () => {
    const refused: Array<[Record<string, string>, string]> = [
      [{ "X-Api-Key": `${SECRET}\r\nX-Injected: 1` }, "/body/headers/X-Api-Key"],
      [{ Host: "admin.internal" }, "/body/headers"],
      [{ "Transfer-Encoding": "chunked" }, "/body/headers"],
    ];
    for (const [headers, pointer] of refused) {
      const res = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers`, w.owner, {
        name: "hdr",
        url: `${baseUrl}/mcp`,
        headers,
      });
      expect(res.status, JSON.stringify(headers)).toBe(400);
      const text = await res.text();
      expect(text).not.toContain(SECRET);
      const problem = JSON.parse(text) as { errors: { pointer: string }[] };
      expect(problem.errors[0]?.pointer.startsWith(pointer), text).toBe(true);
    }
    expect(received).toBe(0);
  });

  it("refuses to send a stored credential HTTP cannot carry, naming it and never its value", async () => {
    const created = await w.call("POST", `/v1/projects/${w.projectId}/mcp-servers/http`, w.owner, {
      name: "stored",
      spec: SPEC,
      baseUrl,
      credentialId: w.credentialId,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    // A credential stored before governance refused line breaks: reseal its token as such.
    const envelope = sealFields(
      { current: w.governance.secretKey },
      { token: `${SECRET}\r\nX-Injected: 1` },
      `credential:${w.credentialId}:1`,
    );
    await sql`update governance.credentials set sealed = ${envelope.sealed}, wrapped_key = ${envelope.wrappedKey},
      key_id = ${envelope.keyId}, secret_version = 1 where id = ${w.credentialId}`.execute(w.database.kysely);

    const res = await w.call("POST", `/v1/mcp-servers/${id}/tools/call`, w.developer, { name: "ping", arguments: {} });
    const text = await res.text();
    expect(res.status, text).toBe(400);
    expect(text).toContain(w.credentialId);
    expect(text).not.toContain(SECRET);
    expect(received).toBe(0);
  });
});
