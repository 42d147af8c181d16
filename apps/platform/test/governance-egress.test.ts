import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireSandboxCurl, startUpstreams, type Upstreams } from "../../sandbox-svc/test/egress-fixture.ts";
import { eventually, type GovernedPlatform, startGovernedPlatform } from "./governance-harness.ts";
import { requireBwrap } from "./sandbox-harness.ts";

const bwrap = requireBwrap();
const curl = requireSandboxCurl();

/** The README's example: agents run only git and npm and reach only the registry (a local stand-in). */
const AGENT_POLICY = `
@id("agents-run-git-npm")
permit(principal, action == Action::"sandbox:exec", resource)
when { ["git", "npm"].contains(context.program) };

@id("agents-reach-registry")
permit(principal, action == Action::"sandbox:egress", resource)
when { context.host == "registry.test" };
`;

/** Repeats of one refusal within this window share one audit record (60 s outside tests). */
const REFUSAL_WINDOW_MS = 15_000;

interface AuditItem {
  action: string;
  outcome: string;
  targetId?: string;
  details?: Record<string, unknown>;
}

describe.skipIf(!bwrap.available || !curl.available)(
  `sandbox egress through the platform's proxy, governed end to end${bwrap.reason}${curl.reason}`,
  () => {
    let h: GovernedPlatform;
    let upstreams: Upstreams;
    const seen: string[] = [];
    let box: string;

    beforeAll(async () => {
      upstreams = await startUpstreams("registry.test");
      upstreams.http.on("request", (req) => seen.push(`http ${req.headers.host}${req.url}`));
      upstreams.https.on("request", (req) => seen.push(`https ${req.headers.host}${req.url}`));
      const port = (s: typeof upstreams.http) => (s.address() as { port: number }).port;
      h = await startGovernedPlatform({
        SANDBOX_EGRESS_HOST_MAP: JSON.stringify({
          "registry.test": `127.0.0.1:${port(upstreams.http)}`,
          "registry.test:443": `127.0.0.1:${port(upstreams.https)}`,
          "elsewhere.test": `127.0.0.1:${port(upstreams.http)}`,
        }),
        SANDBOX_EGRESS_REFUSAL_WINDOW_MS: String(REFUSAL_WINDOW_MS),
      });
      const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, {
        name: "agent-box",
        start: true,
      });
      expect(created.status).toBe(201);
      box = created.body.id;
      const sandbox = h.platform.services.sandbox as unknown as { driver: { workspaceDir(id: string): string } };
      writeFileSync(join(sandbox.driver.workspaceDir(box), "ca.pem"), upstreams.certPem);
    }, 240_000);
    afterAll(async () => {
      await h?.close();
      await upstreams?.close();
    });

    const exec = (command: string | string[]) =>
      h.call<{ exitCode: number; stdout: string; stderr: string }>("POST", "/v1/shell/exec", {
        projectId: h.projectId,
        sandboxId: box,
        command,
        timeoutMs: 20_000,
      });
    const status = (stdout: string) => stdout.trim().split("\n").at(-1);

    it("no egress policy: the sandbox reaches nothing outside, and the refusal is audited", async () => {
      const r = await exec("curl -sS -w '\\n%{http_code}' http://registry.test/before");
      expect(r.status).toBe(200);
      expect(status(r.body.stdout)).toBe("403");
      expect(r.body.stdout).toContain("No policy permits egress");
      expect(seen).not.toContain("http registry.test/before");
      const records = await eventually(
        async () =>
          (await h.call<{ items: AuditItem[] }>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=sandbox.egress_denied`))
            .body.items ?? [],
        (items) => items.length > 0,
      );
      expect(records[0]).toMatchObject({
        outcome: "denied",
        targetId: box,
        details: { host: "registry.test", port: 80 },
      });
    }, 120_000);

    it("a bound policy opens the registry only, over HTTP and TLS, with git as the client; others are refused by rule", async () => {
      const policy = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policies`, {
        name: "agents",
        cedar: AGENT_POLICY,
      });
      expect(policy.status).toBe(201);
      const binding = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policy-bindings`, {
        policyId: policy.body.id,
      });
      expect(binding.status).toBe(201);

      await eventually(
        () => exec(["git", "ls-remote", "http://registry.test/agent/tools.git"]),
        () => seen.includes("http registry.test/agent/tools.git/info/refs?service=git-upload-pack"),
      );
      expect(seen).toContain("http registry.test/agent/tools.git/info/refs?service=git-upload-pack");
      await exec(["git", "-c", "http.sslCAInfo=/workspace/ca.pem", "ls-remote", "https://registry.test/agent/tls.git"]);
      expect(seen).toContain("https registry.test/agent/tls.git/info/refs?service=git-upload-pack");
      const elsewhere = await exec(["git", "ls-remote", "http://elsewhere.test/agent/tools.git"]);
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.body.stderr).toMatch(/403/);
      expect(seen.some((s) => s.startsWith("http elsewhere.test"))).toBe(false);
      // curl is not git: the exec itself is refused before any connection.
      expect((await exec(["curl", "http://registry.test/"])).status).toBe(403);

      const records = await eventually(
        async () =>
          (await h.call<{ items: AuditItem[] }>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=sandbox.egress_denied`))
            .body.items ?? [],
        (items) => items.some((i) => i.details?.host === "elsewhere.test"),
      );
      expect(records.find((i) => i.details?.host === "elsewhere.test")).toMatchObject({
        outcome: "denied",
        targetId: box,
        details: { host: "elsewhere.test", port: 80, ruleId: "agents-reach-registry" },
      });

      // Unbound: egress is closed again (no binding governs it), and any command runs.
      expect((await h.call("DELETE", `/v1/projects/${h.projectId}/policy-bindings/${binding.body.id}`)).status).toBe(
        204,
      );
      // Within 2 s (governance's propagation, and the proxy's reuse of the sandbox's answer).
      let attempt = 0;
      const after = await eventually(
        () => exec(`curl -sS -w '\\n%{http_code}' http://registry.test/after-${++attempt}`),
        (r) => r.status === 200 && status(r.body.stdout) === "403",
      );
      expect(status(after.body.stdout)).toBe("403");
      expect(seen).not.toContain(`http registry.test/after-${attempt}`);
    }, 120_000);

    it("a policy that opens every host still leaves the host's own services out, and audits the refusal", async () => {
      const policy = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policies`, {
        name: "anywhere",
        cedar: `@id("reach-anywhere")\npermit(principal, action == Action::"sandbox:egress", resource);`,
      });
      expect(policy.status).toBe(201);
      const binding = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policy-bindings`, {
        policyId: policy.body.id,
      });
      expect(binding.status).toBe(201);
      await eventually(
        () => exec("curl -sS -o /dev/null -w '%{http_code}' http://registry.test/open"),
        (r) => r.body.stdout === "200",
      );
      // The host's Postgres, by its loopback address and by a name for it.
      for (const url of ["http://127.0.0.1:5432/", "http://localhost:6379/"]) {
        const r = await exec(`curl -sS --noproxy '' -w '\\n%{http_code}' ${url}`);
        expect(status(r.body.stdout)).toBe("403");
        expect(r.body.stdout).toContain("private address");
      }
      const records = await eventually(
        async () =>
          (await h.call<{ items: AuditItem[] }>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=sandbox.egress_denied`))
            .body.items ?? [],
        (items) => items.some((i) => i.details?.host === "localhost"),
      );
      expect(records.find((i) => i.details?.host === "127.0.0.1")).toMatchObject({
        outcome: "denied",
        targetId: box,
        details: { host: "127.0.0.1", port: 5432, ruleId: null, reason: "private address" },
      });
      expect(records.find((i) => i.details?.host === "localhost")).toMatchObject({
        details: { port: 6379, reason: "private address" },
      });
    }, 120_000);

    it("a sandbox retrying a refused host is audited once per window, then once with the repeat count", async () => {
      const policy = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policies`, {
        name: "no-denied",
        cedar: `@id("no-denied")\nforbid(principal, action == Action::"sandbox:egress", resource)\nwhen { context.host like "*denied.test" };`,
      });
      expect(policy.status).toBe(201);
      const binding = await h.call("POST", `/v1/projects/${h.projectId}/policy-bindings`, {
        policyId: policy.body.id,
      });
      expect(binding.status).toBe(201);
      const other = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, {
        name: "agent-box-2",
        start: true,
      });
      expect(other.status).toBe(201);
      const run = (sandboxId: string, command: string) =>
        h.call<{ exitCode: number; stdout: string }>("POST", "/v1/shell/exec", {
          projectId: h.projectId,
          sandboxId,
          command,
          timeoutMs: 60_000,
        });
      // The forbid is in force once a probe host is refused by it.
      await eventually(
        () => run(box, "curl -sS -w '\\n%{http_code}' http://probe.denied.test/"),
        (r) => r.body.stdout.includes("no-denied"),
      );

      const started = Date.now();
      const flood = await run(
        box,
        "for i in $(seq 50); do curl -sS -o /dev/null -w '%{http_code}\\n' http://denied.test/$i; done",
      );
      // Every attempt is still answered 403.
      expect(flood.body.stdout.trim().split("\n")).toEqual(Array(50).fill("403"));
      // A different host, and the same host from a different sandbox, are recorded at once.
      expect(status((await run(box, "curl -sS -w '\\n%{http_code}' http://other.denied.test/")).body.stdout)).toBe(
        "403",
      );
      expect(status((await run(other.body.id, "curl -sS -w '\\n%{http_code}' http://denied.test/")).body.stdout)).toBe(
        "403",
      );
      const trail = async () =>
        (
          await h.call<{ items: AuditItem[] }>(
            "GET",
            `/v1/orgs/${h.orgId}/audit-trail?action=sandbox.egress_denied&limit=500`,
          )
        ).body.items ?? [];
      const of = (items: AuditItem[], sandboxId: string, host: string) =>
        items.filter((i) => i.targetId === sandboxId && i.details?.host === host);
      const now = await eventually(
        trail,
        (items) => of(items, box, "other.denied.test").length > 0 && of(items, other.body.id, "denied.test").length > 0,
      );
      expect(of(now, other.body.id, "denied.test")).toHaveLength(1);
      expect(of(now, box, "other.denied.test")).toHaveLength(1);
      // All within the window: the 50 attempts made one record, without a count yet.
      expect(Date.now() - started).toBeLessThan(REFUSAL_WINDOW_MS);
      const first = of(now, box, "denied.test");
      expect(first).toHaveLength(1);
      expect(first[0]).toMatchObject({ outcome: "denied", details: { port: 80, ruleId: "no-denied" } });
      expect(first[0]?.details?.repeats).toBeUndefined();

      // Once the window ends, one more record carries the 49 repeats.
      const later = await eventually(
        trail,
        (items) => of(items, box, "denied.test").length > 1,
        REFUSAL_WINDOW_MS + 10_000,
      );
      const records = of(later, box, "denied.test");
      expect(records).toHaveLength(2);
      expect(records.find((i) => i.details?.repeats !== undefined)).toMatchObject({
        outcome: "denied",
        details: {
          host: "denied.test",
          port: 80,
          ruleId: "no-denied",
          repeats: 49,
          windowSeconds: REFUSAL_WINDOW_MS / 1000,
        },
      });
    }, 120_000);
  },
);
