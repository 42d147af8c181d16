// The `sandboxes` and `running-sandboxes` object limits on the service's HTTP API, with real local
// sandboxes (`sleep infinity`, the default command) and a real database: a start past the
// organization's limit, a burst of starts at the edge, a create past the project's limit, and a
// restart of the service with sandboxes running at the limit.
import type { Sandbox } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { MemoryBus } from "@agentplane/events";
import { ConfigError, generateInternalKeys, ServiceClient, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSandboxService, type SandboxService } from "../src/app.ts";
import { configFromEnv } from "../src/config.ts";
import { LocalDriver } from "../src/driver/local/local-driver.ts";
import { requireBwrap, tempDataDir } from "./helpers.ts";

const bwrap = requireBwrap();
const targets = await databaseTargets();
const LIMITS = "running-sandboxes=2,sandboxes=2";

type Json = Record<string, unknown>;
/** An answer that was not a 2xx, as the service sent it. */
class Refused extends Error {
  readonly status: number;
  readonly contentType: string;
  readonly body: Json;
  constructor(status: number, contentType: string, body: Json) {
    super(`${status} ${JSON.stringify(body)}`);
    this.status = status;
    this.contentType = contentType;
    this.body = body;
  }
}

/** The local driver, whose stop of one sandbox can be held while the test acts in between. */
class HeldStopDriver extends LocalDriver {
  hold?: { sandboxId: string; reached(): void; released: Promise<void> };
  override async stop(sandboxId: string): Promise<void> {
    const hold = this.hold;
    if (hold?.sandboxId === sandboxId) {
      this.hold = undefined;
      hold.reached();
      await hold.released;
    }
    return super.stop(sandboxId);
  }
}

