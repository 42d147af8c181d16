import { createHmac, hkdfSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { parseEnv, silentLogger } from "@agentplane/service-kit";
import { type FakeKubeApiServer, validateKubeObject } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubernetesSettingsSchema, kubernetesConfigFrom } from "../../src/driver/kubernetes/config.ts";
import { EgressCredentials, egressCredentialKeyFrom } from "../../src/driver/kubernetes/egress-credential.ts";
import { EgressGateway } from "../../src/driver/kubernetes/egress-gateway.ts";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { EgressProxy, type EgressVerdict } from "../../src/egress/proxy.ts";
import { collect, EGRESS_KEY, kubeDriver, NS, runtimeSpec, startFakeKube } from "./fixture.ts";

describe("per-sandbox egress credentials", () => {
  const credentials = new EgressCredentials(EGRESS_KEY);
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

  it("prove one sandbox and no other", () => {
    const mine = credentials.credential("sbx_one");
    expect(credentials.verify(basic("sbx_one", mine))).toBe("sbx_one");
    // Another sandbox's credential under my id, or mine under another id: refused.
    expect(credentials.verify(basic("sbx_one", credentials.credential("sbx_two")))).toBeUndefined();
    expect(credentials.verify(basic("sbx_two", mine))).toBeUndefined();
    // Under another key (another platform's): refused here.
    const other = new EgressCredentials(Buffer.alloc(32, "another key").toString("base64"));
    expect(credentials.verify(basic("sbx_one", other.credential("sbx_one")))).toBeUndefined();
    for (const bad of [undefined, "", "Bearer x", "Basic !!!", basic("", mine), basic("SBX_ONE", mine)]) {
      expect(credentials.verify(bad)).toBeUndefined();
    }
  });
});

describe("the egress credential key (SANDBOX_EGRESS_CREDENTIAL_KEY)", () => {
  const settings = (env: Record<string, string>) =>
    kubernetesConfigFrom(
      parseEnv(KubernetesSettingsSchema, {
        SANDBOX_K8S_EGRESS_PROXY: "agentplane/app.kubernetes.io/component=egress:3128",
        SANDBOX_K8S_EGRESS_PROXY_URL: "http://agentplane-egress.agentplane.svc:3128",
        ...env,
      }),
    );
  const master = "the-platform-master-secret-of-32b";

  it("is what sandbox-svc issues credentials with, ahead of the master secret", () => {
    const config = settings({ SANDBOX_EGRESS_CREDENTIAL_KEY: EGRESS_KEY, AGENTPLANE_SECRET_KEY: master });
    expect(config.egressCredentialKey).toBe(EGRESS_KEY);
  });

  it("is derived from AGENTPLANE_SECRET_KEY where unset: the credentials sandboxes already hold", () => {
    const config = settings({ AGENTPLANE_SECRET_KEY: master });
    expect(config.egressCredentialKey).toBe(egressCredentialKeyFrom(master));
    // The credential as issued before the key was its own: an HMAC under a key derived from the master secret.
    const derived = Buffer.from(hkdfSync("sha256", master, "agentplane", "sandbox egress proxy credential v1", 32));
    const before = createHmac("sha256", derived).update("sbx_before").digest("base64url");
    expect(new EgressCredentials(config.egressCredentialKey as string).credential("sbx_before")).toBe(before);
  });

  it("is required with an egress proxy, and a bad one is named", () => {
    expect(() => settings({})).toThrow(/SANDBOX_EGRESS_CREDENTIAL_KEY: required with SANDBOX_K8S_EGRESS_PROXY_URL/);
    for (const bad of ["short", Buffer.alloc(16).toString("base64"), "not base64!"]) {
      expect(() => settings({ SANDBOX_EGRESS_CREDENTIAL_KEY: bad })).toThrow(/SANDBOX_EGRESS_CREDENTIAL_KEY: /);
    }
  });
});

