import { createLogger } from "@agentplane/service-kit";
import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";
import { UPSTREAM_KEY } from "./fixtures/aws-stand-ins.ts";
import { createProjectCredential } from "./fixtures/governance-policy.ts";

const pg = await requirePostgres();

const IDLE_MS = 400;
const TOTAL_MS = 1_500;

/**
 * An AWS endpoint that sends its answer's headers and then takes its time over the body: undici
 * alone would wait five minutes between two chunks. The proxy cuts the answer short at
 * `AWS_UPSTREAM_BODY_IDLE_MS` without a chunk or `AWS_UPSTREAM_BODY_TIMEOUT_MS` in all.
 */
describe.skipIf(!pg.available)(`AWS answer bodies bounded in time${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let dripping: LocalServer;
  let connectionId: string;
  const timers = new Set<NodeJS.Timeout>();
  const logs: Array<{ level: number; msg: string; cause?: string; host?: string }> = [];

  beforeAll(async () => {
    dripping = await startLocalServer((req, res) => {
      if (req.method === "POST" && req.url === "/") {
        // STS's GetCallerIdentity (the connection test): the answer's start, then nothing.
        res.writeHead(200, { "content-type": "text/xml" });
        res.write("<GetCallerIdentityResponse>");
      } else if (req.url?.endsWith("/stalls")) {
        // One chunk, then nothing.
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.write("first chunk");
      } else if (req.url?.endsWith("/drips")) {
        // A byte well within the idle bound, forever.
        res.writeHead(200, { "content-type": "application/octet-stream" });
        const timer = setInterval(() => res.write("x"), 100);
        timers.add(timer);
        res.on("close", () => clearInterval(timer));
      } else if (req.url?.endsWith("/small")) {
        // Declares a small answer (read whole before it is passed on), sends part of it.
        res.writeHead(200, { "content-type": "text/plain", "content-length": "20" });
        res.write("0123456789");
      } else {
        res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
        res.end("ok");
      }
    });
    h = await startConnectionsPlatform({
      env: {
        CONNECTOR_ALLOWED_HOSTS: `127.0.0.1:${dripping.port}`,
        AWS_UPSTREAM_BODY_IDLE_MS: String(IDLE_MS),
        AWS_UPSTREAM_BODY_TIMEOUT_MS: String(TOTAL_MS),
      },
      logger: createLogger("test", "warn", { write: (line) => void logs.push(JSON.parse(line)) }),
    });
    const credentialId = await createProjectCredential(h, { name: "keys", kind: "aws-keys", ...UPSTREAM_KEY });
    const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/aws-connections`, {
      token: h.adminToken,
      body: {
        name: "dripping",
        credentialId,
        defaultRegion: "eu-west-1",
        endpoints: { s3: dripping.url, sts: dripping.url },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    connectionId = created.body.id;
  });
  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    await h?.close();
    await dripping?.close();
  });

  /** GETs an object through the proxy; the body read whole, or the error that ended it. */
  async function get(key: string): Promise<{ status: number; body?: string; error?: unknown; ms: number }> {
    const started = Date.now();
    const res = await fetch(`${h.url}/v1/aws-connections/${connectionId}/aws/bucket/${key}`, {
      headers: {
        authorization: `Bearer ${h.memberToken}`,
        "x-agentplane-aws-service": "s3",
        "x-agentplane-aws-region": "eu-west-1",
      },
    });
    try {
      const body = await res.text();
      return { status: res.status, body, ms: Date.now() - started };
    } catch (error) {
      return { status: res.status, error, ms: Date.now() - started };
    }
  }

  const cut = (cause: string) => logs.filter((l) => l.msg === "AWS answer body cut short" && l.cause === cause);

  it("passes a prompt answer through whole", async () => {
    expect(await get("ok")).toMatchObject({ status: 200, body: "ok" });
  });

  it("cuts a streamed answer short when the endpoint sends nothing for the idle bound, and logs why", async () => {
    const answer = await get("stalls");
    expect(answer.status).toBe(200);
    expect(answer.error, "the answer ends with an error, not as a complete body").toBeDefined();
    expect(answer.ms).toBeLessThan(IDLE_MS + 2_000);
    expect(cut("idle")).toEqual([
      expect.objectContaining({ level: 40, host: `127.0.0.1:${dripping.port}`, cause: "idle" }),
    ]);
  });

  it("cuts a streamed answer short at the total bound however steadily it drips", async () => {
    const answer = await get("drips");
    expect(answer.status).toBe(200);
    expect(answer.error).toBeDefined();
    expect(answer.ms).toBeGreaterThanOrEqual(TOTAL_MS - 100);
    expect(answer.ms).toBeLessThan(TOTAL_MS + 2_000);
    expect(cut("total")).toHaveLength(1);
  });

  it("answers a small answer not read whole in time with a 504 problem", async () => {
    const answer = await get("small");
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body ?? "{}")).toMatchObject({ reason: "timeout" });
    expect(answer.body).toContain(`${IDLE_MS} ms`);
    expect(answer.ms).toBeLessThan(IDLE_MS + 2_000);
    expect(cut("idle")).toHaveLength(2);
  });

  it("answers the connection test with a 504 when STS stops sending its answer", async () => {
    const started = Date.now();
    const tested = await h.call<{ reason?: string; detail?: string }>(
      "POST",
      `/v1/aws-connections/${connectionId}/test`,
      { token: h.adminToken },
    );
    expect(tested.status).toBe(504);
    expect(tested.body).toMatchObject({ reason: "timeout" });
    expect(tested.body.detail).toContain(`${IDLE_MS} ms`);
    expect(Date.now() - started).toBeLessThan(IDLE_MS + 2_000);
  });
});
