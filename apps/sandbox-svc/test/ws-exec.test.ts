import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxDriver } from "../src/driver/types.ts";
import { newDriver, requireBwrap } from "./helpers.ts";
import { kubeDriver, startFakeKube } from "./kubernetes/fixture.ts";
import { connect, q, send, startExecServer } from "./ws-client.ts";

const bwrap = requireBwrap();
const SPEC = { id: "sbx_ws", slug: "ws", image: "default", env: {}, resources: {} };

/** The same stream through each driver: bubblewrap, and Pods behind the fake API server's pods/exec. */
const drivers = [
  {
    name: `local${bwrap.reason}`,
    skip: !bwrap.available,
    async open(): Promise<{ driver: SandboxDriver; close(): Promise<void> }> {
      const driver = newDriver();
      return { driver, close: () => driver.close() };
    },
  },
  {
    name: "kubernetes",
    skip: false,
    async open(): Promise<{ driver: SandboxDriver; close(): Promise<void> }> {
      const fake = await startFakeKube();
      const driver = kubeDriver(fake);
      return {
        driver,
        async close() {
          await driver.close();
          await fake.close();
        },
      };
    },
  },
];

describe.each(drivers)("WebSocket exec (Kubernetes protocol) on the $name driver", ({ name, skip, open }) => {
  let opened: Awaited<ReturnType<typeof open>>;
  let exec: Awaited<ReturnType<typeof startExecServer>>;
  let base: string;
  beforeAll(async () => {
    if (skip) return;
    opened = await open();
    await opened.driver.start(SPEC);
    exec = await startExecServer(opened.driver, SPEC.id);
    base = exec.url;
  });
  afterAll(async () => {
    await exec?.close();
    await opened?.close();
  });

  it.skipIf(skip)("v5: stdin to EOF by a close frame, stdout and stderr, exit status on channel 3", async () => {
    const s = await connect(`${base}${q(["sh", "-c", "cat; echo oops >&2; exit 3"])}`, "v5.channel.k8s.io");
    expect(s.ws.protocol).toBe("v5.channel.k8s.io");
    send(s.ws, 0, "hello ");
    send(s.ws, 0, "world\n");
    s.ws.send(Buffer.from([255, 0]));
    const status = await s.status;
    expect(Buffer.concat(s.out).toString()).toBe("hello world\n");
    expect(Buffer.concat(s.err).toString()).toBe("oops\n");
    expect(status).toMatchObject({
      status: "Failure",
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: "3" }] },
    });
  });

  it.skipIf(skip || !name.startsWith("local"))("a command the sandbox lacks: exit 127, a shell's message", async () => {
    const s = await connect(`${base}${q(["nosuchcmd"])}`, "v5.channel.k8s.io");
    s.ws.send(Buffer.from([255, 0]));
    expect(await s.status).toMatchObject({ details: { causes: [{ reason: "ExitCode", message: "127" }] } });
    expect(Buffer.concat(s.err).toString()).toBe("nosuchcmd: command not found\n");
  });

  it.skipIf(skip || !name.startsWith("local"))(
    "stdin a process does not read holds the client back instead of filling the service's memory",
    async () => {
      const s = await connect(`${base}${q(["sleep", "30"])}`, "v5.channel.k8s.io");
      const mib = Buffer.alloc(1024 * 1024, 0x61);
      for (let i = 0; i < 64; i++) send(s.ws, 0, mib);
      // Loopback and the pipe take a few MiB; the rest must wait on the client's side.
      let previous = -1;
      await expect
        .poll(
          () => {
            const settled = s.ws.bufferedAmount === previous;
            previous = s.ws.bufferedAmount;
            return settled;
          },
          { timeout: 10_000, interval: 500 },
        )
        .toBe(true);
      expect(s.ws.bufferedAmount).toBeGreaterThan(32 * 1024 * 1024);
      s.ws.terminate();
    },
  );

  it.skipIf(skip || !name.startsWith("local"))("stdin held back is delivered in full once read", async () => {
    const s = await connect(`${base}${q(["sh", "-c", "sleep 2; wc -c"])}`, "v5.channel.k8s.io");
    const mib = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 24; i++) send(s.ws, 0, mib);
    s.ws.send(Buffer.from([255, 0]));
    expect(await s.status).toMatchObject({ status: "Success" });
    expect(Buffer.concat(s.out).toString().trim()).toBe(String(24 * 1024 * 1024));
  });

  it.skipIf(skip)("v4: success status", async () => {
    const s = await connect(`${base}?command=echo&command=ok`, "v4.channel.k8s.io");
    expect(await s.status).toEqual({ metadata: {}, status: "Success" });
    expect(Buffer.concat(s.out).toString()).toBe("ok\n");
  });

  it.skipIf(skip)("TTY: initial size from cols/rows and resize frames seen by stty size", async () => {
    const s = await connect(
      // The second `stty size` runs once the resize is seen (or after 5 s, and then fails).
      `${base}${q(["sh", "-c", `stty size; i=0; while [ $i -lt 100 ] && [ "$(stty size)" != "43 132" ]; do sleep 0.05; i=$((i+1)); done; stty size`], "&tty=true&cols=100&rows=30")}`,
      "v5.channel.k8s.io",
    );
    await expect.poll(() => Buffer.concat(s.out).toString(), { timeout: 5000 }).toContain("30 100");
    send(s.ws, 4, JSON.stringify({ Width: 132, Height: 43 }));
    await expect.poll(() => Buffer.concat(s.out).toString(), { timeout: 5000 }).toContain("43 132");
    expect(await s.status).toMatchObject({ status: "Success" });
  });
});
