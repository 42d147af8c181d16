import { randomBytes } from "node:crypto";
import { generateInternalKeys } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres, requireRedis, type TestDatabase } from "@agentplane/testkit";
import { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callApi as call, freePort, type Spawned, spawnNode, waitForHealth } from "../../../tests/e2e/processes.ts";
import { eventually } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream, USAGE } from "./upstream.ts";

const pg = await requirePostgres();
const redis = await requireRedis();
const LAUNCHER = "apps/platform/src/main.ts";
// A Redis database of its own, so no other suite's consumers take these events.
const REDIS_URL = "redis://127.0.0.1:6379/11";
const HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
const HAIKU_COST = Math.round(USAGE.input * 1 + USAGE.output * 5 + USAGE.cacheRead * 0.1 + USAGE.cacheWrite * 1.25);

describe.skipIf(!pg.available || !redis.available)(
  `distributed: two inference-proxy replicas behind two gateways on Postgres and Redis${pg.reason}${redis.reason}`,
  () => {
    let database: TestDatabase;
    let up: FakeUpstream;
    const processes: Spawned[] = [];
    const owner = `boot_${randomBytes(24).toString("hex")}`;
    const gateways: string[] = [];
    let orgId = "";
    let token = "";

    // A process that does not become healthy fails the suite with its own output.
    const healthy = (url: string) =>
      waitForHealth(url, 120_000).catch((err) => {
        throw new Error(`${(err as Error).message}\n${processes.map((p) => p.output().slice(-1500)).join("\n---\n")}`);
      });

    beforeAll(async () => {
      database = await createTestDatabase("infdist");
      up = await startFakeUpstream();
      const keys = await generateInternalKeys();
      const ports = await Promise.all(Array.from({ length: 6 }, () => freePort()));
      const [tenancyPort, auditPort, inf1, inf2, gw1, gw2] = ports as [number, number, number, number, number, number];
      const url = (p: number) => `http://127.0.0.1:${p}`;
      const shared = {
        DATABASE_URL: database.url,
        REDIS_URL,
        INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
        AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
        TENANCY_URL: url(tenancyPort),
        AUDIT_URL: url(auditPort),
        RATE_LIMIT_PER_MINUTE: "100000",
      };
      const tenancy = spawnNode(LAUNCHER, ["--target=tenancy"], {
        ...shared,
        PORT: String(tenancyPort),
        AGENTPLANE_BOOTSTRAP_TOKEN: owner,
      });
      processes.push(tenancy);
      await healthy(url(tenancyPort));
      processes.push(spawnNode(LAUNCHER, ["--target=audit"], { ...shared, PORT: String(auditPort) }));
      await healthy(url(auditPort));
      for (const port of [inf1, inf2]) {
        processes.push(
          spawnNode(LAUNCHER, ["--target=inference"], {
            ...shared,
            PORT: String(port),
            CLOUD_A_BEARER_TOKEN: CREDS.bearer,
            CLOUD_A_ENDPOINT_URL: up.url,
          }),
        );
      }
      await Promise.all([healthy(url(inf1)), healthy(url(inf2))]);
      for (const [port, inference] of [
        [gw1, inf1],
        [gw2, inf2],
      ] as const) {
        processes.push(
          spawnNode(LAUNCHER, ["--target=gateway"], {
            ...shared,
            PORT: String(port),
            INFERENCE_URL: url(inference),
          }),
        );
        gateways.push(url(port));
      }
      await Promise.all(gateways.map((g) => healthy(g)));
      const org = await call<{ id: string }>(gateways[0] as string, owner, "POST", "/v1/orgs", { name: "Dist" });
      orgId = org.body.id;
      const project = await call<{ id: string }>(gateways[0] as string, owner, "POST", `/v1/orgs/${orgId}/projects`, {
        name: "agents",
      });
      const created = await call<{ token: string }>(
        gateways[0] as string,
        owner,
        "POST",
        `/v1/orgs/${orgId}/api-tokens`,
        {
          name: "agent",
          role: "member",
          projectId: project.body.id,
        },
      );
      token = created.body.token;
    }, 300_000);
    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()));
      await up?.close();
      await database?.drop();
    });

    it("the SDK streams through either gateway and the call is priced", async () => {
      for (const gateway of gateways) {
        const client = new AnthropicBedrock({
          baseURL: `${gateway}/v1/llm/cloud-a/us-east-1`,
          awsRegion: "us-east-1",
          apiKey: token,
        });
        const text: string[] = [];
        const stream = client.messages.stream({
          model: HAIKU,
          max_tokens: 20,
          messages: [{ role: "user", content: "hi" }],
        });
        stream.on("text", (t) => text.push(t));
        await stream.finalMessage();
        expect(text.join("")).toBe("Hello from upstream");
      }
      await eventually(
        async () => {
          const costs = await call<{ total: { requests: number; costMicroUsd: number } }>(
            gateways[1] as string,
            owner,
            "GET",
            `/v1/orgs/${orgId}/usage-costs`,
          );
          return costs.body.total.requests === 2 && costs.body.total.costMicroUsd === 2 * HAIKU_COST;
        },
        "two priced calls",
        30_000,
      );
    });

    it("50 concurrent streams across both replicas overshoot a nearly spent limit by at most one estimate", async () => {
      const spent = 2 * HAIKU_COST;
      const limitMicro = spent + 16_000;
      // Calls billed to a project no call went to yet: the replicas hold no "no limit here" answer
      // to trust, so each call reserves (the in-process suite covers a limit created while one is trusted).
      const project = await call<{ id: string }>(gateways[0] as string, owner, "POST", `/v1/orgs/${orgId}/projects`, {
        name: "limited",
      });
      const limited = await call<{ token: string }>(
        gateways[0] as string,
        owner,
        "POST",
        `/v1/orgs/${orgId}/api-tokens`,
        {
          name: "limited",
          role: "member",
          projectId: project.body.id,
        },
      );
      expect(limited.status).toBe(201);
      const limit = await call<{ id: string }>(
        gateways[0] as string,
        owner,
        "POST",
        `/v1/orgs/${orgId}/spending-limits`,
        {
          amountUsd: limitMicro / 1e6,
          period: "monthly",
        },
      );
      expect(limit.status).toBe(201);
      const statuses = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const res = await fetch(
            `${gateways[i % 2]}/v1/llm/cloud-a/us-east-1/model/${encodeURIComponent(HAIKU)}/invoke-with-response-stream`,
            {
              method: "POST",
              headers: { authorization: `Bearer ${limited.body.token}`, "content-type": "application/json" },
              body: JSON.stringify({
                anthropic_version: "bedrock-2023-05-31",
                max_tokens: 1000,
                messages: [{ role: "user", content: "hi" }],
              }),
            },
          );
          await res.arrayBuffer();
          return res.status;
        }),
      );
      const ok = statuses.filter((s) => s === 200).length;
      expect(ok).toBeGreaterThan(0);
      expect(ok + statuses.filter((s) => s === 429).length).toBe(50);
      const estimate = 200 + 1000 * 5;
      await eventually(
        async () => {
          const status = await call<{ items: { limitId: string; reservedUsd: number; spentUsd: number }[] }>(
            gateways[0] as string,
            owner,
            "GET",
            `/v1/orgs/${orgId}/spending-limits/status`,
          );
          const mine = status.body.items.find((s) => s.limitId === limit.body.id);
          if (mine?.reservedUsd !== 0) return false;
          expect(Math.round(mine.spentUsd * 1e6)).toBeLessThanOrEqual(limitMicro + estimate);
          expect(Math.round(mine.spentUsd * 1e6)).toBe(spent + ok * HAIKU_COST);
          return true;
        },
        "every reservation settled",
        30_000,
      );
    });
  },
);
