import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalServer, requirePostgres, startLocalServer } from "@agentplane/testkit";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectionsPlatform,
  startConnectionsPlatform,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { FileTokenStore, Relay } from "../src/index.ts";
import { type KubeStandIn, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const pg = await requirePostgres();

/** How long the platform lets a non-watch request through a tunnel take here (default 60 s). */
const PROXY_TIMEOUT_MS = 3000;

/** A kubeconfig as a user writes it: no `insecure-skip-tls-verify` for a plain-HTTP server. */
function kubeconfig(server: string, token: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server } }],
    users: [{ name: "u", user: { token } }],
    contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
    "current-context": "c",
  });
}

type Answer = { status: number; ms: number; body: { type?: string; detail?: string; items?: unknown[] } };

/**
 * The relay answers every tunnelled request, also when its API server cannot be asked, and the
 * platform bounds what the relay does not: no request through the proxy hangs.
 */
describe.skipIf(!pg.available)(`cluster proxy requests when the API server cannot be asked${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let kube: KubeStandIn;
  let silent: LocalServer;
  /** The connections the silent server holds, each with a request it never answers. */
  const unanswered = new Set<Socket>();
  let closedPort: number;
  const relays: Record<string, Relay> = {};
  const dir = mkdtempSync(join(tmpdir(), "relay-failures-"));
  const clusters: Record<string, string> = {};

  beforeAll(async () => {
    h = await startConnectionsPlatform({ env: { CLUSTER_PROXY_TIMEOUT_MS: String(PROXY_TIMEOUT_MS) } });
    kube = await startKubeStandIn();
    // Accepts, never answers.
    silent = await startLocalServer((req) => {
      unanswered.add(req.socket);
      req.socket.once("close", () => unanswered.delete(req.socket));
    });
    const closing = await startLocalServer(() => {});
    closedPort = closing.port;
    await closing.close();
    const servers: Record<string, string> = {
      http: kube.url, // plain HTTP, as `kubectl proxy` serves
      refused: `https://127.0.0.1:${closedPort}`,
      dns: "https://nowhere.invalid:6443",
      tls: kube.url.replace("http:", "https:"), // TLS spoken to a plain-HTTP server
      silent: silent.url,
    };
    await Promise.all(
      Object.entries(servers).map(async ([name, server]) => {
        const created = await h.call<{ id: string; tunnelToken: string }>(
          "POST",
          `/v1/projects/${h.projectId}/clusters`,
          { token: h.adminToken, body: { name } },
        );
        clusters[name] = created.body.id;
        const tokenFile = join(dir, name);
        writeFileSync(tokenFile, created.body.tunnelToken, { mode: 0o600 });
        const kc = new KubeConfig();
        kc.loadFromString(kubeconfig(server, kube.token));
        relays[name] = new Relay({
          baseUrl: h.url,
          clusterId: created.body.id,
          store: new FileTokenStore(tokenFile),
          kube: kc,
          logger: { info() {}, warn() {}, error() {} },
          heartbeatMs: 1000,
        });
        await relays[name].start();
      }),
    );
    await waitFor(
      async () => {
        const r = await h.call<{ items: { status: string }[] }>("GET", `/v1/projects/${h.projectId}/clusters`, {
          token: h.viewerToken,
        });
        return r.body.items.filter((c) => c.status === "connected").length === 5 ? true : undefined;
      },
      30_000,
      "five relays to connect",
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all(Object.values(relays).map((r) => r.stop()));
    rmSync(dir, { recursive: true, force: true });
    await kube?.close();
    await silent?.close();
    await h?.close();
  });

  /** A proxied GET, read to its end (a client-side bound far above what any answer may take). */
  const get = async (cluster: string, path = "/api/v1/namespaces"): Promise<Answer> => {
    const started = Date.now();
    const res = await fetch(`${h.url}/v1/clusters/${clusters[cluster]}/proxy${path}`, {
      headers: { authorization: `Bearer ${h.memberToken}` },
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, ms: Date.now() - started, body: text ? JSON.parse(text) : {} };
  };

  it("works with an http:// server in the relay's kubeconfig", async () => {
    const listed = await get("http");
    expect(listed.status).toBe(200);
    expect(listed.body.items?.length).toBeGreaterThan(0);
  });

  it.each([
    ["refused", "connection refused"],
    ["dns", "DNS"],
    ["tls", "TLS"],
  ])("an API server that cannot be asked (%s) is a 502 problem naming the cause, at once", async (name, cause) => {
    const answer = await get(name);
    expect(answer.status).toBe(502);
    expect(answer.body.type).toMatch(/bad-gateway$/);
    expect(answer.body.detail).toContain(cause);
    expect(answer.ms).toBeLessThan(PROXY_TIMEOUT_MS);
  });

  it("a request the API server never answers is a 504 problem once the proxy timeout passes", async () => {
    const answer = await get("silent");
    expect(answer.status).toBe(504);
    expect(answer.body.type).toMatch(/gateway-timeout$/);
    expect(answer.ms).toBeGreaterThanOrEqual(PROXY_TIMEOUT_MS - 100);
    expect(answer.ms).toBeLessThan(PROXY_TIMEOUT_MS + 3000);
  });

  it("a request the platform gave up is given up by the relay too: no connection to the API server stays open", async () => {
    const answers = await Promise.all([get("silent"), get("silent"), get("silent")]);
    expect(answers.map((a) => a.status)).toEqual([504, 504, 504]);
    await waitFor(
      async () => (unanswered.size === 0 ? true : undefined),
      3000,
      "the relay to close its requests the platform no longer waits for",
    );
  });

  it("a watch is not bounded by the proxy timeout", async () => {
    const controller = new AbortController();
    const res = await fetch(
      `${h.url}/v1/clusters/${clusters.http}/proxy/api/v1/namespaces/default/configmaps?watch=true`,
      {
        headers: { authorization: `Bearer ${h.memberToken}` },
        signal: controller.signal,
      },
    );
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const outcome = await Promise.race([
      reader.read().then(
        () => "ended",
        () => "failed",
      ),
      new Promise((r) => setTimeout(() => r("open"), PROXY_TIMEOUT_MS + 1000)),
    ]);
    expect(outcome).toBe("open");
    controller.abort();
  });

  it("a relay that goes away answers its pending requests with 503 at once", async () => {
    const pending = get("silent");
    await new Promise((r) => setTimeout(r, 300));
    await relays.silent!.stop();
    const answer = await pending;
    expect(answer.status).toBe(503);
    expect(answer.body.type).toMatch(/cluster-disconnected$/);
    expect(answer.ms).toBeLessThan(PROXY_TIMEOUT_MS);
  });
});
