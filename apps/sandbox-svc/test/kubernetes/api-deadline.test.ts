// An API server that takes connections and stops answering (overloaded, or a network path that
// drops packets without a reset) must not hold a stop, a start or a workspace removal forever: each
// call of the driver's is given up at a deadline that the error names.
import { type AddressInfo, createServer, type Server, Socket } from "node:net";
import { ProblemError } from "@agentplane/problem-details";
import { silentLogger } from "@agentplane/service-kit";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubernetesConfigFrom } from "../../src/driver/kubernetes/config.ts";
import { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { NS, runtimeSpec, startFakeKube } from "./fixture.ts";

/** A TCP relay to the fake API server that, once frozen, passes nothing more either way. */
class FreezingProxy {
  frozen = false;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private readonly target: number;
  constructor(target: number) {
    this.target = target;
    this.server = createServer((client) => {
      this.sockets.add(client);
      client.on("error", () => {});
      if (this.frozen) return;
      const upstream = new Socket();
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      this.sockets.add(upstream);
      upstream.connect(this.target, "127.0.0.1");
      client.on("data", (chunk: Buffer) => {
        if (!this.frozen) upstream.write(chunk);
      });
      upstream.on("data", (chunk: Buffer) => {
        if (!this.frozen) client.write(chunk);
      });
    });
  }
  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return (this.server.address() as AddressInfo).port;
  }
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe("kubernetes driver: an API server that stops answering", () => {
  let fake: FakeKubeApiServer;
  let proxy: FreezingProxy;
  let driver: KubernetesDriver;
  beforeAll(async () => {
    fake = await startFakeKube();
    proxy = new FreezingProxy(Number(new URL(fake.url).port));
    const port = await proxy.listen();
    const kc = new KubeConfig();
    kc.loadFromString(fake.kubeconfig(NS).replace(fake.url, `http://127.0.0.1:${port}`));
    driver = new KubernetesDriver({
      kubeConfig: kc,
      logger: silentLogger(),
      placement: kubernetesConfigFrom({}).placement,
      startTimeoutMs: 10_000,
      apiTimeoutMs: 1000,
    });
  });
  afterAll(async () => {
    await driver?.close();
    await proxy?.close();
    await fake?.close();
  });

  const spec = runtimeSpec({ command: ["sleep", "60"] });
  const problemOf = (err: unknown) => ({ status: (err as ProblemError).status, detail: (err as ProblemError).detail });

  it("answers an exec or a port the API server refuses with a 502 problem naming the refusal", async () => {
    await driver.start(spec);
    fake.denials.push({ verb: "create", resource: "pods/exec" }, { verb: "create", resource: "pods/portforward" });
    try {
      for (const call of [() => driver.exec(spec.id, { argv: ["true"] }), () => driver.portForward(spec.id, 8080)]) {
        const err = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ProblemError);
        expect(problemOf(err)).toMatchObject({
          status: 502,
          detail: expect.stringMatching(/Kubernetes API server.*403/),
        });
      }
    } finally {
      fake.denials.length = 0;
    }
  });

  it("gives up a stop, a start, a removal, an exec and a port at the deadline, naming it", async () => {
    proxy.frozen = true;
    const outcome = async (call: Promise<unknown>) => {
      const began = Date.now();
      const err = await call.then(
        () => undefined,
        (e: Error) => e,
      );
      const detail = err instanceof ProblemError ? err.detail : undefined;
      return { message: detail ?? err?.message, ms: Date.now() - began, problem: (err as ProblemError)?.status };
    };
    // Each raced against a bound well past the deadline: without one, the call never settles.
    const never = new Promise<{ message: string; ms: number; problem?: number }>((resolve) =>
      setTimeout(() => resolve({ message: "still waiting", ms: 8000 }), 8000),
    );
    // Exec and port-forward first: the Pod is still there for them.
    for (const call of [
      () => driver.exec(spec.id, { argv: ["true"] }),
      () => driver.portForward(spec.id, 8080),
      // Not in this replica's view yet: the API server is asked, and its silence is no "not running".
      () => driver.exec("sbx_elsewhere", { argv: ["true"] }),
    ]) {
      const { message, ms, problem } = await Promise.race([outcome(call()), never]);
      expect(message).toMatch(/Kubernetes API server.*did not answer within 1 s/);
      expect(problem).toBe(504);
      expect(ms).toBeLessThan(4000);
    }
    for (const call of [
      () => driver.stop(spec.id),
      () => driver.start(runtimeSpec({ command: ["sleep", "60"] })),
      () => driver.removeWorkspace(spec.id),
    ]) {
      const { message, ms } = await Promise.race([outcome(call()), never]);
      expect(message).toMatch(/Kubernetes API server: .*did not answer within 1 s/);
      expect(ms).toBeLessThan(4000);
    }
  }, 40_000);
});
