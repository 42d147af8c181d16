import { execFile } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { importInternalKeys, signIdentity, verifyIdentity } from "@agentplane/service-kit";
import { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EgressCredentialKeySchema,
  egressCredentialKeyFrom,
} from "../../apps/sandbox-svc/src/driver/kubernetes/egress-credential.ts";
import { egressPairWorks } from "./egress-pair.ts";
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

  const hook = (name = "agentplane-keys") =>
    run(process.execPath, [join(CHART, "files/generate-keys.mjs")], {
      env: {
        PATH: process.env.PATH,
        KUBERNETES_API: fake.url,
        SERVICE_ACCOUNT_DIR: saDir,
        SECRET_NAME: name,
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
    // The egress proxy's own key: random, unrelated to the master secret, as its start accepts it.
    const egressKey = value("SANDBOX_EGRESS_CREDENTIAL_KEY");
    expect(Buffer.from(egressKey, "base64")).toHaveLength(32);
    expect(egressKey).not.toBe(egressCredentialKeyFrom(value("AGENTPLANE_SECRET_KEY")));
    expect(EgressCredentialKeySchema.safeParse(egressKey).success).toBe(true);
    // Its own identity pair, not the shared key's.
    const egressPrivate = value("EGRESS_IDENTITY_PRIVATE_KEY");
    expect(await egressPairWorks(egressPrivate, value("EGRESS_IDENTITY_PUBLIC_KEY"))).toBe(true);
    expect(JSON.parse(egressPrivate).x).not.toBe(JSON.parse(value("INTERNAL_IDENTITY_PRIVATE_KEY")).x);

    expect((await hook()).stdout).toBe("secret agentplane/agentplane-keys exists; keys kept\n");
    expect(fake.store.get("/secrets", "agentplane", "agentplane-keys")).toEqual(secret);
  });

  it("adds the egress key to a Secret made before it, derived as sandbox-svc derived it, once", async () => {
    const master = randomBytes(32).toString("base64");
    const jwk = '{"kty":"OKP"}';
    fake.store.create("/secrets", "agentplane", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "older-keys", namespace: "agentplane" },
      data: {
        INTERNAL_IDENTITY_PRIVATE_KEY: Buffer.from(jwk).toString("base64"),
        AGENTPLANE_SECRET_KEY: Buffer.from(master).toString("base64"),
      },
    });
    const read = () =>
      (fake.store.get("/secrets", "agentplane", "older-keys") as unknown as { data: Record<string, string> }).data;
    const value = (key: string) => Buffer.from(read()[key] as string, "base64").toString("utf8");
    expect((await hook("older-keys")).stdout).toBe(
      "secret agentplane/older-keys exists; keys kept, SANDBOX_EGRESS_CREDENTIAL_KEY, EGRESS_IDENTITY_PRIVATE_KEY, EGRESS_IDENTITY_PUBLIC_KEY added\n",
    );
    expect(await egressPairWorks(value("EGRESS_IDENTITY_PRIVATE_KEY"), value("EGRESS_IDENTITY_PUBLIC_KEY"))).toBe(true);
    // Sandboxes started before the upgrade keep proving themselves to the proxy that now holds only this key.
    expect(value("SANDBOX_EGRESS_CREDENTIAL_KEY")).toBe(egressCredentialKeyFrom(master));
    expect(value("AGENTPLANE_SECRET_KEY")).toBe(master);
    expect(value("INTERNAL_IDENTITY_PRIVATE_KEY")).toBe(jwk);
    const after = read();
    expect((await hook("older-keys")).stdout).toBe("secret agentplane/older-keys exists; keys kept\n");
    expect(read()).toEqual(after);
  });

  it("adds the egress identity pair to a Secret made before it, keeping every key it has", async () => {
    const data = {
      INTERNAL_IDENTITY_PRIVATE_KEY: Buffer.from('{"kty":"OKP"}').toString("base64"),
      AGENTPLANE_SECRET_KEY: Buffer.from(randomBytes(32).toString("base64")).toString("base64"),
      SANDBOX_EGRESS_CREDENTIAL_KEY: Buffer.from(randomBytes(32).toString("base64")).toString("base64"),
    };
    fake.store.create("/secrets", "agentplane", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "keys-0052", namespace: "agentplane" },
      data,
    });
    const read = () =>
      (fake.store.get("/secrets", "agentplane", "keys-0052") as unknown as { data: Record<string, string> }).data;
    const value = (key: string) => Buffer.from(read()[key] as string, "base64").toString("utf8");
    expect((await hook("keys-0052")).stdout).toBe(
      "secret agentplane/keys-0052 exists; keys kept, EGRESS_IDENTITY_PRIVATE_KEY, EGRESS_IDENTITY_PUBLIC_KEY added\n",
    );
    expect(read()).toMatchObject(data);
    expect(await egressPairWorks(value("EGRESS_IDENTITY_PRIVATE_KEY"), value("EGRESS_IDENTITY_PUBLIC_KEY"))).toBe(true);
    const after = read();
    expect((await hook("keys-0052")).stdout).toBe("secret agentplane/keys-0052 exists; keys kept\n");
    expect(read()).toEqual(after);
  });

  it("completes a pair whose public half is missing from its private one, never replacing it", async () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    const privateJwk = JSON.stringify(privateKey.export({ format: "jwk" }));
    fake.store.create("/secrets", "agentplane", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "half-keys", namespace: "agentplane" },
      data: { EGRESS_IDENTITY_PRIVATE_KEY: Buffer.from(privateJwk).toString("base64") },
    });
    expect((await hook("half-keys")).stdout).toBe(
      "secret agentplane/half-keys exists; keys kept, EGRESS_IDENTITY_PUBLIC_KEY added\n",
    );
    const data = (fake.store.get("/secrets", "agentplane", "half-keys") as unknown as { data: Record<string, string> })
      .data;
    const value = (key: string) => Buffer.from(data[key] as string, "base64").toString("utf8");
    expect(value("EGRESS_IDENTITY_PRIVATE_KEY")).toBe(privateJwk);
    expect(await egressPairWorks(privateJwk, value("EGRESS_IDENTITY_PUBLIC_KEY"))).toBe(true);
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
