import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import { runCommand } from "../../src/exec/run-command.ts";
import { collect, kubeDriver, runtimeSpec, startFakeKube } from "./fixture.ts";

describe("kubernetes driver: exec and ports through the API server", () => {
  let fake: FakeKubeApiServer;
  let driver: KubernetesDriver;
  const spec = runtimeSpec();
  beforeAll(async () => {
    fake = await startFakeKube();
    driver = kubeDriver(fake);
    await driver.start(spec);
  });
  afterAll(async () => {
    await driver?.close();
    await fake?.close();
  });

  it("passes stdout, stderr and the exit code, with the sandbox's and the call's environment", async () => {
    const ok = await collect(
      await driver.exec(spec.id, {
        argv: ["sh", "-c", 'echo "$GREETING $EXTRA"; echo oops >&2'],
        env: { EXTRA: "x y" },
      }),
    );
    expect(ok).toEqual({ exitCode: 0, stdout: "hello x y\n", stderr: "oops\n" });
    const failed = await collect(await driver.exec(spec.id, { argv: ["sh", "-c", "exit 42"] }));
    expect(failed.exitCode).toBe(42);
    const missing = await collect(await driver.exec(spec.id, { argv: ["no-such-command-here"] }));
    expect(missing.exitCode).toBe(126);
  });

  it("closes stdin under v5 so the command sees EOF, and still runs under v4", async () => {
    const counted = await collect(await driver.exec(spec.id, { argv: ["sh", "-c", "wc -c; echo done"] }), "abcdef");
    expect(counted).toMatchObject({ exitCode: 0, stdout: "6\ndone\n" });
    // runCommand ends stdin at once; under v4 that must not cut the command off.
    fake.execProtocols = ["v4.channel.k8s.io"];
    try {
      const result = await runCommand(driver, spec.id, { argv: ["sh", "-c", "echo v4; exit 3"], timeoutMs: 5000 });
      expect(result).toMatchObject({ exitCode: 3, stdout: "v4\n", timedOut: false });
    } finally {
      fake.execProtocols = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
    }
  });

  it("gives a TTY that follows resizes and reports the exit status", async () => {
    const proc = await driver.exec(spec.id, { argv: ["sh"], tty: true, cols: 100, rows: 30 });
    const out: Buffer[] = [];
    proc.stdout.on("data", (c: Buffer) => out.push(c));
    const seen = async (text: string) => {
      for (let i = 0; i < 100 && !Buffer.concat(out).toString().includes(text); i++)
        await new Promise((r) => setTimeout(r, 20));
      return Buffer.concat(out).toString();
    };
    proc.stdin.write("stty size\n");
    expect(await seen("30 100")).toContain("30 100");
    proc.resize(120, 40);
    await new Promise((r) => setTimeout(r, 100));
    proc.stdin.write("stty size; exit 5\n");
    expect(await seen("40 120")).toContain("40 120");
    expect(await proc.exited).toEqual({ exitCode: 5 });
  });

  it("kills a command when asked", async () => {
    const proc = await driver.exec(spec.id, { argv: ["sleep", "30"] });
    proc.kill("SIGKILL");
    expect(await proc.exited).toEqual({ exitCode: 137, signal: "SIGKILL" });
  });

  describe("ports", () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      // Stands in for a server inside the Pod: the fake kubelet's Pods share the host's loopback.
      server = createServer((_req, res) => res.end("from the pod"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => server?.close());

    const get = async (stream: NodeJS.ReadWriteStream) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.write(`GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      await new Promise((resolve) => stream.once("end", resolve));
      return Buffer.concat(chunks).toString();
    };

    it("reaches a port through pods/portforward", async () => {
      const before = fake.requests.length;
      expect(await get(await driver.portForward(spec.id, port))).toContain("from the pod");
      expect(fake.requests.slice(before)).toEqual([
        `GET /api/v1/namespaces/agentplane-sandboxes/pods/${spec.slug}/portforward`,
      ]);
    });

    it("dials the Pod's IP from the informer when running in the cluster", async () => {
      const inCluster = kubeDriver(fake, { dialPodIP: true });
      try {
        await inCluster.start(spec);
        const before = fake.requests.length;
        expect(await get(await inCluster.portForward(spec.id, port))).toContain("from the pod");
        expect(fake.requests.slice(before)).toEqual([]);
      } finally {
        await inCluster.close();
      }
    });
  });
});
