import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { EgressProxy, type EgressVerdict, isPrivateAddress, parseAuthority } from "../src/egress/proxy.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { requireSandboxCurl, startUpstreams, type Upstreams } from "./egress-fixture.ts";
import { newDriver, requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();
const curl = requireSandboxCurl();

describe("egress proxy destinations", () => {
  it("parses CONNECT authorities and refuses malformed ones", () => {
    expect(parseAuthority("Registry.Test:443")).toEqual({ host: "registry.test", port: 443 });
    expect(parseAuthority("[::1]:8443")).toEqual({ host: "::1", port: 8443 });
    for (const bad of ["registry.test", "registry.test:0", "registry.test:70000", "a b:80", "x:80:90", ""]) {
      expect(parseAuthority(bad)).toBeUndefined();
    }
  });

  it("treats loopback, private, link-local and mapped addresses as private", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.169.254", "::1", "fd00::1"]) {
      expect(isPrivateAddress(a)).toBe(true);
    }
    expect(isPrivateAddress("::ffff:127.0.0.1")).toBe(true);
    // IPv4-compatible, translated, NAT64, 6to4 and Teredo forms carry an IPv4 address too.
    for (const a of ["::7f00:1", "::a9fe:a9fe", "::ffff:0:7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "2001::1"]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    expect(isPrivateAddress("100.64.0.1")).toBe(true);
    expect(isPrivateAddress("93.184.216.34")).toBe(false);
    expect(isPrivateAddress("2606:4700::1111")).toBe(false);
  });
});

describe.skipIf(!bwrap.available || !curl.available)(`egress from a bwrap sandbox${bwrap.reason}${curl.reason}`, () => {
  let upstreams: Upstreams;
  let proxy: EgressProxy;
  let driver: LocalDriver;
  let closed: LocalDriver;
  const asked: { sandboxId: string; host: string; port: number }[] = [];
  const id = "sbx_egress1";
  const isolatedId = "sbx_noegress";

  beforeAll(async () => {
    upstreams = await startUpstreams();
    proxy = new EgressProxy({
      logger: silentLogger(),
      hostMap: upstreams.hostMap,
      decide: async (sandboxId, host, port): Promise<EgressVerdict> => {
        asked.push({ sandboxId, host, port });
        return host === "other.test" ? { allowed: false, ruleId: "only-registry" } : { allowed: true };
      },
    });
    driver = newDriver({ egress: proxy });
    closed = newDriver();
    await driver.start({ id, slug: "egress-box", image: "default", env: {}, resources: {} });
    await closed.start({ id: isolatedId, slug: "closed-box", image: "default", env: {}, resources: {} });
    writeFileSync(join(driver.workspaceDir(id), "ca.pem"), upstreams.certPem);
  });
  afterAll(async () => {
    await driver?.close();
    await closed?.close();
    await proxy?.closeAll();
    await upstreams?.close();
  });

  const sh = (d: LocalDriver, sandboxId: string, command: string) =>
    runCommand(d, sandboxId, { argv: ["/bin/sh", "-c", command], timeoutMs: 15_000 });

  it("sets the proxy environment and reaches an allowed host over plain HTTP by absolute URI", async () => {
    const env = await sh(driver, id, 'echo "$HTTP_PROXY $HTTPS_PROXY $NO_PROXY"');
    expect(env.stdout.trim()).toBe("http://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1,::1,egress-box");
    const r = await sh(driver, id, "curl -sS -H 'Proxy-Authorization: Basic eDp5' http://registry.test/pkg?x=1");
    expect(r.stderr).toBe("");
    // The proxy-only header stays with the proxy; the origin sees the name the sandbox asked for.
    expect(r.stdout).toBe("http saw /pkg?x=1 host=registry.test proxyauth=-");
    expect(asked).toContainEqual({ sandboxId: id, host: "registry.test", port: 80 });
  });

  it("tunnels TLS end to end with CONNECT: the sandbox verifies the origin's certificate", async () => {
    const r = await sh(driver, id, "curl -sS --cacert /workspace/ca.pem https://secure.test/tls");
    expect(r.stdout).toBe("https saw /tls host=secure.test proxyauth=-");
    expect(asked).toContainEqual({ sandboxId: id, host: "secure.test", port: 443 });
  });

  it("refuses a destination the decision denies with a 403 naming the rule, for HTTP and CONNECT", async () => {
    const plain = await sh(driver, id, "curl -sS -w '\\n%{http_code}' http://other.test/x");
    const [body, code] = plain.stdout.trim().split("\n");
    expect(code).toBe("403");
    expect(JSON.parse(body as string)).toMatchObject({ ruleId: "only-registry", action: "sandbox:egress" });
    const tls = await sh(driver, id, "curl -sS --cacert /workspace/ca.pem https://other.test/x");
    expect(tls.exitCode).not.toBe(0);
    expect(tls.stderr).toMatch(/403/);
  });

  it("refuses names that resolve to private addresses, and has no direct route out", async () => {
    // Even with a policy that allows them, the host's own services and metadata endpoints stay out of reach.
    for (const url of ["http://127.0.0.1:5432/", "http://169.254.169.254/latest/meta-data/"]) {
      const r = await sh(driver, id, `curl -sS --noproxy '' -w '\\n%{http_code}' ${url}`);
      expect(r.stdout.trim().split("\n").at(-1)).toBe("403");
    }
    // Around the proxy: the host's server on 127.0.0.1 is not the sandbox's loopback, and nothing routes out.
    const hostLocal = upstreams.hostMap["registry.test"] as string;
    const around = await sh(driver, id, `curl -sS --noproxy '*' --max-time 5 http://${hostLocal}/`);
    expect(around.exitCode).not.toBe(0);
    expect(around.stderr).toMatch(/Couldn't connect|Failed to connect/);
    const direct = await sh(driver, id, "curl -sS --noproxy '*' --max-time 5 http://1.1.1.1/");
    expect(direct.exitCode).not.toBe(0);
    expect(direct.stderr).toMatch(/Network is unreachable|Couldn't connect|Failed to connect/);
  });

  it("a sandbox without the proxy reaches nothing", async () => {
    const env = await sh(closed, isolatedId, 'echo "[$HTTP_PROXY]"');
    expect(env.stdout.trim()).toBe("[]");
    const r = await sh(closed, isolatedId, "curl -sS --max-time 5 -x http://127.0.0.1:3128 http://registry.test/");
    expect(r.exitCode).not.toBe(0);
  });

  it("stops the proxy with the sandbox and opens a fresh one when it starts again", async () => {
    await driver.stop(id);
    await driver.start({ id, slug: "egress-box", image: "default", env: {}, resources: {} });
    const r = await sh(driver, id, "curl -sS http://registry.test/after");
    expect(r.stdout).toBe("http saw /after host=registry.test proxyauth=-");
  });

  it("leaves neither relay nor sandbox behind when the service process dies", async () => {
    const sandboxId = `sbx_orphan${process.pid}`;
    const slug = `orphan-${process.pid}`;
    const service = spawn(
      process.execPath,
      [fileURLToPath(new URL("orphan-driver.ts", import.meta.url)), sandboxId, slug],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    try {
      await new Promise((resolve, reject) => {
        service.stdout.once("data", resolve);
        service.once("exit", (code) => reject(new Error(`the service exited with ${code}`)));
      });
      // The relay (its socket is named after the sandbox) and the sandbox's own processes.
      expect(processesNaming(`${sandboxId}-`).length).toBeGreaterThan(0);
      expect(processesOfSandbox(slug).length).toBeGreaterThan(0);
      service.kill("SIGKILL");
      await vi.waitFor(
        () => {
          expect(processesNaming(`${sandboxId}-`)).toEqual([]);
          expect(processesOfSandbox(slug)).toEqual([]);
        },
        { timeout: 10_000, interval: 100 },
      );
    } finally {
      service.kill("SIGKILL");
    }
  });
});

/** Pids of the processes whose command line contains `text`. */
function processesNaming(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/**
 * Pids of the processes of the sandbox with hostname `slug`: the driver gives bwrap and everything
 * it starts `HOSTNAME=<slug>` (bwrap's own options, which name the sandbox too, are not on its
 * command line).
 */
function processesOfSandbox(slug: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`HOSTNAME=${slug}`))
        pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}
