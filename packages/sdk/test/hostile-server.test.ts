// The client against servers that misbehave: one that never answers or never stops, one that
// redirects elsewhere, one that is not an installation at all. Each ends in an error naming what
// went wrong, in bounded time, with the token and the body kept to the origin asked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createAgentplaneClient,
  ProblemError,
  RedirectRefusedError,
  RequestTimeoutError,
  ResponseTooLargeError,
} from "../src/index.ts";
import { type HostileServer, sendJson, startHostileServer } from "./hostile-server.ts";

const TOKEN = "apl_tok_hostile_secret";
let main: HostileServer;
let other: HostileServer;

beforeAll(async () => {
  other = await startHostileServer((_req, res) => sendJson(res, 200, { items: [], stolen: true }));
  main = await startHostileServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const redirect = (status: number, to: string) => res.writeHead(status, { location: to }).end();
    if (path === "/hang") return; // never answers
    if (path === "/hang-body") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"items":[');
      return; // the rest never comes
    }
    if (path === "/endless" || path === "/endless-error") {
      res.writeHead(path === "/endless" ? 200 : 500, { "content-type": "application/json" });
      const chunk = `${'{"id":"x"},'.repeat(10_000)}`;
      const timer = setInterval(() => res.write(chunk), 1);
      res.on("close", () => clearInterval(timer));
      return;
    }
    if (path === "/v1/orgs") return redirect(307, `${other.url}/v1/orgs`);
    if (path === "/away") return redirect(302, `${other.url}/v1/orgs`);
    if (path === "/here") return redirect(302, "/v1/orgs/org_1");
    if (path === "/v1/orgs/org_1") return sendJson(res, 200, { id: "org_1", auth: req.headers.authorization });
    if (path === "/v1/orgs/org_html") {
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Sign in to Wi-Fi</title>");
      return;
    }
    if (path === "/v1/orgs/org_broken") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"id": "org_broken", ');
      return;
    }
    sendJson(res, 404, { title: "Not found", status: 404 });
  });
});
afterAll(async () => {
  await main.close();
  await other.close();
});

const client = (options: { timeoutMs?: number; maxResponseBytes?: number } = {}) =>
  createAgentplaneClient({ baseUrl: main.url, token: TOKEN, retry: false, ...options });

describe("a server that does not answer", () => {
  it("ends at the deadline when no answer starts", async () => {
    const started = Date.now();
    await expect(client({ timeoutMs: 300 }).raw("GET", "/hang")).rejects.toBeInstanceOf(RequestTimeoutError);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("ends at the deadline when the answer stops halfway", async () => {
    const started = Date.now();
    const error = await client({ timeoutMs: 300 })
      .raw("GET", "/hang-body")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as Error).message).toBe("no complete answer within 0.3 s");
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("includes the waits between retries in the deadline", async () => {
    const sdk = createAgentplaneClient({ baseUrl: main.url, timeoutMs: 300, retry: { baseDelayMs: 5_000 } });
    const started = Date.now();
    await expect(sdk.raw("GET", "/hang")).rejects.toBeInstanceOf(RequestTimeoutError);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe("a server that does not stop", () => {
  it("stops reading an answer past maxResponseBytes", async () => {
    const error = await client({ maxResponseBytes: 1024 * 1024 })
      .raw("GET", "/endless")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
  });

  it("reads an endless error answer only as far as a problem can be long", async () => {
    const error = await client()
      .raw("GET", "/endless-error")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).status).toBe(500);
  });
});

describe("a redirect to another origin", () => {
  it("sends neither the token nor a POST's body there", async () => {
    const before = other.seen.length;
    const error = await client()
      .request("createOrganization", { body: { name: "carries a secret" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectRefusedError);
    expect((error as Error).message).toContain(`redirecting to ${other.url}, which was not followed`);
    expect(other.seen.slice(before)).toEqual([]);
  });

  it("does not take another origin's answer to a GET as the installation's", async () => {
    const before = other.seen.length;
    await expect(client().raw("GET", "/away")).rejects.toBeInstanceOf(RedirectRefusedError);
    expect(other.seen.slice(before)).toEqual([]);
  });

  it("follows a GET's redirect within the same origin, the token with it", async () => {
    await expect(client().raw("GET", "/here")).resolves.toEqual({ id: "org_1", auth: `Bearer ${TOKEN}` });
  });
});

describe("a server that is not an installation", () => {
  it("says an operation was answered with text, not JSON", async () => {
    const error = await client()
      .request("getOrganization", { path: { orgId: "org_html" } })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `GET /v1/orgs/org_html answered text, not JSON (is ${main.url} an Agentplane installation?): "<!doctype html><title>Sign in to Wi-Fi</title>"`,
    );
  });

  it("says a JSON answer that does not parse is not valid JSON", async () => {
    const error = await client()
      .request("getOrganization", { path: { orgId: "org_broken" } })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'GET /v1/orgs/org_broken answered 200 with a body that is not valid JSON: "{\\"id\\": \\"org_broken\\","',
    );
  });
});

describe("an id that is a dot segment", () => {
  it("refuses it instead of letting the URL resolve the request onto another route", async () => {
    const before = main.seen.length;
    for (const sandboxId of ["..", "."]) {
      const error = await client()
        .request("deleteSandbox", { path: { projectId: "prj_1", sandboxId } })
        .catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/a path segment may not be \. or \.\./);
    }
    await expect(client().raw("GET", "/v1/clusters/c/proxy/api/../../../orgs")).rejects.toThrow(/may not be/);
    await expect(client().raw("GET", "/v1/clusters/c/proxy/%2e%2E/x")).rejects.toThrow(/may not be/);
    // Nothing was sent: `DELETE /v1/projects/prj_1/sandboxes/..` would have been `DELETE /v1/projects/prj_1`.
    expect(main.seen.slice(before)).toEqual([]);
    // A dot inside a segment is an ordinary character.
    await expect(client().raw("GET", "/v1/orgs/org_1.x")).rejects.toBeInstanceOf(ProblemError);
  });
});

describe("a path without its leading slash", () => {
  it("is refused instead of naming another host or port for the token", async () => {
    const before = other.seen.length;
    const { host, port } = new URL(other.url);
    // The base address has no port of its own: `:<port>/…` joined to it names another server.
    const local = createAgentplaneClient({ baseUrl: "http://localhost", token: TOKEN, retry: false });
    for (const path of [`:${port}/v1/orgs`, `@${host}/v1/orgs`, "v1/orgs"]) {
      await expect(local.raw("GET", path)).rejects.toThrow(/a path starts with \//);
    }
    expect(other.seen.slice(before)).toEqual([]);
  });
});

describe("a token a header cannot carry", () => {
  it("is refused without quoting it, and nothing is sent", async () => {
    const before = main.seen.length;
    for (const token of [`${TOKEN}\nsecond-line`, `${TOKEN} x`, `${TOKEN}\u0000`]) {
      const error = (await createAgentplaneClient({ baseUrl: main.url, token, retry: false })
        .raw("GET", "/v1/orgs/org_1")
        .catch((e: unknown) => e)) as Error;
      expect(error.message).toMatch(/the token holds a character an Authorization header cannot carry/);
      expect(`${error.message} ${String(error.cause ?? "")}`).not.toContain(TOKEN);
    }
    expect(main.seen.slice(before)).toEqual([]);
  });
});
