import { request as httpRequest } from "node:http";
import { hostname } from "node:os";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { hostAllowed } from "../src/http/allowed-hosts.ts";
import { createRuntime } from "../src/runtime.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { fakeModelEnv, startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
}

/** A request with the Host header a browser would send for `host` (fetch picks its own). */
function send(
  url: string,
  host: string,
  options: { method?: string; path?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const target = new URL(url);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? "GET",
        path: options.path ?? "/health",
        headers: {
          host,
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            type: res.headers["content-type"],
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

const portOf = (rt: { url: string }) => new URL(rt.url).port;

describe("Host check on a loopback runtime", () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime(fake);
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  });
  afterAll(() => rt.close());

  it("refuses a rebound name with a 421 problem before any route runs", async () => {
    const created = await send(rt.url, `evil.example:${portOf(rt)}`, {
      method: "POST",
      path: "/agents/webhook-subscriptions",
      body: { name: "rebound" },
    });
    expect(created.status).toBe(421);
    expect(created.type).toBe("application/problem+json");
    const problem = JSON.parse(created.body) as { type: string; status: number; detail: string };
    expect(problem.type).toMatch(/\/misdirected-request$/);
    expect(problem.status).toBe(421);
    expect(problem.detail).toContain("AGENT_ALLOWED_HOSTS");
    // Nothing was created.
    expect((await rt.json("GET", "/agents/webhook-subscriptions/rebound")).status).toBe(404);

    const evil = `evil.example:${portOf(rt)}`;
    const paths: Array<[string, string, unknown?]> = [
      ["GET", "/health"],
      ["GET", "/"],
      ["GET", "/agents/threads"],
      ["POST", "/agents/threads", {}],
      ["POST", "/agents/webhooks/rebound", { event: "x" }],
      ["GET", "/openapi.json"],
      ["GET", "/no-such-path"],
    ];
    for (const [method, path, body] of paths) {
      expect((await send(rt.url, evil, { method, path, body })).status, `${method} ${path}`).toBe(421);
    }
    // An upgrade request is no way around it.
    const upgrade = await send(rt.url, evil, {
      path: "/agents/threads",
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      },
    });
    expect(upgrade.status).toBe(421);
  });

  it("answers the loopback names and addresses on its own port", async () => {
    const port = portOf(rt);
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LocalHost.:${port}`,
      `[::1]:${port}`,
      `app.localhost:${port}`,
    ]) {
      expect((await send(rt.url, host)).status, host).toBe(200);
    }
    const created = await send(rt.url, `localhost:${port}`, {
      method: "POST",
      path: "/agents/webhook-subscriptions",
      body: { name: "local" },
    });
    expect(created.status).toBe(201);
  });

  it("refuses loopback names for another port, and malformed hosts", async () => {
    const port = Number(portOf(rt));
    for (const host of [
      `localhost:${port + 1}`,
      "localhost",
      "127.0.0.1",
      `0.0.0.0:${port}`,
      `localhost.evil.example:${port}`,
    ]) {
      expect((await send(rt.url, host)).status, host).toBe(421);
    }
    // A Host that is no host at all does not get through either (the server refuses it first).
    expect((await send(rt.url, "a:b:c")).status).toBe(400);
  });
});

describe("Host check configuration", () => {
  it("answers AGENT_HTTP_URL's host and the names of AGENT_ALLOWED_HOSTS, and only those", async () => {
    const rt = await startTestRuntime(fake, {
      env: {
        AGENT_HTTP_URL: "https://agent.example.org",
        AGENT_ALLOWED_HOSTS: " agents.internal , *.corp.example:8443,10.0.0.7",
      },
    });
    try {
      const allowed = [
        "agent.example.org:443",
        "agents.internal",
        "agents.internal:9999",
        "a.b.corp.example:8443",
        "10.0.0.7:1234",
        `localhost:${portOf(rt)}`,
      ];
      for (const host of allowed) expect((await send(rt.url, host)).status, host).toBe(200);
      const refused = [
        "agent.example.org",
        "agent.example.org:80",
        "corp.example:8443",
        "x.corp.example:443",
        "10.0.0.8",
      ];
      for (const host of refused) expect((await send(rt.url, host)).status, host).toBe(421);
    } finally {
      await rt.close();
    }
  });

  it("accepts `*` as any host", async () => {
    const rt = await startTestRuntime(fake, { env: { AGENT_ALLOWED_HOSTS: "*" } });
    try {
      expect((await send(rt.url, "evil.example")).status).toBe(200);
    } finally {
      await rt.close();
    }
  });

  it("on every interface without a list, answers addresses, local and one-label names, and no others", async () => {
    const config = loadConfig({ ...fakeModelEnv(fake, tempHome()), AGENT_HTTP_URL: "https://agent.example.org" });
    const runtime = await createRuntime(config, { logger: pino({ level: "silent" }) });
    try {
      const { url } = await runtime.listen(0, "0.0.0.0");
      const machine = hostname().toLowerCase();
      const allowed = [
        "10.1.2.3:3003",
        "192.168.0.9",
        "[fd00::5]:8080",
        "localhost:8080",
        "app.localhost",
        // A compose or Kubernetes service, and the platform's gateway calling one.
        "agent-runtime:3003",
        "agentplane-runtime",
        "agent.example.org:8443",
        `${machine}:3003`,
      ];
      for (const host of allowed) expect((await send(url, host)).status, host).toBe(200);
      // A rebound name reaches no route, however the page is sent: reads, writes, the receiver.
      for (const host of ["evil.example", "evil.example:3003", "localhost.evil.example", "10.0.0.1.nip.io"]) {
        const answer = await send(url, host);
        expect(answer.status, host).toBe(421);
        expect(answer.type).toBe("application/problem+json");
        expect(JSON.parse(answer.body).detail).toContain("set AGENT_ALLOWED_HOSTS");
      }
      expect((await send(url, "evil.example", { path: "/agents/memory?q=x" })).status).toBe(421);
      expect((await send(url, "evil.example", { method: "POST", path: "/agents/threads" })).status).toBe(421);
      expect((await runtime.deps.database.db.selectFrom("thread").select("id").execute()).length).toBe(1);
    } finally {
      await runtime.close();
    }
  });

  it("on every interface without a list, answers the machine's own name even with dots", () => {
    const policy = {
      loopbackBind: false,
      published: undefined,
      allowList: undefined,
      machineName: "build-7.corp.example",
    };
    expect(hostAllowed(policy, "build-7.corp.example:3003", 3003)).toBe(true);
    expect(hostAllowed(policy, "build-7.corp.example.", 3003)).toBe(true);
    expect(hostAllowed(policy, "build-8.corp.example:3003", 3003)).toBe(false);
    expect(hostAllowed({ ...policy, machineName: undefined }, "build-7.corp.example", 3003)).toBe(false);
  });

  it("on every interface, checks only the list once one is set, and nothing with `*`", async () => {
    for (const [list, name, expected] of [
      ["agent-runtime", "some-service:3003", 421],
      ["agent-runtime", "agent-runtime:3003", 200],
      ["*", "evil.example", 200],
    ] as const) {
      const config = loadConfig({ ...fakeModelEnv(fake, tempHome()), AGENT_ALLOWED_HOSTS: list });
      const runtime = await createRuntime(config, { logger: pino({ level: "silent" }) });
      try {
        const { url } = await runtime.listen(0, "0.0.0.0");
        expect((await send(url, name)).status, `${list} ${name}`).toBe(expected);
      } finally {
        await runtime.close();
      }
    }
  });

  it("stops the start on an invalid entry, naming the variable", () => {
    for (const value of ["exa mple.com", "host:99999", "http://x", "a..b", "[zz]", "*"]) {
      const env = { CLOUD_A_BEARER_TOKEN: "k", AGENT_ALLOWED_HOSTS: `ok.example,${value}` };
      let error: unknown;
      try {
        loadConfig(env);
      } catch (err) {
        error = err;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe("AGENT_ALLOWED_HOSTS");
    }
    expect(loadConfig({ CLOUD_A_BEARER_TOKEN: "k", AGENT_ALLOWED_HOSTS: "" }).allowedHosts).toBeUndefined();
  });
});
