import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import {
  type DecisionRequest,
  type DecisionResponse,
  internalDecideRoute,
  type Principal,
} from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

describe.skipIf(!target.available)(`the engine's memo of Cedar answers${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;
  let agent: Principal;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectId = await h.project("memo");
    agent = { type: "sandbox", id: "sbt_memo", orgId: h.orgId, projectId, sandboxId: "sbx_1" };
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const ask = async (sandboxId: string, argv = ["ls"]): Promise<DecisionResponse> => {
    const request: DecisionRequest = {
      principal: agent,
      action: "sandbox:exec",
      resource: { type: "Sandbox", id: sandboxId, orgId: h.orgId, projectId, kind: "sandbox" },
      context: { argv, command: argv.join(" ") },
    };
    const res = await h.internal(internalDecideRoute.path, request);
    expect(res.status).toBe(200);
    return json<DecisionResponse>(res);
  };

  it("keeps the answer for one resource from deciding for another", async () => {
    const cedar = `@id("allow-exec")
permit(principal, action == Action::"sandbox:exec", resource);
@id("not-prod")
forbid(principal, action == Action::"sandbox:exec", resource == Sandbox::"sbx_prod");`;
    const created = await h.call("POST", `/v1/projects/${projectId}/policies`, {
      as: h.owner,
      body: { name: "not-prod", cedar },
    });
    expect(created.status).toBe(201);
    const { id } = await json<{ id: string }>(created);
    const bound = await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: id },
    });
    expect(bound.status).toBe(201);
    expect((await ask("sbx_dev")).decision).toBe("allow");
    const prod = await ask("sbx_prod");
    expect(prod.decision).toBe("deny");
    expect(prod.reasons[0]?.ruleId).toBe("not-prod");
  });

  it("keeps no memory of requests with long command lines", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    // An exec's command line may be near the 1 MiB body limit, and a tenant chooses every one.
    const long = "x".repeat(400_000);
    for (let i = 0; i < 200; i++) expect((await ask("sbx_dev", ["echo", `${i}${long}`])).decision).toBe("allow");
    gc();
    // Each of these was held (command and argv: 800 KB a request), 160 MB in all.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(40_000_000);
  });
});
