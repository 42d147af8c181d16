// The unchanged kubectl binary against the `/k8s` surface, behind a TLS terminator as in a
// deployment (kubectl sends a bearer token only over TLS): discovery, get, describe, exec with
// stdin, a terminal and exit codes, attach.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTlsTerminator, type TlsTerminator } from "@agentplane/testkit/tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  requireBwrap,
  type SandboxBody,
  type SandboxPlatform,
  startSandboxPlatform,
} from "./sandbox-harness.ts";

const KUBECTL = "/usr/bin/kubectl";
const bwrap = requireBwrap();
const kubectlAvailable = existsSync(KUBECTL);
if (!kubectlAvailable && process.env.CI === "true") throw new Error(`kubectl is required in CI (${KUBECTL})`);
const skipped = !bwrap.available ? bwrap.reason : kubectlAvailable ? "" : ` (skipped: no ${KUBECTL})`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe.skipIf(skipped !== "")(`kubectl against /k8s through TLS${skipped}`, () => {
  let h: SandboxPlatform;
  let sbx: SandboxBody;
  let tls: TlsTerminator;
  let dir: string;
  let kubeconfig: string;

  beforeAll(async () => {
    h = await startSandboxPlatform();
    sbx = await createSandbox(h, { name: "kubectl" });
    const platform = new URL(h.url);
    tls = await startTlsTerminator({ host: platform.hostname, port: Number(platform.port) });
    dir = mkdtempSync(join(tmpdir(), "kubectl-"));
    kubeconfig = join(dir, "config");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "agentplane", cluster: { server: `${tls.url}/k8s`, "insecure-skip-tls-verify": true } }],
        users: [{ name: "me", user: { token: h.adminToken } }],
        contexts: [{ name: "agentplane", context: { cluster: "agentplane", user: "me", namespace: h.projectId } }],
        "current-context": "agentplane",
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await tls?.close();
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * kubectl as a user runs it (never synchronously: the platform and the TLS terminator live in
   * this process). `pty` runs it on a terminal through util-linux `script`, for `-t`.
   */
  const kubectl = (args: string[], options: { stdin?: string; pty?: boolean } = {}): Promise<Run> =>
    new Promise((resolve) => {
      const argv = [KUBECTL, "--kubeconfig", kubeconfig, "--cache-dir", join(dir, "cache"), ...args];
      const quoted = argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
      const child = options.pty
        ? spawn("script", ["-qec", quoted, "/dev/null"], { env: { HOME: dir, PATH: process.env.PATH ?? "" } })
        : spawn(argv[0]!, argv.slice(1), { env: { HOME: dir, PATH: process.env.PATH ?? "" } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      if (options.stdin !== undefined) child.stdin.end(options.stdin);
      else if (!options.pty) child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });

  it("discovers the API (aggregated discovery first) and lists and reads the sandbox as a pod", async () => {
    const got = await kubectl(["get", "pods"]);
    expect(got.stderr).toBe("");
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(/^NAME\s+AGE\n/);
    expect(got.stdout).toContain(sbx.id);
    const byShortName = await kubectl(["get", "po", sbx.id, "-o", "json"]);
    expect(byShortName.code).toBe(0);
    expect(JSON.parse(byShortName.stdout)).toMatchObject({
      kind: "Pod",
      metadata: { name: sbx.id, namespace: h.projectId },
      status: { phase: "Running" },
    });
    const resources = await kubectl(["api-resources", "--no-headers"]);
    expect(resources.stdout).toMatch(/^pods\s+po\s+v1\s+true\s+Pod/m);
    // The aggregated form kubectl asks for first, by its media type; plain JSON otherwise.
    const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    const discovery = async (path: string, accept: string) => {
      const res = await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${h.adminToken}`, accept } });
      return { type: res.headers.get("content-type"), body: (await res.json()) as Record<string, unknown> };
    };
    const core = await discovery("/k8s/api", `${aggregated},application/json`);
    expect(core.type).toBe(aggregated);
    expect(JSON.stringify(core.body)).toContain('"resource":"pods"');
    expect((await discovery("/k8s/apis", aggregated)).body).toMatchObject({ kind: "APIGroupDiscoveryList", items: [] });
    expect((await discovery("/k8s/apis", "application/json")).body).toEqual({
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: [],
    });
  });

  it("narrows the list with -l and --field-selector, and refuses a malformed selector", async () => {
    const labelled = await createSandbox(h, { name: "labelled", labels: { team: "web", tier: "api" }, start: false });
    const names = async (...args: string[]) => {
      const got = await kubectl(["get", "pods", ...args, "-o", "jsonpath={.items[*].metadata.name}"]);
      expect(got.stderr, args.join(" ")).toBe("");
      return got.stdout.split(" ").filter(Boolean).sort();
    };
    expect(await names("-l", "team=web")).toEqual([labelled.id]);
    expect(await names("-l", "team in (web,data),!gone")).toEqual([labelled.id]);
    expect(await names("-l", "team!=web")).toEqual([sbx.id]);
    expect(await names("-l", "tier notin (api)")).toEqual([sbx.id]);
    expect(await names("--field-selector", "status.phase=Running")).toEqual([sbx.id]);
    expect(await names("--field-selector", `metadata.name=${labelled.id}`)).toEqual([labelled.id]);
    expect(await names("-l", "team=web", "--field-selector", "status.phase=Running")).toEqual([]);
    for (const args of [
      ["-l", "team==web==x"],
      ["--field-selector", "spec.nodeName=node-1"],
    ]) {
      const refused = await kubectl(["get", "pods", ...args]);
      expect(refused.code, args.join(" ")).not.toBe(0);
      expect(refused.stderr).toMatch(/BadRequest/);
    }
  });

  it("describes the pod", async () => {
    const described = await kubectl(["describe", "pod", sbx.id]);
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/^Name:\s+/m);
    expect(described.stdout).toContain(sbx.id);
    expect(described.stdout).toMatch(/^Status:\s+Running$/m);
    expect(described.stdout).toMatch(/^ {2}sandbox:$/m);
  });

  it("execs: stdout, stderr and the exit code; -i passes stdin", async () => {
    const ran = await kubectl(["exec", sbx.id, "--", "sh", "-c", "echo out; echo err >&2; exit 3"]);
    expect(ran.stdout).toBe("out\n");
    expect(ran.stderr).toContain("err\n");
    expect(ran.code).toBe(3);
    const piped = await kubectl(["exec", "-i", sbx.id, "--", "sh", "-c", "tr a-z A-Z; exit 5"], {
      stdin: "hello from stdin\n",
    });
    expect(piped.stdout).toBe("HELLO FROM STDIN\n");
    expect(piped.code).toBe(5);
  });

  it("execs -it on a terminal of the sandbox's own, with its exit code", async () => {
    const ran = await kubectl(
      ["exec", "-it", sbx.id, "--", "sh", "-c", "tty; test -t 0 && echo on-a-terminal; exit 4"],
      {
        pty: true,
      },
    );
    expect(ran.stdout).toMatch(/\/dev\/pts\/\d+/);
    expect(ran.stdout).toContain("on-a-terminal");
    expect(ran.code).toBe(4);
  });

  it("attaches: an interactive shell in the sandbox, fed from stdin", async () => {
    const attached = await kubectl(["attach", "-i", sbx.id], { stdin: "echo attached-$((20 + 22))\nexit 0\n" });
    expect(attached.stdout).toContain("attached-42");
    expect(attached.code).toBe(0);
  });
});
