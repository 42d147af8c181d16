// The token Secret is read at start and written at each rotation through the API server. One that
// takes the request and never answers must fail the call within the timeout (the start and the
// rotation are tried again as after any failure), not hold it for good.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET_REQUEST_TIMEOUT_MS, SecretTokenStore } from "../src/token-store.ts";
import { type KubeStandIn, loadKubeConfigFor, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const TIMEOUT_MS = 300;

describe("the token Secret behind an API server that never answers", () => {
  let hung: http.Server;
  let url: string;
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    hung = http.createServer((req) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume(); // read the request, answer nothing
    });
    hung.on("connection", (s) => {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
    });
    hung.listen(0, "127.0.0.1");
    await once(hung, "listening");
    url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => hung.close(r));
  });
  const store = () =>
    new SecretTokenStore(loadKubeConfigFor({ url, token: "t" }), "agentplane/relay-token", "token", TIMEOUT_MS);

  it("bounds every call by default", () => {
    expect(SECRET_REQUEST_TIMEOUT_MS).toBe(30_000);
  });

  it("a read fails once the timeout has passed", async () => {
    const started = Date.now();
    await expect(store().read()).rejects.toThrow();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(took).toBeLessThan(5_000);
    expect(seen).toContain("GET /api/v1/namespaces/agentplane/secrets/relay-token");
  }, 15_000);

  it("a write (a rotation) fails once the timeout has passed", async () => {
    const started = Date.now();
    await expect(store().write("apl_new")).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(seen).toContain("PATCH /api/v1/namespaces/agentplane/secrets/relay-token");
  }, 15_000);
});

describe("the token Secret behind an API server that answers", () => {
  let kube: KubeStandIn;
  beforeAll(async () => {
    kube = await startKubeStandIn();
    kube.put("secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "relay-token", namespace: "agentplane" },
      type: "Opaque",
      data: { token: Buffer.from("apl_old").toString("base64") },
    });
  });
  afterAll(async () => {
    await kube.close();
  });

  it("reads and writes as before, the merge patch included", async () => {
    const store = new SecretTokenStore(loadKubeConfigFor(kube), "agentplane/relay-token", "token", TIMEOUT_MS * 10);
    expect(await store.read()).toBe("apl_old");
    await store.write("apl_new");
    expect(await store.read()).toBe("apl_new");
    expect(kube.requests.some((r) => r.method === "PATCH")).toBe(true);
  });
});
