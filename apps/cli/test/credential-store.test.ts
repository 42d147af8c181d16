import { readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyringStalled, keyringUnavailable, openKeyring } from "../src/keyring.ts";
import { runCli, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

// The OS keyring where one is usable, else the 0600 file. This machine runs no Secret Service, so
// what is tested is that an absent, broken or silent keyring is noticed quickly and the file used.

/** A session bus that accepts connections and never says a word (a wedged D-Bus daemon). */
function silentBus(): Promise<{ address: string; close(): void }> {
  const path = join(tmpdir(), `agentplane-silent-bus-${process.pid}-${Date.now()}`);
  const sockets: Socket[] = [];
  const server: Server = createServer((s) => {
    sockets.push(s);
    s.on("error", () => {});
  });
  return new Promise((resolve) =>
    server.listen(path, () =>
      resolve({
        address: `unix:path=${path}`,
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
          rmSync(path, { force: true });
        },
      }),
    ),
  );
}

describe("choosing where credentials go", () => {
  it("does not even try a keyring when it is turned off or there is no session bus", async () => {
    expect(keyringUnavailable({ AGENTPLANE_KEYRING: "off", DBUS_SESSION_BUS_ADDRESS: "unix:path=/x" })).toMatch(/off/);
    expect(keyringUnavailable({}, "linux")).toMatch(/no D-Bus session bus/);
    expect(keyringUnavailable({}, "darwin")).toBeUndefined();
    expect(keyringUnavailable({ AGENTPLANE_KEYRING: "on" }, "darwin")).toBeUndefined();
  });

  it("refuses a value of AGENTPLANE_KEYRING that is neither on nor off, naming it", async () => {
    for (const value of ["false", "0", "OFF", "no"]) {
      expect(() => keyringUnavailable({ AGENTPLANE_KEYRING: value }, "darwin"), value).toThrow(
        /AGENTPLANE_KEYRING must be on or off/,
      );
    }
    await expect(openKeyring({ AGENTPLANE_KEYRING: "false" })).rejects.toThrow(/AGENTPLANE_KEYRING/);
    expect(await openKeyring({})).toEqual({ reason: "no D-Bus session bus" });
    expect(keyringStalled()).toBe(false);
  });
});

describe("auth login without a usable keyring", () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  }, 120_000);
  afterAll(async () => {
    await p?.close();
  });

  // The binding reads the bus address from the process's environment: each case is its own CLI process.
  for (const kind of ["absent", "silent"] as const) {
    it(`keeps the token in a 0600 file in a 0700 directory with a bus that is ${kind}, promptly`, async () => {
      const config = tempConfigDir();
      const bus = kind === "silent" ? await silentBus() : undefined;
      try {
        const env = {
          AGENTPLANE_CONFIG_DIR: join(config.dir, "agentplane"),
          DBUS_SESSION_BUS_ADDRESS: bus?.address ?? `unix:path=${join(config.dir, "no-such-bus")}`,
          AGENTPLANE_KEYRING_TIMEOUT_MS: "1000",
        };
        const started = Date.now();
        const login = await runCli(["auth", "login", "--url", p.url, "--with-token"], env, p.ownerToken);
        expect(login.stderr).toContain("token in the file");
        expect(login.code).toBe(0);
        // Generous: the point is seconds, not the 25 s a D-Bus call may wait.
        expect(Date.now() - started).toBeLessThan(15_000);
        const hosts = readFileSync(join(env.AGENTPLANE_CONFIG_DIR, "hosts.json"), "utf8");
        expect(hosts).toContain(p.ownerToken);
        expect(hosts).not.toContain('"secret"');
        expect(statSync(env.AGENTPLANE_CONFIG_DIR).mode & 0o777).toBe(0o700);
        expect(statSync(join(env.AGENTPLANE_CONFIG_DIR, "hosts.json")).mode & 0o777).toBe(0o600);
        expect((await runCli(["auth", "token"], env)).stdout.trim()).toBe(p.ownerToken);
        expect((await runCli(["auth", "logout"], env)).code).toBe(0);
      } finally {
        bus?.close();
        config.remove();
      }
    }, 60_000);
  }
});