interface Running {
  service: SandboxService;
  driver: HeldStopDriver;
  /** Calls the public API; a project `prj_<org>-<n>` belongs to organization `org_<org>`. */
  call<T = Sandbox>(method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

async function startService(database: Database, dataDir: string): Promise<Running> {
  const keys = await generateInternalKeys();
  const bus = new MemoryBus();
  const driver = new HeldStopDriver({ dataDir, logger: silentLogger() });
  const service = await createSandboxService({
    driver,
    database,
    bus,
    keys,
    logger: silentLogger(),
    authorizer: {
      check: async ({ projectId }) => ({ decision: "allowed", orgId: `org_${projectId?.slice(4).split("-")[0]}` }),
    },
    config: configFromEnv({ SANDBOX_DATA_DIR: dataDir, OBJECT_LIMITS: LIMITS }),
  });
  const client = new ServiceClient(
    "sandbox",
    async (request) => {
      const response = await service.fetch(request);
      if (response.ok) return response;
      throw new Refused(response.status, response.headers.get("content-type") ?? "", (await response.json()) as Json);
    },
    keys,
  );
  const principal = { type: "user" as const, id: "usr_limits" };
  return {
    service,
    driver,
    call: (method, path, body) => client.request(method, path, { principal, ...(body === undefined ? {} : { body }) }),
    async close() {
      await service.close();
      await bus.close();
    },
  };
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    (answer) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(answer)}`);
    },
    (err: unknown) => {
      if (!(err instanceof Refused)) throw err;
      return err;
    },
  );

function expectLimitProblem(refused: Refused, kind: string): void {
  expect(refused.status, JSON.stringify(refused.body)).toBe(409);
  expect(refused.contentType).toMatch(/^application\/problem\+json/);
  expect(refused.body.type).toMatch(/\/limit-exceeded$/);
  expect(refused.body).toMatchObject({ kind, limit: 2, setting: "OBJECT_LIMITS" });
  expect(refused.body.detail).toContain("2");
  expect(refused.body.detail).toContain(`OBJECT_LIMITS=${kind}=<n>`);
}

describe("OBJECT_LIMITS in sandbox-svc's settings", () => {
  it.each([
    ["a zero", "running-sandboxes=0", /"running-sandboxes=0" must be <kind>=<n>/],
    ["an unknown kind", "sandbox=5", /unknown kind "sandbox" \(known: .*sandboxes, running-sandboxes\)/],
  ])("refuses %s, naming the variable", (_, value, message) => {
    let error: unknown;
    try {
      configFromEnv({ OBJECT_LIMITS: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toEqual(["OBJECT_LIMITS"]);
    expect((error as Error).message).toMatch(message);
  });

  it("reads its kinds and keeps the defaults of the others", () => {
    expect(configFromEnv({ OBJECT_LIMITS: LIMITS }).objectLimits).toMatchObject({
      sandboxes: 2,
      "running-sandboxes": 2,
      connectors: 500,
    });
    expect(configFromEnv({}).objectLimits).toMatchObject({ sandboxes: 1000, "running-sandboxes": 100 });
  });
});

describe.each(targets)("sandbox limits on $name", (target) => {
  describe.skipIf(!target.available || !bwrap.available)(`with ${LIMITS}${target.reason}${bwrap.reason}`, () => {
    let database: Database;
    let cleanup: () => Promise<void>;
    let api: Running;
    const dataDir = tempDataDir();
    beforeAll(async () => {
      ({ database, cleanup } = await target.open());
      api = await startService(database, dataDir);
    });
    afterAll(async () => {
      await api?.close();
      await cleanup?.();
    });

    const sandboxes = (p: string) => `/v1/projects/${p}/sandboxes`;
    const create = (p: string, start = false) => api.call("POST", sandboxes(p), { name: "box", start });
    const start = (box: Sandbox) => api.call("POST", `${sandboxes(box.projectId)}/${box.id}/start`);
    const stop = (box: Sandbox) => api.call("POST", `${sandboxes(box.projectId)}/${box.id}/stop`);
    const get = (box: Sandbox) => api.call("GET", `${sandboxes(box.projectId)}/${box.id}`);
    const list = async (...projects: string[]) =>
      (await Promise.all(projects.map((p) => api.call<{ items: Sandbox[] }>("GET", sandboxes(p))))).flatMap(
        (page) => page.items,
      );
    const stopAll = async (...projects: string[]) => {
      for (const box of await list(...projects)) if (box.state === "running") await stop(box);
    };

    it("runs two, refuses a third start and a started create, and starts it once one stops", async () => {
      const [a, b, c] = [await create("prj_run-1"), await create("prj_run-1"), await create("prj_run-2")];
      expect((await start(a)).state).toBe("running");
      expect((await start(b)).state).toBe("running");
      expectLimitProblem(await refusal(start(c)), "running-sandboxes");
      expect((await get(c)).state).toBe("pending");
      // A create that asks for a start past the limit still creates the sandbox, pending.
      expectLimitProblem(await refusal(create("prj_run-2", true)), "running-sandboxes");
      const inRun2 = await list("prj_run-2");
      expect(inRun2.map((box) => box.state)).toEqual(["pending", "pending"]);
      expect((await service().driver.status(inRun2[0]!.id)).phase).toBe("stopped");

      expect((await stop(a)).state).toBe("stopped");
      expect((await start(c)).state).toBe("running");
      expectLimitProblem(await refusal(start(a)), "running-sandboxes");
      expect((await list("prj_run-1", "prj_run-2")).filter((box) => box.state === "running")).toHaveLength(2);
      await stopAll("prj_run-1", "prj_run-2");
    }, 60_000);

    it("restarts a running sandbox at the limit on an update, keeping its slot from a start meanwhile", async () => {
      const [a, b, c] = [await create("prj_restart-1"), await create("prj_restart-1"), await create("prj_restart-2")];
      await start(a);
      await start(b);
      let reached!: () => void;
      let release!: () => void;
      const atStop = new Promise<void>((resolve) => {
        reached = resolve;
      });
      api.driver.hold = { sandboxId: a.id, reached, released: new Promise((resolve) => (release = resolve)) };
      const updated = api.call<Sandbox & { restarted: boolean }>("PATCH", `${sandboxes(a.projectId)}/${a.id}`, {
        env: { CHANGED: "1" },
      });
      // The update has stopped `a` on its way to starting it again: the slot stays `a`'s.
      await atStop;
      expect((await get(a)).state).toBe("stopping");
      expectLimitProblem(await refusal(start(c)), "running-sandboxes");
      release();
      expect(await updated).toMatchObject({ state: "running", restarted: true });
      expect((await get(c)).state).toBe("pending");
      expectLimitProblem(await refusal(start(c)), "running-sandboxes");
      await stopAll("prj_restart-1", "prj_restart-2");
    }, 60_000);

    it("lets a burst of starts and started creates at the edge run no more than the limit", async () => {
      const projects = ["prj_burst-1", "prj_burst-2", "prj_burst-3", "prj_burst-4", "prj_burst-5", "prj_burst-6"];
      const pending = [await create(projects[0]!), await create(projects[1]!), await create(projects[2]!)];
      const burst = await Promise.allSettled([
        ...pending.map((box) => start(box)),
        ...projects.slice(3).map((p) => create(p, true)),
      ]);
      const won = burst.filter((answer) => answer.status === "fulfilled");
      expect(won, JSON.stringify(burst)).toHaveLength(2);
      for (const lost of burst.filter((answer) => answer.status === "rejected")) {
        expectLimitProblem(lost.reason as Refused, "running-sandboxes");
      }
      const all = await list(...projects);
      // Every create made its sandbox, started or not; exactly two run, and their processes do.
      expect(all).toHaveLength(6);
      const running = all.filter((box) => box.state === "running");
      expect(running).toHaveLength(2);
      for (const box of all) {
        expect((await service().driver.status(box.id)).phase).toBe(box.state === "running" ? "running" : "stopped");
      }
      await stopAll(...projects);
    }, 60_000);

    it("refuses a third sandbox in a project, and a delete frees its slot", async () => {
      const [a] = [await create("prj_store-1"), await create("prj_store-1")];
      expectLimitProblem(await refusal(create("prj_store-1")), "sandboxes");
      // Another project of the organization holds its own.
      await create("prj_store-2");
      await api.call("DELETE", `${sandboxes(a!.projectId)}/${a!.id}`);
      const again = await create("prj_store-1");
      expect(again.state).toBe("pending");
      expectLimitProblem(await refusal(create("prj_store-1")), "sandboxes");
      expect(await list("prj_store-1")).toHaveLength(2);
    }, 60_000);

    it("brings back the sandboxes that ran at the limit before a restart of the service", async () => {
      const [a, b, c] = [await create("prj_back-1"), await create("prj_back-1"), await create("prj_back-2")];
      await start(a);
      await start(b);
      await api.close();
      api = await startService(database, dataDir);
      await vi.waitFor(
        async () => {
          for (const box of [a, b]) {
            expect((await get(box)).state).toBe("running");
            expect((await service().driver.status(box.id)).phase).toBe("running");
          }
        },
        { timeout: 20_000, interval: 100 },
      );
      expectLimitProblem(await refusal(start(c)), "running-sandboxes");
      await stopAll("prj_back-1");
      expect((await start(c)).state).toBe("running");
      await stopAll("prj_back-2");
    }, 60_000);

    const service = () => api.service;
  });
});