describe("kubernetes sandboxes reach the outside only through the egress proxy", () => {
  let fake: FakeKubeApiServer;
  let driver: KubernetesDriver;
  let upstream: Server;
  let gateway: EgressGateway;
  const decisions: { sandboxId: string; host: string; port: number }[] = [];
  const spec = runtimeSpec({ env: { AGENTPLANE_TOKEN: "apt_sandbox_secret_token", GREETING: "hello" } });

  beforeAll(async () => {
    upstream = createServer((req, res) => res.end(`upstream saw ${req.url}`));
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const upstreamPort = (upstream.address() as AddressInfo).port;
    // The platform's proxy, deciding with a stand-in for governance: registry.test only.
    const proxy = new EgressProxy({
      logger: silentLogger(),
      hostMap: { "registry.test": `127.0.0.1:${upstreamPort}` },
      decide: async (sandboxId, host, port): Promise<EgressVerdict> => {
        decisions.push({ sandboxId, host, port });
        return host === "registry.test" ? { allowed: true } : { allowed: false, ruleId: "deny-rest" };
      },
    });
    gateway = new EgressGateway({ proxy, credentials: new EgressCredentials(EGRESS_KEY), logger: silentLogger() });
    const { port } = await gateway.listen(0, "127.0.0.1");
    fake = await startFakeKube();
    // By name, as the chart gives it: the driver resolves it, sandboxes get the address.
    driver = kubeDriver(fake, { egressProxyUrl: `http://localhost:${port}` });
    await driver.start(spec);
  });
  afterAll(async () => {
    await driver?.close();
    await fake?.close();
    await gateway?.close();
    upstream?.close();
  });

  const secret = () => fake.store.get("/secrets", NS, `${spec.slug}-env`);
  const secretEnv = () =>
    Object.fromEntries(
      Object.entries((secret()?.data ?? {}) as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, "base64").toString(),
      ]),
    );

  it("keeps the sandbox's token and proxy credential in its Secret, not in the Pod spec", () => {
    const pod = fake.store.get("/pods", NS, spec.slug) as unknown as {
      spec: { containers: { env: { name: string; value?: string }[]; envFrom: unknown[] }[] };
    };
    const container = pod.spec.containers[0];
    expect(JSON.stringify(pod)).not.toContain("apt_sandbox_secret_token");
    expect(container?.env.map((e) => e.name)).toEqual(["HOME", "USER", "LANG"]);
    expect(container?.envFrom).toEqual([{ secretRef: { name: `${spec.slug}-env` } }]);
    expect(() => validateKubeObject(secret() as never)).not.toThrow();
    // Owned by the claim: deleting the sandbox removes it with everything else.
    const claim = fake.store.get("/persistentvolumeclaims", NS, `${spec.slug}-workspace`);
    expect(secret()?.metadata.ownerReferences?.[0]?.uid).toBe(claim?.metadata.uid);
    const env = secretEnv();
    expect(env.AGENTPLANE_TOKEN).toBe("apt_sandbox_secret_token");
    const proxy = new URL(env.HTTPS_PROXY as string);
    // Its own id and credential; the proxy by address (sandboxes have no DNS).
    expect(proxy.username).toBe(spec.id);
    expect(proxy.password).toBe(new EgressCredentials(EGRESS_KEY).credential(spec.id));
    expect(proxy.hostname).toBe("127.0.0.1");
    expect(env.HTTP_PROXY).toBe(env.HTTPS_PROXY);
    expect(env.no_proxy).toContain(spec.slug);
  });

  it("gives the main process and every exec that environment", async () => {
    const run = await collect(await driver.exec(spec.id, { argv: ["sh", "-c", 'echo "$AGENTPLANE_TOKEN $GREETING"'] }));
    expect(run.stdout).toBe("apt_sandbox_secret_token hello\n");
  });

  it("goes out through the proxy as itself, by forwarding and by CONNECT, and is refused elsewhere", async () => {
    decisions.length = 0;
    const plain = await collect(
      await driver.exec(spec.id, { argv: ["curl", "-sS", "--max-time", "10", "http://registry.test/plain"] }),
    );
    expect(plain.stdout).toBe("upstream saw /plain");
    const tunnel = await collect(
      await driver.exec(spec.id, { argv: ["curl", "-sS", "--max-time", "10", "-p", "http://registry.test/tunnel"] }),
    );
    expect(tunnel.stdout).toBe("upstream saw /tunnel");
    expect(decisions).toEqual([
      { sandboxId: spec.id, host: "registry.test", port: 80 },
      { sandboxId: spec.id, host: "registry.test", port: 80 },
    ]);
    const denied = await collect(
      await driver.exec(spec.id, {
        argv: ["curl", "-s", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", "http://elsewhere.test/"],
      }),
    );
    expect(denied.stdout).toBe("403");
  });

  it("refuses a connection that does not prove its sandbox with 407", async () => {
    const env = secretEnv();
    const proxy = new URL(env.HTTP_PROXY as string);
    const anonymous = `http://${proxy.host}`;
    proxy.username = "sbx_someone_else";
    const forged = proxy.toString();
    decisions.length = 0;
    for (const via of [anonymous, forged]) {
      const run = await collect(
        await driver.exec(spec.id, {
          argv: [
            "curl",
            "-s",
            "--max-time",
            "10",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-x",
            via,
            "http://registry.test/",
          ],
        }),
      );
      expect(run.stdout, via).toBe("407");
    }
    expect(decisions).toEqual([]);
  });

  it("deletes the Secret on stop and writes a new one at the next start", async () => {
    await driver.stop(spec.id);
    expect(secret()).toBeUndefined();
    await driver.start({ ...spec, env: { AGENTPLANE_TOKEN: "apt_next_token" } });
    expect(secretEnv().AGENTPLANE_TOKEN).toBe("apt_next_token");
    expect(secretEnv().GREETING).toBeUndefined();
  });
});
