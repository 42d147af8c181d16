import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { SERVICE_SHUTDOWN, SHUTDOWN_CLEANUP_MS } from "@agentplane/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

// infra/compose.yaml's sandbox service runs the local sandbox driver (bubblewrap) in a container.
// No Docker engine runs here: the user and capabilities it is given are reproduced with setpriv
// (Docker's default capability set plus its cap_add) and the real driver started under them.

const REPO = resolve(import.meta.dirname, "../..");
const compose = parse(readFileSync(join(REPO, "infra/compose.yaml"), "utf8")) as {
  services: Record<
    string,
    { user?: string; cap_add?: string[]; security_opt?: string[]; command?: string[]; stop_grace_period?: string }
  >;
};
/** The image's own user (infra/Dockerfile: USER 10001). */
const IMAGE_USER = "10001:10001";
/** What Docker grants a container unless told otherwise. */
const DOCKER_DEFAULT_CAPS = [
  "chown",
  "dac_override",
  "fowner",
  "fsetid",
  "kill",
  "setgid",
  "setuid",
  "setpcap",
  "net_bind_service",
  "net_raw",
  "sys_chroot",
  "mknod",
  "audit_write",
  "setfcap",
];

// Starts a sandbox with the real driver and runs `id -u` in it (nsenter, as every exec does).
const PROBE = `
const { mkdtempSync } = await import("node:fs");
const { tmpdir } = await import("node:os");
const { join } = await import("node:path");
const { LocalDriver } = await import(process.argv[2]);
const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, child() { return quiet; } };
const driver = new LocalDriver({ dataDir: mkdtempSync(join(tmpdir(), "compose-probe-")), logger: quiet });
const result = {};
try {
  await driver.start({ id: "sbx_probe", slug: "probe", image: "default", env: {}, resources: {} });
  result.started = true;
  const proc = await driver.exec("sbx_probe", { argv: ["id", "-u"] });
  let out = "";
  let err = "";
  proc.stdout.on("data", (d) => { out += d; });
  proc.stderr.on("data", (d) => { err += d; });
  proc.stdin.end();
  const ended = (s) => new Promise((r) => { s.once("end", r); s.once("close", r); s.once("error", r); });
  const exit = await proc.exited;
  // The exit may be heard before the last of the output arrives (under load, far apart).
  await Promise.race([Promise.all([ended(proc.stdout), ended(proc.stderr)]), new Promise((r) => setTimeout(r, 5000))]);
  Object.assign(result, { exitCode: exit.exitCode, stdout: out.trim(), stderr: err.trim() });
} catch (e) {
  result.error = String(e?.message ?? e);
} finally {
  await driver.close();
}
process.stdout.write(JSON.stringify(result));
process.exit(0);
`;

const canSimulate =
  process.getuid?.() === 0 &&
  existsSync("/usr/bin/bwrap") &&
  existsSync("/usr/bin/setpriv") &&
  process.platform === "linux";
const work = mkdtempSync(join(tmpdir(), "compose-test-"));
// The probe also runs as the image's user.
chmodSync(work, 0o755);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runDriverAs(
  user: string,
  capAdd: string[],
): {
  started?: boolean;
  exitCode?: number;
  stdout?: string;
  stderr?: string;
  error?: string;
} {
  const probe = join(work, "probe.mjs");
  writeFileSync(probe, PROBE);
  const [uid = "0", gid = "0"] = user.split(":");
  const caps = [...DOCKER_DEFAULT_CAPS, ...capAdd.map((c) => c.toLowerCase())];
  const driver = pathToFileURL(join(REPO, "apps/sandbox-svc/src/driver/local/local-driver.ts")).href;
  const result = spawnSync(
    "setpriv",
    [
      `--reuid=${uid}`,
      `--regid=${gid}`,
      "--clear-groups",
      `--bounding-set=-all,${caps.map((c) => `+${c}`).join(",")}`,
      "--",
      process.execPath,
      probe,
      driver,
    ],
    { cwd: work, encoding: "utf8", timeout: 60_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
  );
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`probe failed (${result.status}): ${result.stdout}${result.stderr}`);
  }
}

describe("infra/compose.yaml's sandbox service", () => {
  const sandbox = compose.services.sandbox ?? {};

  it("lifts only what bubblewrap and nsenter need, and only for the sandbox service", () => {
    // The image's own user, with Docker's default capabilities.
    expect(sandbox.user).toBeUndefined();
    expect(sandbox.cap_add).toBeUndefined();
    expect([...(sandbox.security_opt ?? [])].sort()).toEqual([
      "apparmor=unconfined",
      "seccomp=unconfined",
      "systempaths=unconfined",
    ]);
    for (const [name, service] of Object.entries(compose.services)) {
      if (name === "sandbox") continue;
      expect([service.user, service.cap_add, service.security_opt], name).toEqual([undefined, undefined, undefined]);
    }
  });

  it.skipIf(!canSimulate)(
    "starts a sandbox and runs a command in it with the service's user and capabilities",
    { timeout: 120_000 },
    () => {
      const ok = runDriverAs(sandbox.user ?? IMAGE_USER, sandbox.cap_add ?? []);
      expect(ok).toMatchObject({ started: true, exitCode: 0, stdout: "1000" });
      // Root without SYS_ADMIN (user: "0:0" and nothing added) goes the same way as any other user.
      expect(runDriverAs("0:0", [])).toMatchObject({ started: true, exitCode: 0, stdout: "1000" });
    },
  );
});

describe("infra/compose.yaml's platform services", () => {
  it("give a stop time that covers the shutdown's delay, drain and cleanup", () => {
    const needed = (SERVICE_SHUTDOWN.delayMs + SERVICE_SHUTDOWN.drainMs + SHUTDOWN_CLEANUP_MS) / 1000;
    const platform = Object.entries(compose.services).filter(([, s]) => s.command?.[0]?.startsWith("--target="));
    expect(platform.length).toBeGreaterThan(0);
    for (const [name, service] of platform) {
      const seconds = Number(/^(\d+)s$/.exec(service.stop_grace_period ?? "")?.[1] ?? 0);
      expect(seconds, name).toBeGreaterThanOrEqual(needed);
    }
  });
});
