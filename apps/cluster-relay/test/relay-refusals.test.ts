import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectionsPlatform,
  startConnectionsPlatform,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { waitForClusterStatus } from "./fixtures/cluster-status.ts";
import { type KubeStandIn, kubeconfigFor, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const pg = await requirePostgres();
const RELAY_MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const SKEWED_CLOCK = fileURLToPath(new URL("./fixtures/skewed-clock.mjs", import.meta.url));

/**
 * A relay that refuses the platform's requests (here: its clock two minutes ahead, so every
 * signature looks expired to it). The caller's token was good: what it hears is that the relay
 * refused, as a 502 problem naming why, not a 401 that says its own credentials were bad.
 */
describe.skipIf(!pg.available)(`a relay that refuses the platform's requests${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let kube: KubeStandIn;
  let relay: ChildProcess;
  let output = "";
  let dir: string;
  let clusterId: string;

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    kube = await startKubeStandIn();
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "skewed" },
    });
    clusterId = created.body.id;
    dir = mkdtempSync(join(tmpdir(), "relay-skewed-"));
    writeFileSync(join(dir, "token"), created.body.tunnelToken, { mode: 0o600 });
    writeFileSync(join(dir, "kubeconfig"), kubeconfigFor(kube));
    relay = spawn(process.execPath, ["--import", SKEWED_CLOCK, RELAY_MAIN], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        AGENTPLANE_URL: h.url,
        CLUSTER_ID: clusterId,
        TUNNEL_TOKEN_FILE: join(dir, "token"),
        KUBECONFIG: join(dir, "kubeconfig"),
        HEARTBEAT_MS: "1000",
        CLOCK_SKEW_MS: String(120_000),
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    relay.stdout?.on("data", (d) => {
      output += d;
    });
    relay.stderr?.on("data", (d) => {
      output += d;
    });
    await waitForClusterStatus(h, clusterId, "connected", { output: () => output });
  });
  afterAll(async () => {
    if (relay && relay.exitCode === null) {
      const exited = new Promise((r) => relay.once("exit", r));
      relay.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (relay.exitCode === null) relay.kill("SIGKILL");
    }
    await kube?.close();
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers a 502 problem naming the relay's reason, and the API server is never asked", async () => {
    const before = kube.requests.length;
    // The relay learns its project first; until then it holds requests rather than refuse them.
    const res = await waitFor(async () => {
      const r = await h.call<{ type: string; detail: string }>(
        "GET",
        `/v1/clusters/${clusterId}/proxy/api/v1/namespaces`,
        {
          token: h.memberToken,
        },
      );
      return r.status === 200 ? undefined : r;
    });
    expect(res.status, JSON.stringify(res.body)).toBe(502);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.type).toMatch(/bad-gateway$/);
    expect(res.body.detail).toMatch(/refused the request/);
    expect(res.body.detail).toMatch(/"exp" claim/);
    expect(kube.requests.slice(before).filter((r) => r.path.startsWith("/api/v1/namespaces"))).toEqual([]);
  });
});
