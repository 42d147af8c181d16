import { ProblemError } from "@agentplane/problem-details";
import { silentLogger } from "@agentplane/service-kit";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubernetesSettingsSchema, kubernetesConfigFrom } from "../../src/driver/kubernetes/config.ts";
import { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { sandboxPod, workspaceClaim } from "../../src/driver/kubernetes/objects.ts";
import { withRestoreStep } from "../../src/driver/kubernetes/restore.ts";
import { kubeDriver, NS, runtimeSpec, startFakeKube } from "./fixture.ts";

// A sandbox's image is the tenant's choice, pulled by the node: with the node's own registry
// credentials, from any address the node reaches, or from the node's cache of images other
// workloads pulled with theirs.

function driverWith(fake: FakeKubeApiServer, registries?: string): KubernetesDriver {
  const kc = new KubeConfig();
  kc.loadFromString(fake.kubeconfig(NS));
  const settings = KubernetesSettingsSchema.parse(registries ? { SANDBOX_K8S_IMAGE_REGISTRIES: registries } : {});
  const config = kubernetesConfigFrom(settings);
  return new KubernetesDriver({ kubeConfig: kc, logger: silentLogger(), placement: config.placement });
}

describe("kubernetes driver: sandbox images", () => {
  let fake: FakeKubeApiServer;
  beforeAll(async () => {
    fake = await startFakeKube();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("pulls the image at every start, restore step included: a cached image is no way around the registry", async () => {
    const driver = kubeDriver(fake);
    try {
      const spec = runtimeSpec();
      await driver.start(spec);
      const pod = fake.store.get("/pods", NS, spec.slug) as unknown as {
        spec: { containers: { imagePullPolicy?: string }[] };
      };
      expect(pod.spec.containers[0]?.imagePullPolicy).toBe("Always");
      await driver.stop(spec.id);
    } finally {
      await driver.close();
    }
    const placement = kubernetesConfigFrom({}).placement;
    const spec = runtimeSpec();
    const claim = { ...workspaceClaim(spec, placement), metadata: { name: `${spec.slug}-workspace`, uid: "u1" } };
    const restoring = withRestoreStep(sandboxPod(spec, placement, claim), 60);
    expect(restoring.spec?.initContainers?.[0]?.imagePullPolicy).toBe("Always");
  });

  it("takes images only from the registries SANDBOX_K8S_IMAGE_REGISTRIES names", async () => {
    const driver = driverWith(fake, "docker.io, ghcr.io,registry.example.com:5000");
    try {
      for (const image of [
        "default",
        "debian:12",
        "library/debian:12",
        "docker.io/library/debian:12",
        "ghcr.io/acme/tools:1.0",
        "registry.example.com:5000/team/app@sha256:" + "a".repeat(64),
      ]) {
        expect(() => driver.validateImage(image), image).not.toThrow();
      }
      for (const image of [
        "10.0.0.5:5000/internal/app:1",
        "169.254.169.254/latest:x",
        "localhost:5000/app:1",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/private:1",
        "registry.example.com/team/app:1",
        "ghcr.io.evil.example/acme/tools:1",
      ]) {
        let thrown: unknown;
        try {
          driver.validateImage(image);
        } catch (err) {
          thrown = err;
        }
        expect(thrown, image).toBeInstanceOf(ProblemError);
        expect((thrown as ProblemError).slug).toBe("validation-failed");
        expect((thrown as ProblemError).message + JSON.stringify((thrown as ProblemError).extensions)).toMatch(
          /not a registry sandboxes may use/,
        );
      }
      // An image stored before the setting changed does not start either, and leaves nothing behind.
      const spec = runtimeSpec({ image: "10.0.0.5:5000/internal/app:1" });
      await expect(driver.start(spec)).rejects.toThrow(/not a registry sandboxes may use/);
      expect(fake.store.get("/pods", NS, spec.slug)).toBeUndefined();
      expect(fake.store.get("/persistentvolumeclaims", NS, `${spec.slug}-workspace`)).toBeUndefined();
    } finally {
      await driver.close();
    }
  });

  it("takes images from any registry when the setting is absent", async () => {
    const driver = driverWith(fake);
    try {
      expect(() => driver.validateImage("registry.example.com/team/app:1")).not.toThrow();
    } finally {
      await driver.close();
    }
  });

  it("refuses a registry list that is not one", () => {
    expect(KubernetesSettingsSchema.safeParse({ SANDBOX_K8S_IMAGE_REGISTRIES: "docker.io,https://x" }).success).toBe(
      false,
    );
    expect(KubernetesSettingsSchema.safeParse({ SANDBOX_K8S_IMAGE_REGISTRIES: "" }).success).toBe(false);
  });
});
