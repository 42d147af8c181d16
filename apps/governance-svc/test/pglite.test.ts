import {
  internalDecideRoute,
  internalGovernanceMetricsRoute,
  internalResolveCredentialRoute,
} from "@agentplane/contracts";
import { openDatabase } from "@agentplane/db";
import { servicePrincipal } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

// The embedded (all-in-one) storage: the same migrations and queries on PGlite. Opening PGlite
// takes long on a loaded machine, hence one suite with the main paths rather than every file twice.
describe("governance on PGlite", { timeout: 120_000 }, () => {
  let h: Harness;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const database = await openDatabase("pglite://memory");
    close = () => database.close();
    h = await startHarness(database);
  }, 300_000);
  afterAll(async () => {
    await h?.close();
    await close?.();
  });

  it("creates, versions and binds a policy, decides from it, stores and resolves a credential, audits drift", async () => {
    const projectId = await h.project("embedded");
    const policy = await json<{ id: string }>(
      await h.call("POST", `/v1/projects/${projectId}/policies`, {
        as: h.owner,
        body: {
          name: "p",
          labels: { a: "b" },
          cedar: `@id("no-rm") forbid(principal, action, resource) when { context has program && context.program == "rm" };`,
        },
      }),
    );
    const v2 = await h.call("PATCH", `/v1/projects/${projectId}/policies/${policy.id}`, {
      as: h.owner,
      body: {
        cedar: `@id("git") permit(principal, action == Action::"sandbox:exec", resource) when { context.program == "git" };`,
      },
    });
    expect((await json<{ version: number }>(v2)).version).toBe(2);
    const binding = await h.call("POST", `/v1/projects/${projectId}/policy-bindings`, {
      as: h.owner,
      body: { policyId: policy.id, version: 1, target: { kind: "sandbox", selector: "team in (ml, ops)" } },
    });
    expect(binding.status).toBe(201);
    const decide = (labels: Record<string, string>) =>
      h.internal(internalDecideRoute.path, {
        principal: { type: "user", id: "usr_x" },
        action: "sandbox:exec",
        resource: { type: "Sandbox", id: "sbx_1", orgId: h.orgId, projectId, kind: "sandbox", labels },
        context: { argv: ["rm", "-r", "x"] },
      });
    expect((await json<{ decision: string }>(await decide({ team: "ml" }))).decision).toBe("deny");
    expect((await json<{ decision: string }>(await decide({ team: "web" }))).decision).toBe("allow");

    const hdr = await h.call("POST", `/v1/projects/${projectId}/credentials`, {
      as: h.owner,
      body: { name: "hdr-cred", kind: "http-header", headerName: "x-api-key", value: "v-secret" },
    });
    const hdrCred = await json<{ id: string; metadata: Record<string, string> }>(hdr);
    expect(hdrCred.metadata).toEqual({ headerName: "x-api-key" });
    const hdrFields = await h.call("POST", internalResolveCredentialRoute.path, {
      as: servicePrincipal("connections"),
      body: { credentialId: hdrCred.id, projectId },
    });
    expect((await json<{ fields: Record<string, string> }>(hdrFields)).fields).toMatchObject({
      name: "x-api-key",
      value: "v-secret",
    });
    const header = await h.call("POST", `/v1/projects/${projectId}/credentials`, {
      as: h.owner,
      body: { name: "key-cred", kind: "cloud-b-key", resourceName: "acct", key: "k-secret" },
    });
    const created = await json<{ id: string; metadata: Record<string, string> }>(header);
    expect(created.metadata).toEqual({ resourceName: "acct" });
    const resolved = await h.call("POST", internalResolveCredentialRoute.path, {
      as: servicePrincipal("inference"),
      body: { credentialId: created.id, projectId },
    });
    expect((await json<{ fields: Record<string, string> }>(resolved)).fields.key).toBe("k-secret");

    const drift = await json<{ items: { reason: string }[] }>(
      await h.call("GET", `/v1/orgs/${h.orgId}/policy-bindings/drift?refresh=true`, { as: h.owner }),
    );
    expect(drift.items.map((e) => e.reason)).toEqual(["pinned-version"]);
    const metrics = await h.call("GET", internalGovernanceMetricsRoute.path, { as: servicePrincipal("ops") });
    expect(await json(metrics)).toMatchObject({ decisions: { allow: 1, deny: 1 }, credentialResolutions: 2 });
  });
});
