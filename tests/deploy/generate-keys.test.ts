import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { importInternalKeys, signIdentity, verifyIdentity } from "@agentplane/service-kit";
import { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHART } from "./helm.ts";

const run = promisify(execFile);

describe("the chart's key generation hook (files/generate-keys.mjs) against the API server", () => {
  let fake: FakeKubeApiServer;
  let saDir: string;
  beforeAll(async () => {
    fake = await FakeKubeApiServer.start({ token: "hook-token", namespaces: ["agentplane"] });
    // What the kubelet mounts for the Job's service account.
    saDir = mkdtempSync(join(tmpdir(), "sa-"));
    writeFileSync(join(saDir, "token"), "hook-token\n");
    writeFileSync(join(saDir, "namespace"), "agentplane");
  });
  afterAll(async () => {
    await fake?.close();
    rmSync(saDir, { recursive: true, force: true });
  });

  const hook = () =>
    run(process.execPath, [join(CHART, "files/generate-keys.mjs")], {
      env: {
        PATH: process.env.PATH,
        KUBERNETES_API: fake.url,
        SERVICE_ACCOUNT_DIR: saDir,
        SECRET_NAME: "agentplane-keys",
      },
    });

  it("creates usable keys once and keeps them on every later run", async () => {
    expect((await hook()).stdout).toBe("secret agentplane/agentplane-keys created\n");
    const secret = fake.store.get("/secrets", "agentplane", "agentplane-keys") as unknown as {
      data: Record<string, string>;
    };
    const value = (key: string) => Buffer.from(secret.data[key] as string, "base64").toString("utf8");
    const keys = await importInternalKeys({ privateJwk: value("INTERNAL_IDENTITY_PRIVATE_KEY") });
    const token = await signIdentity(keys, { type: "user", id: "usr_1" }, { audience: "tenancy" });
    expect((await verifyIdentity(keys, token, "tenancy")).principal.id).toBe("usr_1");
    expect(Buffer.from(value("AGENTPLANE_SECRET_KEY"), "base64")).toHaveLength(32);

    expect((await hook()).stdout).toBe("secret agentplane/agentplane-keys exists; keys kept\n");
    expect(fake.store.get("/secrets", "agentplane", "agentplane-keys")).toEqual(secret);
  });

  it("fails, naming the refusal, without the permission to create Secrets", async () => {
    fake.denials.push({ verb: "get", resource: "secrets" });
    try {
      await expect(hook()).rejects.toThrow(
        /reading secret agentplane-keys: HTTP 403 .*cannot get resource \\"secrets\\"/,
      );
    } finally {
      fake.denials.length = 0;
    }
  });
});
